//! `cache.redis` against the `redis` crate used directly, same server, same run: GET, SET of a
//! small value, and MGET of 10 keys. The driver is called as a module calls it, through
//! `&dyn Cache`; the raw side is a `ConnectionManager` with the same timeouts, on the same
//! Redis keys (the driver's prefix written out by hand).
//!
//! After criterion's measurements, a real run (`--bench`) also prints a paired comparison per
//! operation (driver and raw timed back to back in alternating rounds; median of the per-round
//! ratios), which stays meaningful on a machine whose load drifts during the run.
//!
//! Needs `SANDLOOM_TEST_REDIS_URL` (`eval "$(scripts/test-services up)"`); without it, prints
//! how to run and exits successfully. `cargo bench -p sandloom-driver-redis -- --measurement-time 3`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use tokio::runtime::Runtime;

const PREFIX: &str = "sandloom-bench";
const VALUE: &[u8] = b"sixteen-byte-val";
/// The driver's keys; the raw client uses the same ones with `PREFIX:` in front.
const GET_KEY: &str = "get";
const SET_KEY: &str = "set";
const MGET_KEYS: [&str; 10] = [
    "mget-0", "mget-1", "mget-2", "mget-3", "mget-4", "mget-5", "mget-6", "mget-7", "mget-8",
    "mget-9",
];

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_REDIS_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_REDIS_URL").map(str::to_owned))
}

fn raw_key(key: &str) -> String {
    format!("{PREFIX}:{key}")
}

/// Both sides, connected to the same server, the keys seeded.
struct Fixture {
    runtime: Runtime,
    cache: Arc<dyn Cache>,
    raw: ConnectionManager,
}

impl Fixture {
    fn new(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let options = RedisCacheOptions {
            url: url.into(),
            prefix: Some(PREFIX.to_owned()),
            ..RedisCacheOptions::default()
        };
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(options.connect_timeout_ms)))
            .set_response_timeout(Some(Duration::from_millis(options.response_timeout_ms)));
        let (cache, raw) = runtime.block_on(async {
            let driver = RedisCache::from_options(options).expect("valid options");
            driver.start().await.expect("the driver starts");
            let cache: Arc<dyn Cache> = Arc::new(driver);
            let client = redis::Client::open(url).expect("a Redis URL");
            let raw = ConnectionManager::new_with_config(client, config)
                .await
                .expect("the raw client connects");
            let entries: Vec<(&str, Bytes)> = MGET_KEYS
                .iter()
                .chain(&[GET_KEY])
                .map(|key| (*key, Bytes::from_static(VALUE)))
                .collect();
            cache.set_many(&entries).await.expect("seed the keys");
            (cache, raw)
        });
        Self {
            runtime,
            cache,
            raw,
        }
    }

    /// Time `iters` sequential calls of `op`, inside the runtime.
    fn timed<F, Fut>(&self, iters: u64, op: F) -> Duration
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        self.runtime.block_on(async {
            let begin = Instant::now();
            for _ in 0..iters {
                op().await;
            }
            begin.elapsed()
        })
    }

    fn clean_up(&self) {
        let keys: Vec<&str> = MGET_KEYS
            .iter()
            .chain(&[GET_KEY, SET_KEY])
            .copied()
            .collect();
        let _ = self.runtime.block_on(self.cache.delete_many(&keys));
    }
}

fn get(group: &mut BenchmarkGroup<'_, WallTime>, fixture: &Fixture) {
    let cache = &fixture.cache;
    group.bench_function("get/driver", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                black_box(cache.get(GET_KEY).await.expect("GET"));
            })
        });
    });
    let key = raw_key(GET_KEY);
    group.bench_function("get/raw", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                let mut connection = fixture.raw.clone();
                let value: Option<Vec<u8>> = redis::cmd("GET")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
                    .expect("GET");
                black_box(value);
            })
        });
    });
}

fn set(group: &mut BenchmarkGroup<'_, WallTime>, fixture: &Fixture) {
    let cache = &fixture.cache;
    group.bench_function("set/driver", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                cache
                    .set(SET_KEY, Bytes::from_static(VALUE))
                    .await
                    .expect("SET");
            })
        });
    });
    let key = raw_key(SET_KEY);
    group.bench_function("set/raw", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                let mut connection = fixture.raw.clone();
                redis::cmd("SET")
                    .arg(&key)
                    .arg(VALUE)
                    .query_async::<()>(&mut connection)
                    .await
                    .expect("SET");
            })
        });
    });
}

