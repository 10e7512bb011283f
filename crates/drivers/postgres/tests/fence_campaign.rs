//! The fence campaign of `lock.postgres` (RELIABILITY.md, "Fence campaigns"): worker processes
//! contend for one lock through a proxy, write with their fences to a row that refuses stale
//! ones, and are killed with `SIGKILL`, frozen with `SIGSTOP` past their lease and cut off.
//! 0 writes accepted out of fence order, 0 holders at once, fences that only grow. Sizes:
//! `sandloom_crash_support::fence::FenceScale::from_env` (`SANDLOOM_CRASH_SCALE=large`).
//!
//! The workers are this test binary, re-run as its ignored test `crash_worker`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use sandloom_crash_support::fence::{self, FenceScale, Setup};
use sandloom_crash_support::pool::ProcessPool;
use sandloom_crash_support::scratch;
use sandloom_driver_postgres::{PostgresLock, PostgresLockOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::lock::Lock;

/// Short, so that takeovers after kills and pauses come quickly; long enough that a live
/// holder's refresh and write fit in it on a loaded machine.
const TTL: Duration = Duration::from_millis(400);

/// The lease table the campaign uses (each run in a namespace of its own).
const TABLE: &str = "sandloom_test_fence_locks";

/// A target is `<url> <namespace>`, or `<url> <namespace> reused-fence` for the broken lock
/// ([`fence::ReusedFence`]).
async fn open(target: String) -> Result<Arc<dyn Lock>, String> {
    let (url, namespace) = target.split_once(' ').ok_or("no namespace")?;
    let (namespace, broken) = match namespace.split_once(' ') {
        Some((namespace, "reused-fence")) => (namespace, true),
        _ => (namespace, false),
    };
    let lock = PostgresLock::from_options(PostgresLockOptions {
        url: url.into(),
        table: TABLE.to_owned(),
        namespace: namespace.to_owned(),
        pool_size: 2,
        connect_timeout_ms: 1_000,
        operation_timeout_ms: 2_000,
        ..PostgresLockOptions::default()
    })
    .map_err(|err| err.to_string())?;
    lock.start().await.map_err(|err| err.to_string())?;
    if broken {
        return Ok(Arc::new(fence::ReusedFence::new(lock)));
    }
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
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn holders_killed_frozen_and_cut_off_never_get_a_stale_write_accepted() {
    let scale = FenceScale::from_env();
    let namespace = support::unique("fence");
    let (proxy, via) = support::proxied().await;
    // The table is created (or migrated) once, straight to the server, before the workers
    // race to start.
    open(format!("{} {namespace}", support::server_url()))
        .await
        .expect("open the lock");
    let dir = scratch();
    let mut setup = Setup {
        driver: "lock.postgres",
        lock: "fenced".into(),
        target: format!("{via} {namespace}"),
        proxy: Some(proxy),
        resource_url: support::server_url(),
        ttl: TTL,
        dir: dir.path(),
        scale,
        restart: None,
    };
    let report = fence::fence_campaign(&mut setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(&scale, true, false);
}

/// The campaign's own test: run against a lock that reuses fences (every odd fence is handed
/// out as the even one before it), without any fault, it must fail, and say why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn the_campaign_fails_a_lock_that_reuses_fences() {
    let scale = FenceScale {
        grants: 60,
        workers: 3,
        kills: 0,
        pauses: 0,
        cuts: 0,
        restarts: 0,
        seed: 1,
        hung_after: Duration::from_mins(1),
    };
    let namespace = support::unique("fence_broken");
    open(format!("{} {namespace}", support::server_url()))
        .await
        .expect("open the lock");
    let dir = scratch();
    let mut setup = Setup {
        driver: "lock.postgres (fences reused)",
        lock: "fenced".into(),
        target: format!("{} {namespace} reused-fence", support::server_url()),
        proxy: None,
        resource_url: support::server_url(),
        ttl: TTL,
        dir: dir.path(),
        scale,
        restart: None,
    };
    let report = fence::fence_campaign(&mut setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    let figures = &report.figures;
    // About half the grants reuse the fence before them: each is a duplicate, and its holder's
    // write, made while it certainly held the lease, is refused. (It is also a fence
    // regression when its acquire was called after the grant before it answered; a waiter
    // woken by the release called it before, so that count varies.)
    assert!(figures.duplicate_fences >= scale.grants / 4, "{report}");
    assert!(
        figures.refused_while_holding >= scale.grants / 4,
        "{report}"
    );
    // What `assert_holds` checks first: the run fails.
    assert!(!figures.violations().is_empty(), "{report}");
}
