//! Crash campaigns on `taskqueue.memory` (RELIABILITY.md, "Crash campaigns").
//!
//! Processes cannot share a memory queue, so its workers are Tokio tasks of this process and a
//! kill aborts one: it stops at its next `.await` (during `reserve`, mid-task, between the work
//! and its ack, or anywhere), dropping its reservation unsettled. That is a cancellation, not
//! a `SIGKILL`: a task cannot die inside a synchronous step, and the queue never dies with it.
//! No connection to cut. What holds is the same: 0 tasks lost, every duplicate explained by a
//! kill between the work and its ack; producers aborted mid-enqueue and retried with
//! idempotency keys create 0 copies.

use std::sync::Arc;
use std::time::Duration;

use sandloom_crash_support::taskqueue::{self, Setup, TaskPool};
use sandloom_crash_support::{Scale, scratch};
use sandloom_driverkit::Driver;
use sandloom_driverkit::taskqueue::TaskQueue;
use sandloom_embedded::{MemoryTaskQueue, MemoryTaskQueueOptions};

const VISIBILITY: Duration = Duration::from_secs(1);

async fn queue() -> Arc<dyn TaskQueue> {
    let queue = MemoryTaskQueue::from_options(MemoryTaskQueueOptions {
        visibility_timeout_ms: VISIBILITY.as_millis() as u64,
        max_attempts: 1_000,
        ..MemoryTaskQueueOptions::default()
    })
    .expect("options");
    queue.start().await.expect("start");
    Arc::new(queue)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_aborted_lose_no_task_and_every_duplicate_is_explained() {
    let scale = Scale::from_env();
    let dir = scratch();
    let queue = queue().await;
    let setup = Setup {
        driver: "taskqueue.memory",
        queue: "jobs".into(),
        direct: Arc::clone(&queue),
        target: String::new(),
        proxy: None,
        visibility: VISIBILITY,
        unconfirmed_acks: false,
        dir: dir.path(),
        scale,
    };
    let report = taskqueue::consume_campaign(&setup, &mut TaskPool::new(queue)).await;
    eprintln!("{report}");
    report.assert_holds(&scale, false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producers_aborted_with_idempotency_keys_create_no_copy() {
    let scale = Scale::from_env();
    let dir = scratch();
    let queue = queue().await;
    let setup = Setup {
        driver: "taskqueue.memory",
        queue: "jobs".into(),
        direct: Arc::clone(&queue),
        target: String::new(),
        proxy: None,
        visibility: VISIBILITY,
        unconfirmed_acks: false,
        dir: dir.path(),
        scale,
    };
    let report = taskqueue::produce_campaign(&setup, &mut TaskPool::new(queue)).await;
    eprintln!("{report}");
    report.assert_holds(None);
}
