//! The fence campaign of `lock.redis` (RELIABILITY.md, "Fence campaigns"): worker processes
//! contend for one lock through a proxy, write with their fences to a Postgres row that
//! refuses stale ones, and are killed with `SIGKILL`, frozen with `SIGSTOP` past their lease and
//! cut off; the Redis server itself is killed and restarted without persistence, losing every
//! lease and fence counter (the driver re-seeds the counter from the server's `TIME`). 0 writes
//! accepted out of fence order, 0 holders at once, fences that never go back, restarts
//! included. Sizes: `sandloom_crash_support::fence::FenceScale::from_env`
//! (`SANDLOOM_CRASH_SCALE=large`).
//!
//! The workers are this test binary, re-run as its ignored test `crash_worker`. The Redis
//! server is the test's own (`redis-server` on `PATH`), so that it can be restarted.

mod support;

use std::sync::Arc;
use std::time::Duration;

use sandloom_crash_support::fence::{self, FenceScale, Setup};
use sandloom_crash_support::pool::ProcessPool;
use sandloom_crash_support::scratch;
use sandloom_driver_redis::{RedisLock, RedisLockOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::lock::Lock;
use sandloom_test_support::TcpProxy;
use support::OwnRedis;

/// Short, so that takeovers after kills and pauses come quickly; long enough that a live
/// holder's refresh and write fit in it on a loaded machine.
const TTL: Duration = Duration::from_millis(400);

/// `SANDLOOM_TEST_POSTGRES_URL` at run time, else at build time: the resource's server.
fn postgres_url() -> String {
    std::env::var("SANDLOOM_TEST_POSTGRES_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_POSTGRES_URL").map(str::to_owned))
        .expect("SANDLOOM_TEST_POSTGRES_URL")
}

/// A target is `<url> <prefix>`.
async fn open(target: String) -> Result<Arc<dyn Lock>, String> {
    let (url, prefix) = target.split_once(' ').ok_or("no prefix")?;
    let lock = RedisLock::from_options(RedisLockOptions {
        url: url.into(),
        prefix: prefix.to_owned(),
        connect_timeout_ms: 1_000,
        response_timeout_ms: 1_000,
        ..RedisLockOptions::default()
    })
    .map_err(|err| err.to_string())?;
    lock.start().await.map_err(|err| err.to_string())?;
    Ok(Arc::new(lock))
}

#[test]
#[ignore = "a worker process of the fence campaign below: it starts it, with its orders"]
fn crash_worker() {
    fence::worker_main(open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs PostgreSQL for the protected resource: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn holders_killed_frozen_cut_off_and_server_restarts_never_get_a_stale_write_accepted() {
    let scale = FenceScale::from_env();
    let mut server = OwnRedis::start();
    let upstream = ([127, 0, 0, 1], server.port).into();
    let proxy = TcpProxy::start(upstream).await.expect("a proxy");
    let prefix = format!("sandloom-test:fence:{}-{}", std::process::id(), server.port);
    let dir = scratch();
    let mut setup = Setup {
        driver: "lock.redis",
        lock: "fenced".into(),
        target: format!("redis://{} {prefix}", proxy.address()),
        proxy: Some(Arc::new(proxy)),
        resource_url: postgres_url(),
        ttl: TTL,
        dir: dir.path(),
        scale,
        restart: Some(Box::new(|| server.restart())),
    };
    let report = fence::fence_campaign(&mut setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(&scale, true, true);
}
