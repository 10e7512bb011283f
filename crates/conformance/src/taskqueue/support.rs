//! Helpers the taskqueue obligations share: the kit's time bounds, queue names, and
//! enqueue/reserve steps that fail the obligation with a message.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{EnqueueOptions, Reservation, Task, TaskQueue};

use crate::{KitRequest, ensure};

/// Generous slack for "answers within" bounds: the kit checks behaviour, not speed.
pub(super) const SLACK: Duration = Duration::from_secs(2);
/// Allowed clock disagreement in "not before" bounds (a backend may round to milliseconds or
/// keep time on another host).
pub(super) const TOLERANCE: Duration = Duration::from_millis(50);
/// The delay and `retry_after` the kit uses: a whole second (some backends count in seconds).
pub(super) const POSTPONE: Duration = Duration::from_secs(1);
/// A postponement no obligation waits out: longer than u32 milliseconds and memcached's
/// 30-day cut-off.
pub(super) const DAYS_400: Duration = Duration::from_hours(400 * 24);

/// How long to wait for a delivery that is due about one visibility timeout from now.
pub(super) fn patience(visibility: Duration) -> Duration {
    visibility * 4 + SLACK
}

/// A queue of this instance only: the namespace plus a suffix naming its use.
pub(super) fn queue_name(request: &KitRequest, suffix: &str) -> String {
    format!("{}-{suffix}", request.namespace)
}

pub(super) fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) async fn put(q: &dyn TaskQueue, queue: &str, payload: Bytes) -> Result<String, String> {
    q.enqueue(queue, payload, EnqueueOptions::default())
        .await
        .map_err(|e| format!("enqueue to {queue:?} failed: {e}"))
}

/// Reserve from `queue` waiting up to `wait`; a task must come.
pub(super) async fn take(
    q: &dyn TaskQueue,
    queue: &str,
    wait: Duration,
    what: &str,
) -> Result<Reservation, String> {
    match q.reserve(queue, wait).await {
        Ok(Some(reservation)) => Ok(reservation),
        Ok(None) => Err(format!(
            "{what}: reserve answered None after waiting {wait:?}"
        )),
        Err(e) => Err(format!("{what}: reserve failed: {e}")),
    }
}

/// Reserve from `queue` waiting up to `wait`; nothing may come.
pub(super) async fn expect_none(
    q: &dyn TaskQueue,
    queue: &str,
    wait: Duration,
    expectation: &str,
) -> Result<(), String> {
    match q.reserve(queue, wait).await {
        Ok(None) => Ok(()),
        Ok(Some(r)) => Err(format!(
            "{expectation}, but reserve (waiting {wait:?}) delivered task {:?} (attempts {})",
            r.task.id, r.task.attempts
        )),
        Err(e) => Err(format!("{expectation}, but reserve failed: {e}")),
    }
}

/// `again` is a later delivery of the task `first` delivered, with the given attempt number.
pub(super) fn ensure_redelivery(
    first: &Reservation,
    again: &Reservation,
    attempts: u32,
    how: &str,
) -> Result<(), String> {
    ensure!(
        again.task.id == first.task.id,
        "{how}: expected task {:?} again, got task {:?}",
        first.task.id,
        again.task.id
    );
    ensure!(
        again.task.payload == first.task.payload,
        "{how}: the redelivered task's payload changed"
    );
    ensure!(
        again.task.attempts == attempts,
        "{how}: the redelivered task has attempts {}, expected {attempts}",
        again.task.attempts
    );
    ensure!(
        again.receipt != first.receipt,
        "{how}: the redelivery carries the same receipt {:?} as the earlier one (every delivery needs its own)",
        again.receipt
    );
    Ok(())
}

pub(super) fn ids(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.id.as_str()).collect()
}
