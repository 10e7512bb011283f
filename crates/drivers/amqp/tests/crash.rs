//! Crash campaign against a real RabbitMQ (RELIABILITY.md, "Crash campaigns"): consumer
//! processes killed with `SIGKILL` during `reserve`, mid-task and between the work and its ack,
//! their connections cut through a proxy: 0 tasks lost, every duplicate explained by a kill or
//! a failed ack. No producer campaign: the driver does not declare `dedupe` (an enqueue with
//! an idempotency key answers `Unsupported`, which the conformance kit holds it to). Sizes:
//! `sandloom_crash_support::Scale::from_env` (`SANDLOOM_CRASH_SCALE=large`).
//!
//! The workers are this test binary, re-run as its ignored test `crash_worker`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use sandloom_crash_support::pool::ProcessPool;
use sandloom_crash_support::taskqueue::{self, Setup};
use sandloom_crash_support::{Scale, scratch};
use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::taskqueue::TaskQueue;

/// Long enough that a live worker never loses its lease on a loaded machine. A killed worker's
/// tasks come back at once: the broker requeues them when its connection closes.
const VISIBILITY: Duration = Duration::from_secs(3);

/// A target is `<url> <queue prefix>`.
async fn open(target: String) -> Result<Arc<dyn TaskQueue>, String> {
    let (url, prefix) = target.split_once(' ').ok_or("no prefix")?;
    let queue = AmqpTaskQueue::from_options(AmqpTaskQueueOptions {
        url: url.into(),
        queue_prefix: prefix.to_owned(),
        visibility_timeout_ms: VISIBILITY.as_millis() as u64,
        // Tasks that crash their workers again and again are not what is measured.
        max_attempts: 1_000,
        connect_timeout_ms: 2_000,
        operation_timeout_ms: 2_000,
        reconnect_backoff_max_ms: 400,
        queue_ttl_ms: Some(600_000),
    })
    .map_err(|err| err.to_string())?;
    queue.start().await.map_err(|err| err.to_string())?;
    Ok(Arc::new(queue))
}

#[test]
#[ignore = "a worker process of the crash campaign below: it starts it, with its orders"]
fn crash_worker() {
    taskqueue::worker_main(open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn consumers_killed_and_cut_off_lose_no_task_and_every_duplicate_is_explained() {
    let scale = Scale::from_env();
    let proxy = Arc::new(support::proxy().await);
    let prefix = support::unique_prefix("crash");
    let dir = scratch();
    let setup = Setup {
        driver: "taskqueue.amqp",
        queue: "jobs".into(),
        direct: open(format!("{} {prefix}", support::server_url()))
            .await
            .expect("open"),
        target: format!("{} {prefix}", support::url_via(proxy.address())),
        proxy: Some(proxy),
        visibility: VISIBILITY,
        // AMQP 0-9-1 acks are not confirmed: `ack` answers once the frame is written, and a
        // connection cut (or a kill) right after loses it; the broker delivers the task again.
        unconfirmed_acks: true,
        dir: dir.path(),
        scale,
    };
    let report = taskqueue::consume_campaign(&setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(&scale, true);
}
