//! `lock.redis` through `infra.lock()` against the `redis` crate doing the same steps by hand,
//! same server, same run: acquire (the grant script: check the lease, `INCR` the fence counter,
//! `SET … PX`) then release (the compare-and-delete script, which publishes to the release
//! channel), of one lock name. The driver is reached as a module reaches it: the kernel started
//! on an `INFRA` selecting `lock.redis`, `infra.lock()` on every call, through the gate. The raw
//! side is a `ConnectionManager` with the driver's timeouts, the same Lua text, the same keys
//! (the driver's prefix written out by hand), and a token made the same size per grant.
//!
//! After criterion's measurements, a real run (`--bench`) also prints a paired comparison
//! (driver and raw timed back to back in alternating rounds; median of the per-round ratios),
//! which stays meaningful on a machine whose load drifts during the run.
//!
//! Needs `SANDLOOM_TEST_REDIS_URL` (`eval "$(scripts/test-services up)"`); without it, prints
//! how to run and exits successfully.
//! `cargo bench -p sandloom-benches --bench lock_redis -- --measurement-time 3`.

mod peers;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::Criterion;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use sandloom::{InfraConfig, Kernel, Running};
use tokio::runtime::Runtime;

use peers::{Paired, timed};

/// The lock both sides take and give back.
const NAME: &str = "bench";
const TTL: Duration = Duration::from_secs(30);

/// `lock.redis`'s grant script (crates/drivers/redis/src/lock/scripts.rs), word for word.
const GRANT: &str = r"
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  return {0, pttl}
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
end
local fence = redis.call('INCR', KEYS[2])
local value = string.format('%.0f', fence) .. ':' .. ARGV[1]
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], value)
else
  redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
end
return {1, fence}
";

/// `lock.redis`'s release script, word for word.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], '1')
return 1
";

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_REDIS_URL").ok()
}

/// Both sides on the same server, each under its own prefix.
struct Fixture {
    runtime: Runtime,
    running: Option<Running>,
    raw: Raw,
}

/// The raw client and what it needs to take and give back the lock by hand.
struct Raw {
    connection: ConnectionManager,
    grant: Script,
    release: Script,
    lease_key: String,
    fence_key: String,
    channel: String,
    issued: AtomicU64,
}

impl Raw {
    async fn acquire_release(&self) {
        let mut connection = self.connection.clone();
        // A token of the driver's size: 32 hex digits and a counter.
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let token = format!("{:016x}{:016x}{n:x}", 0x5a5a_u64, n.wrapping_mul(0x9e37));
        let ttl = TTL.as_millis().to_string();
        let (granted, fence): (u8, i64) = self
            .grant
            .key(&self.lease_key)
            .key(&self.fence_key)
            .arg(&token)
            .arg(&ttl)
            .invoke_async(&mut connection)
            .await
            .expect("the grant script");
        assert_eq!(granted, 1, "the raw side's lock is free");
        let released: u8 = self
            .release
            .key(&self.lease_key)
            .arg(format!("{fence}:{token}"))
            .arg(&self.channel)
            .invoke_async(&mut connection)
            .await
            .expect("the release script");
        assert_eq!(released, 1, "the raw side's lease is its own");
        black_box(fence);
    }
}

impl Fixture {
    fn new(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let run = std::process::id();
        let infra = format!(
            "[lock.default]\ndriver = \"redis\"\nurl = \"{url}\"\nprefix = \"sandloom-bench-lock-{run}\"\n"
        );
        let config = InfraConfig::from_toml_str(&infra, "benches/lock_redis.rs").expect("INFRA");
        let raw_prefix = format!("sandloom-bench-lock-raw-{run}:");
        let (running, connection) = runtime.block_on(async {
            let running = Kernel::new(config, sandloom::link_drivers!(sandloom_driver_redis))
                .start()
                .await
                .unwrap_or_else(|err| panic!("{err}"));
            // The driver's own timeouts (its defaults: the INFRA above sets none).
            let defaults = sandloom_driver_redis::RedisLockOptions::default();
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_millis(defaults.connect_timeout_ms)))
                .set_response_timeout(Some(Duration::from_millis(defaults.response_timeout_ms)));
            let client = redis::Client::open(url).expect("a Redis URL");
            let connection = ConnectionManager::new_with_config(client, config)
                .await
                .expect("the raw client connects");
            (running, connection)
        });
        Self {
            runtime,
            running: Some(running),
            raw: Raw {
                connection,
                grant: Script::new(GRANT),
                release: Script::new(RELEASE),
                lease_key: format!("{raw_prefix}lock:{NAME}"),
                fence_key: format!("{raw_prefix}fence:{NAME}"),
                channel: format!("{raw_prefix}released:{NAME}"),
                issued: AtomicU64::new(0),
            },
        }
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("started")
    }

    async fn driver_acquire_release(&self) {
        let lock = self.running().infra().lock().expect("lock.default");
        let lease = lock
            .acquire(NAME, TTL)
            .await
            .expect("acquire")
            .expect("the driver's lock is free");
        assert!(lock.release(&lease).await.expect("release"));
        black_box(lease.fence);
    }

    /// Delete both sides' keys (the fence counters have no expiry) and stop the kernel.
    fn clean_up(mut self) {
        let raw = &self.raw;
        let run = std::process::id();
        let driver_keys = [
            format!("sandloom-bench-lock-{run}:lock:{NAME}"),
            format!("sandloom-bench-lock-{run}:fence:{NAME}"),
        ];
        let running = self.running.take().expect("started");
        self.runtime.block_on(async {
            let mut connection = raw.connection.clone();
            let _: Result<u64, _> = redis::cmd("DEL")
                .arg(&raw.lease_key)
                .arg(&raw.fence_key)
                .arg(&driver_keys)
                .query_async(&mut connection)
                .await;
            running.shutdown().await.expect("the kernel stops");
        });
    }
}

/// The paired comparison: 40 rounds, each 200 driver runs and 200 raw runs back to back.
fn paired(fixture: &Fixture) {
    Paired::new(&fixture.runtime, 40, 200)
        .named("driver", "raw")
        .print(
            "acquire+release",
            || fixture.driver_acquire_release(),
            || fixture.raw.acquire_release(),
        );
}

fn main() {
    let Some(url) = server_url() else {
        eprintln!(
            "benches/lock_redis.rs: skipped, needs a real server: set SANDLOOM_TEST_REDIS_URL \
             (eval \"$(scripts/test-services up)\") and rerun"
        );
        return;
    };
    let fixture = Fixture::new(&url);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("lock.redis");
    group.bench_function("acquire+release/infra.lock()", |b| {
        b.iter_custom(|iters| timed(&fixture.runtime, iters, || fixture.driver_acquire_release()));
    });
    group.bench_function("acquire+release/raw", |b| {
        b.iter_custom(|iters| timed(&fixture.runtime, iters, || fixture.raw.acquire_release()));
    });
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        paired(&fixture);
    }
    fixture.clean_up();
    criterion.final_summary();
}