fn mget(group: &mut BenchmarkGroup<'_, WallTime>, fixture: &Fixture) {
    let cache = &fixture.cache;
    group.bench_function("mget10/driver", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                black_box(cache.get_many(&MGET_KEYS).await.expect("MGET"));
            })
        });
    });
    let keys: Vec<String> = MGET_KEYS.iter().map(|key| raw_key(key)).collect();
    group.bench_function("mget10/raw", |b| {
        b.iter_custom(|iters| {
            fixture.timed(iters, || async {
                let mut connection = fixture.raw.clone();
                let values: Vec<Option<Vec<u8>>> = redis::cmd("MGET")
                    .arg(&keys)
                    .query_async(&mut connection)
                    .await
                    .expect("MGET");
                black_box(values);
            })
        });
    });
}

/// Rounds of the paired comparison, and calls per side in each round.
const PAIRED_ROUNDS: usize = 40;
const PAIRED_CALLS: u32 = 300;

/// A comparison robust to a machine whose load drifts (shared CI runners): rounds that time
/// `PAIRED_CALLS` driver calls and as many raw calls back to back, alternating which side goes
/// first; prints the median per-call times and the median of the per-round ratios.
fn paired<D, DF, R, RF>(fixture: &Fixture, name: &str, driver: D, raw: R)
where
    D: Fn() -> DF,
    DF: Future<Output = ()>,
    R: Fn() -> RF,
    RF: Future<Output = ()>,
{
    let mut ratios = Vec::with_capacity(PAIRED_ROUNDS);
    let mut driver_times = Vec::with_capacity(PAIRED_ROUNDS);
    let mut raw_times = Vec::with_capacity(PAIRED_ROUNDS);
    for round in 0..PAIRED_ROUNDS {
        let (driver_time, raw_time) = if round % 2 == 0 {
            let d = fixture.timed(u64::from(PAIRED_CALLS), &driver);
            (d, fixture.timed(u64::from(PAIRED_CALLS), &raw))
        } else {
            let r = fixture.timed(u64::from(PAIRED_CALLS), &raw);
            (fixture.timed(u64::from(PAIRED_CALLS), &driver), r)
        };
        ratios.push(raw_time.as_secs_f64() / driver_time.as_secs_f64());
        driver_times.push(driver_time.as_secs_f64() * 1e6 / f64::from(PAIRED_CALLS));
        raw_times.push(raw_time.as_secs_f64() * 1e6 / f64::from(PAIRED_CALLS));
    }
    println!(
        "paired {name}: driver {:.1} µs/call, raw {:.1} µs/call (medians of {PAIRED_ROUNDS} \
         rounds × {PAIRED_CALLS} calls); driver throughput = {:.2} × raw (median per-round ratio)",
        median(&mut driver_times),
        median(&mut raw_times),
        median(&mut ratios)
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The paired comparison of every operation; only in a real run (`cargo bench`), not in
/// criterion's test mode.
fn paired_all(fixture: &Fixture) {
    let cache = &fixture.cache;
    let get_key = raw_key(GET_KEY);
    let set_key = raw_key(SET_KEY);
    let mget_keys: Vec<String> = MGET_KEYS.iter().map(|key| raw_key(key)).collect();
    paired(
        fixture,
        "get",
        || async {
            black_box(cache.get(GET_KEY).await.expect("GET"));
        },
        || async {
            let mut connection = fixture.raw.clone();
            let value: Option<Vec<u8>> = redis::cmd("GET")
                .arg(&get_key)
                .query_async(&mut connection)
                .await
                .expect("GET");
            black_box(value);
        },
    );
    paired(
        fixture,
        "set",
        || async {
            cache
                .set(SET_KEY, Bytes::from_static(VALUE))
                .await
                .expect("SET");
        },
        || async {
            let mut connection = fixture.raw.clone();
            redis::cmd("SET")
                .arg(&set_key)
                .arg(VALUE)
                .query_async::<()>(&mut connection)
                .await
                .expect("SET");
        },
    );
    paired(
        fixture,
        "mget10",
        || async {
            black_box(cache.get_many(&MGET_KEYS).await.expect("MGET"));
        },
        || async {
            let mut connection = fixture.raw.clone();
            let values: Vec<Option<Vec<u8>>> = redis::cmd("MGET")
                .arg(&mget_keys)
                .query_async(&mut connection)
                .await
                .expect("MGET");
            black_box(values);
        },
    );
}

fn main() {
    let Some(url) = server_url() else {
        eprintln!(
            "benches/redis.rs: skipped, needs a real server: set SANDLOOM_TEST_REDIS_URL \
             (eval \"$(scripts/test-services up)\") and rerun"
        );
        return;
    };
    let fixture = Fixture::new(&url);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("redis");
    get(&mut group, &fixture);
    set(&mut group, &fixture);
    mget(&mut group, &fixture);
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        paired_all(&fixture);
    }
    fixture.clean_up();
    criterion.final_summary();
}
