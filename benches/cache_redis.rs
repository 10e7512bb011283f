//! `cache.redis` through `infra.cache()` against what a Rust user writes without Sandloom: the
//! `redis` crate behind a `deadpool-redis` pool, same server, same run. Both sides use the same
//! key layout (the driver's `{prefix}:{key}`, written out by hand on the raw side), the same
//! 64-byte value, and the driver's own timeouts.
//!
//! Rows, each for every side: `get` of a key that is there (`hit`), of one that is not
//! (`miss`), `set`, and `get` hit from 8 tasks at once on a 2-worker runtime (`concurrent8`,
//! the time per batch of 8). The pooled side checks a connection out of the pool for every
//! call, as `deadpool-redis`'s documentation does; the pool has 8 connections, so the 8 tasks
//! never wait for one. `deadpool-redis` verifies every connection it hands out with a pipelined
//! `UNWATCH` + `PING` (its `Manager::recycle`; no option turns it off), so each of its calls
//! makes two round trips. A third side is what a user who knows `redis` well writes instead: one
//! multiplexed `ConnectionManager`, cloned per call (what the driver itself uses), with the
//! driver's timeouts: the cost of the kernel's gate and nothing else.
//!
//! After criterion's measurements, a real run (`--bench`) also prints a paired comparison per
//! row (the two sides timed back to back in alternating rounds; median of the per-round
//! ratios), which stays meaningful on a machine whose load drifts during the run.
//!
//! Needs `SANDLOOM_TEST_REDIS_URL` (`eval "$(scripts/test-services up)"`); without it, prints
//! how to run and exits successfully.
//! `cargo bench -p sandloom-benches --bench cache_redis -- --measurement-time 3`.

mod peers;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use deadpool_redis::redis::AsyncCommands;
use deadpool_redis::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use sandloom::{InfraConfig, Kernel, Running};
use tokio::runtime::Runtime;

use peers::{Paired, timed};

/// The key both sides read back; the driver stores it under its prefix.
const HIT: &str = "bench-hit";
const MISS: &str = "bench-miss";
const SET: &str = "bench-set";
/// Tasks of the concurrent row, and connections of the raw side's pool.
const CONCURRENCY: usize = 8;

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_REDIS_URL").ok()
}

/// Both sides on the same server, each under its own prefix.
struct Fixture {
    runtime: Runtime,
    running: Option<Running>,
    raw: Arc<Raw>,
    value: Bytes,
}

/// The pool and the keys, as a user writes them.
struct Raw {
    pool: deadpool_redis::Pool,
    manager: ConnectionManager,
    hit: String,
    miss: String,
    set: String,
}

impl Raw {
    async fn get(&self, key: &str) -> Option<Vec<u8>> {
        let mut connection = self.pool.get().await.expect("a pooled connection");
        connection.get(key).await.expect("GET")
    }

    async fn set(&self, key: &str, value: &[u8]) {
        let mut connection = self.pool.get().await.expect("a pooled connection");
        let () = connection.set(key, value).await.expect("SET");
    }

    async fn manager_get(&self, key: &str) -> Option<Vec<u8>> {
        let mut connection = self.manager.clone();
        connection.get(key).await.expect("GET")
    }

    async fn manager_set(&self, key: &str, value: &[u8]) {
        let mut connection = self.manager.clone();
        let () = connection.set(key, value).await.expect("SET");
    }
}

