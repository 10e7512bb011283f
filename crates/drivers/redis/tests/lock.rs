//! What `lock.redis` leaves in Redis, read back with the `redis` crate directly, and what its
//! fences survive: a fence counter lost (as with a restart of a server without persistence)
//! is re-seeded from the server's clock, so fences keep growing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sandloom_driver_redis::{RedisLock, RedisLockOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::lock::Lock;

fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_REDIS_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_REDIS_URL").map(str::to_owned))
        .unwrap_or_else(|| "redis://127.0.0.1:6379".to_owned())
}

fn unique_prefix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("sandloom-test:lock:{nanos}-{}", std::process::id())
}

async fn started(prefix: &str) -> RedisLock {
    let lock = RedisLock::from_options(RedisLockOptions {
        url: server_url().into(),
        prefix: prefix.to_owned(),
        ..RedisLockOptions::default()
    })
    .unwrap();
    lock.start().await.unwrap();
    lock
}

#[cfg_attr(
    not(sandloom_test_redis),
    ignore = "needs a real server: set SANDLOOM_TEST_REDIS_URL and rebuild"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_fence_counter_is_reseeded_from_the_server_clock_and_fences_keep_growing() {
    let prefix = unique_prefix();
    let lock = started(&prefix).await;
    let client = redis::Client::open(server_url()).unwrap();
    let mut raw = client.get_multiplexed_async_connection().await.unwrap();
    let ttl = Duration::from_secs(30);

    let first = lock.acquire("job", ttl).await.unwrap().unwrap();
    // The lease key holds `{fence}:{token}` with the lease's expiry; the counter has none.
    let value: String = redis::cmd("GET")
        .arg(format!("{prefix}:lock:job"))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(value, format!("{}:{}", first.fence, first.token));
    let pttl: i64 = redis::cmd("PTTL")
        .arg(format!("{prefix}:lock:job"))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(pttl > 29_000 && pttl <= 30_000, "{pttl}");
    let counter_ttl: i64 = redis::cmd("PTTL")
        .arg(format!("{prefix}:fence:job"))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(counter_ttl, -1, "the fence counter never expires");
    // The first fence of a name is the server's time in microseconds, plus one.
    let micros_now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros();
    let fence = u128::from(first.fence);
    assert!(
        fence <= micros_now + 5_000_000 && fence + 60_000_000 > micros_now,
        "fence {fence} is not near the clock's {micros_now} µs"
    );
    assert!(lock.release(&first).await.unwrap());

    // The counter is lost, as in a restart without persistence: the next fence is still greater.
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}:fence:job"))
        .query_async(&mut raw)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = lock.acquire("job", ttl).await.unwrap().unwrap();
    assert!(second.fence > first.fence, "{second:?} after {first:?}");

    // A lease written by hand (another token) is neither released nor refreshed by ours.
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}:lock:job"))
        .arg(format!("{}:someone-else", second.fence))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(!lock.release(&second).await.unwrap());
    assert!(lock.refresh(&second, ttl).await.is_err());
    lock.stop().await.unwrap();
}

#[cfg_attr(
    not(sandloom_test_redis),
    ignore = "needs a real server: set SANDLOOM_TEST_REDIS_URL and rebuild"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_waiter_with_stopped() {
    let prefix = unique_prefix();
    let lock = std::sync::Arc::new(started(&prefix).await);
    let ttl = Duration::from_secs(30);
    lock.acquire("job", ttl).await.unwrap().unwrap();
    let waiter = {
        let lock = std::sync::Arc::clone(&lock);
        tokio::spawn(async move { lock.acquire_wait("job", ttl, Duration::from_secs(20)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped_at = std::time::Instant::now();
    lock.stop().await.unwrap();
    let err = waiter.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), sandloom_driverkit::sdk::ErrorKind::Stopped);
    assert!(stopped_at.elapsed() < Duration::from_secs(2));
}
