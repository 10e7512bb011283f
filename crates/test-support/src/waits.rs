//! Waiting operations across a reload: what every test of a `reserve` that waited while a
//! reload replaced its instance checks at the end.

use sandloom_sdk_infra::InfraResult;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{EnqueueOptions, Reservation, TaskQueue};
use tokio::task::JoinHandle;

/// Enqueue a task `payload` on queue `jobs` of `queue` (the instance it serves now), and check
/// that `reserve` — a `reserve("jobs", …)` that began before a reload and is still waiting —
/// answers that task, with no error; then ack it. When the old instance's store cannot hold
/// the task (another in-memory queue, another namespace), only the new instance could have
/// handed it out.
///
/// ```no_run
/// # async fn f(queue: std::sync::Arc<dyn sandloom_sdk_infra::taskqueue::TaskQueue>) {
/// let reserve = tokio::spawn({
///     let queue = std::sync::Arc::clone(&queue);
///     async move { queue.reserve("jobs", std::time::Duration::from_secs(60)).await }
/// });
/// // … reload, replacing the instance …
/// sandloom_test_support::waits::reserve_gets_the_task_enqueued_now(&*queue, reserve, b"after").await;
/// # }
/// ```
///
/// # Panics
/// When the task fails, the reserve failed or answered another task or none, or an operation
/// on `queue` failed.
pub async fn reserve_gets_the_task_enqueued_now(
    queue: &dyn TaskQueue,
    reserve: JoinHandle<InfraResult<Option<Reservation>>>,
    payload: &'static [u8],
) {
    let id = queue
        .enqueue(
            "jobs",
            Bytes::from_static(payload),
            EnqueueOptions::default(),
        )
        .await
        .expect("enqueue on the new instance");
    let reservation = reserve
        .await
        .expect("the reserve's task")
        .expect("the reserve must not fail because of the reload")
        .expect("the task enqueued after the reload");
    assert_eq!(reservation.task.id, id);
    assert_eq!(reservation.task.payload, Bytes::from_static(payload));
    queue
        .ack(&reservation)
        .await
        .expect("ack on the new instance");
}