impl Fixture {
    fn new(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let run = std::process::id();
        let infra = format!(
            "[cache.default]\ndriver = \"redis\"\nurl = \"{url}\"\nprefix = \"sandloom-bench-cache-{run}\"\n"
        );
        let config = InfraConfig::from_toml_str(&infra, "benches/cache_redis.rs").expect("INFRA");
        let raw_prefix = format!("sandloom-bench-cache-raw-{run}");
        let value = Bytes::from(vec![b'v'; 64]);
        let (running, pool, manager) = runtime.block_on(async {
            let running = Kernel::new(config, sandloom::link_drivers!(sandloom_driver_redis))
                .start()
                .await
                .unwrap_or_else(|err| panic!("{err}"));
            let defaults = sandloom_driver_redis::RedisCacheOptions::default();
            let mut config = deadpool_redis::Config::from_url(url);
            config.pool = Some(deadpool_redis::PoolConfig {
                max_size: CONCURRENCY,
                timeouts: deadpool_redis::Timeouts {
                    wait: None,
                    create: Some(Duration::from_millis(defaults.connect_timeout_ms)),
                    recycle: Some(Duration::from_millis(defaults.response_timeout_ms)),
                },
                ..deadpool_redis::PoolConfig::default()
            });
            let pool = config
                .create_pool(Some(deadpool_redis::Runtime::Tokio1))
                .expect("a pool");
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_millis(defaults.connect_timeout_ms)))
                .set_response_timeout(Some(Duration::from_millis(defaults.response_timeout_ms)));
            let client = deadpool_redis::redis::Client::open(url).expect("a Redis URL");
            let manager = ConnectionManager::new_with_config(client, config)
                .await
                .expect("the raw client connects");
            (running, pool, manager)
        });
        let fixture = Self {
            runtime,
            running: Some(running),
            raw: Arc::new(Raw {
                pool,
                manager,
                hit: format!("{raw_prefix}:{HIT}"),
                miss: format!("{raw_prefix}:{MISS}"),
                set: format!("{raw_prefix}:{SET}"),
            }),
            value,
        };
        // Both sides' hit key, and both pools warm (every raw connection opened once).
        fixture.runtime.block_on(async {
            let cache = fixture.running().infra().cache().expect("cache.default");
            cache.set(HIT, fixture.value.clone()).await.expect("set");
            fixture.raw.set(&fixture.raw.hit, &fixture.value).await;
            let warm: Vec<_> = (0..CONCURRENCY).map(|_| fixture.raw.pool.get()).collect();
            for connection in futures_join(warm).await {
                drop(connection.expect("a pooled connection"));
            }
        });
        fixture
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("started")
    }

    async fn driver_get(&self, key: &str) -> Option<Bytes> {
        let cache = self.running().infra().cache().expect("cache.default");
        cache.get(key).await.expect("get")
    }

    async fn driver_set(&self) {
        let cache = self.running().infra().cache().expect("cache.default");
        cache.set(SET, self.value.clone()).await.expect("set");
    }

    /// `CONCURRENCY` driver `get`s of the hit key, each in its own task.
    async fn driver_concurrent(&self) {
        let infra = Arc::clone(self.running().infra());
        concurrently(|| {
            let infra = Arc::clone(&infra);
            async move {
                let cache = infra.cache().expect("cache.default");
                assert!(cache.get(HIT).await.expect("get").is_some());
            }
        })
        .await;
    }

    /// `CONCURRENCY` pooled `GET`s of the hit key, each in its own task.
    async fn raw_concurrent(&self) {
        concurrently(|| {
            let raw = Arc::clone(&self.raw);
            async move { assert!(raw.get(&raw.hit).await.is_some()) }
        })
        .await;
    }

    /// `CONCURRENCY` `GET`s of the hit key through the shared `ConnectionManager`.
    async fn manager_concurrent(&self) {
        concurrently(|| {
            let raw = Arc::clone(&self.raw);
            async move { assert!(raw.manager_get(&raw.hit).await.is_some()) }
        })
        .await;
    }

    /// Delete both sides' keys and stop the kernel.
    fn clean_up(mut self) {
        let run = std::process::id();
        let running = self.running.take().expect("started");
        let raw = Arc::clone(&self.raw);
        self.runtime.block_on(async move {
            let mut connection = raw.pool.get().await.expect("a pooled connection");
            let driver_keys: Vec<String> = [HIT, MISS, SET]
                .iter()
                .map(|key| format!("sandloom-bench-cache-{run}:{key}"))
                .collect();
            let _: Result<u64, _> = deadpool_redis::redis::cmd("DEL")
                .arg(&raw.hit)
                .arg(&raw.miss)
                .arg(&raw.set)
                .arg(&driver_keys)
                .query_async(&mut connection)
                .await;
            running.shutdown().await.expect("the kernel stops");
        });
    }
}

/// Run `CONCURRENCY` futures made by `make`, each in its own task, and wait for all of them.
async fn concurrently<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = (0..CONCURRENCY).map(|_| tokio::spawn(make())).collect();
    for task in tasks {
        task.await.expect("a benchmark task");
    }
}

