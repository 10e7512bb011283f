//! Obligations on redelivery: `nack` (with and without `retry_after`), the visibility timeout,
//! receipts gone stale, and tasks waiting for either without holding up the rest of the queue.

use std::time::{Duration, Instant};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::TaskQueue;

use super::TaskQueueSettings;
use super::support::{
    DAYS_400, POSTPONE, SLACK, TOLERANCE, ensure_redelivery, expect_none, patience, put,
    queue_name, take,
};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

pub(super) async fn nack_redelivers_with_a_new_receipt<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "nack");
    put(q, &name, Bytes::from_static(b"try again")).await?;
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    call!("nack without retry_after", q.nack(&first, None));
    let again = take(q, &name, SLACK, "reserve after a nack").await?;
    ensure_redelivery(&first, &again, 2, "after a nack")?;
    call!("ack of the redelivery", q.ack(&again));
    expect_none(
        q,
        &name,
        vt + vt / 2,
        "an acked redelivery must be gone for good",
    )
    .await
}

pub(super) async fn nack_retry_after_postpones_redelivery<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "retry-after");
    put(q, &name, Bytes::from_static(b"later")).await?;
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    let before = Instant::now();
    call!("nack with retry_after", q.nack(&first, Some(POSTPONE)));
    expect_none(
        q,
        &name,
        POSTPONE / 4,
        &format!("a task nacked with retry_after {POSTPONE:?} must not be redelivered before it"),
    )
    .await?;
    let again = take(
        q,
        &name,
        POSTPONE + SLACK,
        &format!("reserve after a nack with retry_after {POSTPONE:?}"),
    )
    .await?;
    let after = before.elapsed();
    ensure!(
        after + TOLERANCE >= POSTPONE,
        "a task nacked with retry_after {POSTPONE:?} was redelivered after {after:?}"
    );
    ensure!(
        after <= POSTPONE + s.late(),
        "a task nacked with retry_after {POSTPONE:?} was redelivered only {after:?} after the \
         nack: more than the declared tolerance ({:?}) past it",
        s.late()
    );
    ensure_redelivery(&first, &again, 2, "after a nack with retry_after")?;
    call!("ack of the redelivery", q.ack(&again));
    Ok(())
}

pub(super) async fn unacked_task_is_redelivered_after_visibility_timeout<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "timeout");
    put(q, &name, Bytes::from_static(b"abandoned")).await?;
    let before = Instant::now();
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    // The lease counts from the reservation at the earliest and its answer at the latest.
    let reserved = before.elapsed();
    expect_none(
        q,
        &name,
        vt / 4,
        &format!("a reserved task must stay hidden for the visibility timeout ({vt:?})"),
    )
    .await?;
    let again = take(
        q,
        &name,
        patience(vt),
        &format!("a task neither acked nor nacked must be delivered again after the visibility timeout ({vt:?})"),
    )
    .await?;
    let after = before.elapsed();
    ensure!(
        after + TOLERANCE >= vt,
        "an unacked task was redelivered {after:?} after it was reserved, before the visibility timeout ({vt:?})"
    );
    ensure!(
        after <= reserved + vt + s.late(),
        "an unacked task reserved {reserved:?} into the obligation was redelivered only {after:?} \
         into it: its lease ran more than the declared tolerance ({:?}) past the visibility \
         timeout ({vt:?})",
        s.late()
    );
    ensure_redelivery(&first, &again, 2, "after the visibility timeout")?;
    call!("ack of the redelivery", q.ack(&again));
    Ok(())
}

/// How the first receipt of a task became stale.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Staleness {
    /// Its visibility timeout passed; nobody has reserved the task since.
    Expired,
    /// Its visibility timeout passed and the task was delivered again.
    TimedOutAndRedelivered,
    /// It was nacked and the task was delivered again.
    NackedAndRedelivered,
}

