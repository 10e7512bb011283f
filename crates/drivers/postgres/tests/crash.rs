//! Crash campaigns against the real server (RELIABILITY.md, "Crash campaigns"): consumer
//! processes killed with `SIGKILL` during `reserve`, mid-task and between the work and its ack,
//! their connections cut through a proxy: 0 tasks lost, every duplicate explained by a kill or
//! a failed ack. Producer processes killed and cut off while enqueueing with idempotency keys:
//! 0 copies. Sizes: `sandloom_crash_support::Scale::from_env` (`SANDLOOM_CRASH_SCALE=large`).
//!
//! The workers are this test binary, re-run as its ignored test `crash_worker`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use sandloom_crash_support::pool::ProcessPool;
use sandloom_crash_support::taskqueue::{self, Setup};
use sandloom_crash_support::{Scale, scratch};
use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::taskqueue::TaskQueue;

/// Long enough that a live worker never loses its lease on a loaded machine; a dead worker's
/// task comes back after it.
const VISIBILITY: Duration = Duration::from_secs(3);

/// A target is `<url> <namespace>`.
async fn open(target: String) -> Result<Arc<dyn TaskQueue>, String> {
    let (url, namespace) = target.split_once(' ').ok_or("no namespace")?;
    let queue = PostgresTaskQueue::from_options(PostgresTaskQueueOptions {
        visibility_timeout_ms: VISIBILITY.as_millis() as u64,
        // Tasks that crash their workers again and again are not what is measured.
        max_attempts: 1_000,
        pool_size: 2,
        ..support::options(url, namespace)
    })
    .map_err(|err| err.to_string())?;
    queue.start().await.map_err(|err| err.to_string())?;
    Ok(Arc::new(queue))
}

#[test]
#[ignore = "a worker process of the crash campaigns below: they start it, with its orders"]
fn crash_worker() {
    taskqueue::worker_main(open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn consumers_killed_and_cut_off_lose_no_task_and_every_duplicate_is_explained() {
    let scale = Scale::from_env();
    let namespace = support::unique("crash_consume");
    let (proxy, via) = support::proxied().await;
    let dir = scratch();
    let setup = Setup {
        driver: "taskqueue.postgres",
        queue: "jobs".into(),
        direct: open(format!("{} {namespace}", support::server_url()))
            .await
            .expect("open"),
        target: format!("{via} {namespace}"),
        proxy: Some(proxy),
        visibility: VISIBILITY,
        unconfirmed_acks: false,
        dir: dir.path(),
        scale,
    };
    let report = taskqueue::consume_campaign(&setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(&scale, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn producers_killed_and_cut_off_with_idempotency_keys_create_no_copy() {
    let scale = Scale::from_env();
    let namespace = support::unique("crash_produce");
    let (proxy, via) = support::proxied().await;
    let dir = scratch();
    let setup = Setup {
        driver: "taskqueue.postgres",
        queue: "jobs".into(),
        direct: open(format!("{} {namespace}", support::server_url()))
            .await
            .expect("open"),
        target: format!("{via} {namespace}"),
        proxy: Some(proxy),
        visibility: VISIBILITY,
        unconfirmed_acks: false,
        dir: dir.path(),
        scale,
    };
    let report = taskqueue::produce_campaign(&setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(Some(scale.cuts / 2));
}