/// Await every future, in order (the pool's warm-up).
async fn futures_join<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs = Vec::with_capacity(futures.len());
    for future in futures {
        outputs.push(future.await);
    }
    outputs
}

fn main() {
    let Some(url) = server_url() else {
        eprintln!(
            "benches/cache_redis.rs: skipped, needs a real server: set SANDLOOM_TEST_REDIS_URL \
             (eval \"$(scripts/test-services up)\") and rerun"
        );
        return;
    };
    let fixture = Fixture::new(&url);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("cache.redis");
    rows(&fixture, &mut group);
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        paired(&fixture);
    }
    fixture.clean_up();
    criterion.final_summary();
}

/// Every row, for the three sides.
fn rows(f: &Fixture, group: &mut BenchmarkGroup<'_, WallTime>) {
    let raw = &*f.raw;
    let rt = &f.runtime;
    let mut row = |id: &str, run: &dyn Fn(u64) -> Duration| {
        group.bench_function(id, |b| b.iter_custom(run));
    };
    row("get hit/infra.cache()", &|n| {
        timed(rt, n, || async {
            assert!(f.driver_get(HIT).await.is_some());
        })
    });
    row("get hit/deadpool-redis", &|n| {
        timed(rt, n, || async {
            assert!(raw.get(&raw.hit).await.is_some());
        })
    });
    row("get hit/redis ConnectionManager", &|n| {
        timed(rt, n, || async {
            assert!(raw.manager_get(&raw.hit).await.is_some());
        })
    });
    row("get miss/infra.cache()", &|n| {
        timed(rt, n, || async {
            assert!(f.driver_get(MISS).await.is_none());
        })
    });
    row("get miss/deadpool-redis", &|n| {
        timed(rt, n, || async {
            assert!(raw.get(&raw.miss).await.is_none());
        })
    });
    row("get miss/redis ConnectionManager", &|n| {
        timed(rt, n, || async {
            assert!(raw.manager_get(&raw.miss).await.is_none());
        })
    });
    row("set/infra.cache()", &|n| timed(rt, n, || f.driver_set()));
    row("set/deadpool-redis", &|n| {
        timed(rt, n, || raw.set(&raw.set, &f.value))
    });
    row("set/redis ConnectionManager", &|n| {
        timed(rt, n, || raw.manager_set(&raw.set, &f.value))
    });
    row("concurrent8 get hit/infra.cache()", &|n| {
        timed(rt, n, || f.driver_concurrent())
    });
    row("concurrent8 get hit/deadpool-redis", &|n| {
        timed(rt, n, || f.raw_concurrent())
    });
    row("concurrent8 get hit/redis ConnectionManager", &|n| {
        timed(rt, n, || f.manager_concurrent())
    });
}

/// The paired comparison of every row, against each peer in turn.
fn paired(f: &Fixture) {
    let raw = &*f.raw;
    let paired = Paired::new(&f.runtime, 40, 200);
    println!("against deadpool-redis:");
    paired.print(
        "get hit",
        || async { black_box(f.driver_get(HIT).await) },
        || async { black_box(raw.get(&raw.hit).await) },
    );
    paired.print(
        "get miss",
        || async { black_box(f.driver_get(MISS).await) },
        || async { black_box(raw.get(&raw.miss).await) },
    );
    paired.print("set", || f.driver_set(), || raw.set(&raw.set, &f.value));
    paired.print(
        "concurrent8 get hit",
        || f.driver_concurrent(),
        || f.raw_concurrent(),
    );
    println!("against one redis ConnectionManager by hand:");
    paired.print(
        "get hit",
        || async { black_box(f.driver_get(HIT).await) },
        || async { black_box(raw.manager_get(&raw.hit).await) },
    );
    paired.print(
        "get miss",
        || async { black_box(f.driver_get(MISS).await) },
        || async { black_box(raw.manager_get(&raw.miss).await) },
    );
    paired.print(
        "set",
        || f.driver_set(),
        || raw.manager_set(&raw.set, &f.value),
    );
    paired.print(
        "concurrent8 get hit",
        || f.driver_concurrent(),
        || f.manager_concurrent(),
    );
}
