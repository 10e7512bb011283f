//! Obligations on the windows between states: a receipt once acked or nacked is spent, and
//! `stop` ends a `reserve` that is waiting.

use std::time::{Duration, Instant};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::TaskQueue;

use super::TaskQueueSettings;
use super::support::{
    POSTPONE, SLACK, TOLERANCE, ensure_redelivery, expect_none, put, queue_name, take,
};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

pub(super) async fn a_second_ack_is_conflict_and_changes_nothing<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "ack-twice");
    let done = put(q, &name, Bytes::from_static(b"done")).await?;
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    ensure!(
        first.task.id == done,
        "reserve delivered {:?}, expected the only task {done:?}",
        first.task.id
    );
    // A task enqueued after the first was taken: a second ack must not touch it.
    let other = put(q, &name, Bytes::from_static(b"other")).await?;
    call!("ack", q.ack(&first));
    expect_kind(
        "a second ack of an acked task",
        ErrorKind::Conflict,
        &q.ack(&first).await,
    )?;
    expect_kind(
        "nack of an acked task",
        ErrorKind::Conflict,
        &q.nack(&first, None).await,
    )?;
    let next = take(
        q,
        &name,
        SLACK,
        "a second ack must leave the queue's other task alone; reserve",
    )
    .await?;
    ensure!(
        next.task.id == other && next.task.attempts == 1,
        "after a second ack of {done:?}, reserve delivered {:?} (attempts {}), expected the \
         other task {other:?} on its first attempt",
        next.task.id,
        next.task.attempts
    );
    call!("ack of the other task", q.ack(&next));
    expect_none(
        q,
        &name,
        vt + vt / 2,
        "after a second ack, neither task may come back",
    )
    .await
}

pub(super) async fn a_nacked_receipt_is_spent_at_once<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "nacked-receipt");
    put(q, &name, Bytes::from_static(b"retry me")).await?;
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    let nacked = Instant::now();
    call!("nack with a retry_after", q.nack(&first, Some(POSTPONE)));
    // Before the redelivery: the receipt is spent already, and using it changes nothing (not
    // the task's retry time, not its attempts).
    expect_kind(
        "ack with the receipt of a nacked delivery",
        ErrorKind::Conflict,
        &q.ack(&first).await,
    )?;
    expect_kind(
        "nack (retry now) with the receipt of a nacked delivery",
        ErrorKind::Conflict,
        &q.nack(&first, None).await,
    )?;
    let early = POSTPONE.saturating_sub(nacked.elapsed() + TOLERANCE);
    expect_none(
        q,
        &name,
        early,
        "a task nacked with a retry_after must not come back early, even after a stale nack",
    )
    .await?;
    let again = take(
        q,
        &name,
        POSTPONE + SLACK,
        "a stale ack must not remove a nacked task; reserve after its retry_after",
    )
    .await?;
    ensure_redelivery(&first, &again, 2, "redelivery after a nack and stale uses")?;
    call!("ack", q.ack(&again));
    Ok(())
}

/// How long the `reserve` stopped in [`stop_ends_a_waiting_reserve_with_stopped`] asks to wait:
/// far longer than the obligation takes when the driver honours `stop`.
const LONG_WAIT: Duration = Duration::from_mins(1);

pub(super) async fn stop_ends_a_waiting_reserve_with_stopped<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let name = queue_name(&i.request, "stop-waiting");
    let waiting = {
        let q = i.shared();
        let name = name.clone();
        tokio::spawn(async move { q.reserve(&name, LONG_WAIT).await })
    };
    // Let the reserve start waiting on the empty queue.
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure!(
        !waiting.is_finished(),
        "reserve of an empty queue with wait {LONG_WAIT:?} answered within 300 ms"
    );
    let stopped = Instant::now();
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    let stop_took = stopped.elapsed();
    // Within the declared tolerance of `stop` returning (a driver may first wait for its
    // connections to close).
    let late = s.late();
    let Ok(joined) = tokio::time::timeout(SLACK * 2, waiting).await else {
        return Err(format!(
            "a reserve waiting (for up to {LONG_WAIT:?}) when stop was called still waited \
             {:?} after it: it must answer Stopped promptly",
            SLACK * 2
        ));
    };
    let answer = joined.map_err(|e| format!("the waiting reserve panicked: {e}"))?;
    let after = stopped.elapsed();
    ensure!(
        after <= stop_took + late,
        "a reserve waiting (for up to {LONG_WAIT:?}) when stop was called answered {after:?} \
         after the call, {stop_took:?} of which stop took: more than the declared tolerance \
         ({late:?}) after stop returned"
    );
    expect_kind(
        &format!(
            "a reserve waiting when stop was called (answered after {:?})",
            stopped.elapsed()
        ),
        ErrorKind::Stopped,
        &answer,
    )
}