/// Make the first receipt of a task stale, then use it: `Conflict`, and the task stays with its
/// current delivery.
async fn stale_receipt_case(
    q: &dyn TaskQueue,
    name: &str,
    vt: Duration,
    staleness: Staleness,
) -> Result<(), String> {
    let how = match staleness {
        Staleness::Expired => "its visibility timeout passed, not yet redelivered",
        Staleness::TimedOutAndRedelivered => "timed out and redelivered",
        Staleness::NackedAndRedelivered => "nacked and redelivered",
    };
    put(q, name, Bytes::from_static(b"stale")).await?;
    let stale = take(q, name, SLACK, "reserve of an enqueued task").await?;
    let redelivery = async {
        let current = take(q, name, patience(vt), &format!("reserve ({how})")).await?;
        ensure_redelivery(&stale, &current, 2, how)?;
        Ok::<_, String>(current)
    };
    let current = match staleness {
        Staleness::Expired => {
            tokio::time::sleep(vt * 2).await;
            None
        }
        Staleness::TimedOutAndRedelivered => Some(redelivery.await?),
        Staleness::NackedAndRedelivered => {
            call!("nack", q.nack(&stale, None));
            Some(redelivery.await?)
        }
    };
    expect_kind(
        &format!("ack with a stale receipt ({how})"),
        ErrorKind::Conflict,
        &q.ack(&stale).await,
    )?;
    expect_kind(
        &format!("nack with a stale receipt ({how})"),
        ErrorKind::Conflict,
        &q.nack(&stale, None).await,
    )?;
    let current = if let Some(current) = current {
        current
    } else {
        let current = take(
            q,
            name,
            patience(vt),
            &format!("the task must survive a stale ack ({how}); reserve"),
        )
        .await?;
        ensure_redelivery(&stale, &current, 2, how)?;
        current
    };
    expect_none(
        q,
        name,
        vt / 4,
        &format!("a stale ack or nack must not release the task from its current delivery ({how})"),
    )
    .await?;
    // The current delivery still holds the task: its nack brings it back once more.
    call!(
        format!("nack with the current receipt after stale ones ({how})"),
        q.nack(&current, None)
    );
    let last = take(
        q,
        name,
        SLACK,
        &format!("the task must survive a stale ack ({how}); reserve after the current nack"),
    )
    .await?;
    ensure_redelivery(&current, &last, 3, how)?;
    call!("ack", q.ack(&last));
    expect_none(q, name, vt + vt / 2, "an acked task must be gone for good").await
}

pub(super) async fn stale_receipt_is_conflict_and_changes_nothing<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    ensure!(
        i.request.max_attempts >= 3,
        "the kit needs max_attempts of at least 3"
    );
    let expired = queue_name(&i.request, "stale-expired");
    let by_timeout = queue_name(&i.request, "stale-timeout");
    let by_nack = queue_name(&i.request, "stale-nack");
    futures_util::future::try_join3(
        stale_receipt_case(q, &expired, vt, Staleness::Expired),
        stale_receipt_case(q, &by_timeout, vt, Staleness::TimedOutAndRedelivered),
        stale_receipt_case(q, &by_nack, vt, Staleness::NackedAndRedelivered),
    )
    .await?;
    Ok(())
}

/// Two tasks in `name`: the one delivered first is then postponed (`nacked`: nacked for 400
/// days; otherwise left reserved, its visibility timeout running), and the other must be
/// delivered within the declared tolerance.
async fn not_blocked_by(
    q: &dyn TaskQueue,
    name: &str,
    late: Duration,
    nacked: bool,
) -> Result<(), String> {
    let how = if nacked {
        "nacked with a retry_after of 400 days"
    } else {
        "reserved and not settled, its visibility timeout running"
    };
    let older = put(q, name, Bytes::from_static(b"postponed")).await?;
    let newer = put(q, name, Bytes::from_static(b"ready")).await?;
    let first = take(q, name, SLACK, "reserve of the first of two tasks").await?;
    let other = if first.task.id == older {
        &newer
    } else {
        &older
    };
    if nacked {
        call!(
            "nack with a retry_after of 400 days",
            q.nack(&first, Some(DAYS_400))
        );
    }
    let what = format!(
        "a queue whose task {:?} is {how}, with task {other:?} ready behind it (not blocked \
         by the other)",
        first.task.id
    );
    let start = Instant::now();
    let next = take(q, name, late, &what).await?;
    ensure!(
        next.task.id == *other,
        "{what}: reserve delivered task {:?} (attempts {}) after {:?}, expected the ready task",
        next.task.id,
        next.task.attempts,
        start.elapsed()
    );
    call!("ack of the ready task", q.ack(&next));
    if !nacked {
        call!("ack of the reserved task", q.ack(&first));
    }
    Ok(())
}

pub(super) async fn a_postponed_task_does_not_block_its_queue<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let late = s.late();
    let retried = queue_name(&i.request, "unblocked-retry");
    let reserved = queue_name(&i.request, "unblocked-reserved");
    futures_util::future::try_join(
        not_blocked_by(q, &retried, late, true),
        not_blocked_by(q, &reserved, late, false),
    )
    .await?;
    Ok(())
}
