//! Obligations on durations: waits, delays and `retry_after` below and between whole seconds
//! (rounding shows), at the extremes (400 days, 100 years), counted from the right moment,
//! and a waiting `reserve` woken by a task that becomes ready.

use std::time::{Duration, Instant};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{DELAY, EnqueueOptions, Reservation, TaskQueue};

use super::TaskQueueSettings;
use super::support::{
    DAYS_400, SLACK, TOLERANCE, ensure_redelivery, expect_none, put, queue_name, take,
};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

/// Below a second, and between whole seconds: a driver rounding to whole seconds (either way)
/// misses one of them by more than the largest tolerance a kit at the default accepts.
const UNROUNDED: [Duration; 2] = [Duration::from_millis(300), Duration::from_millis(1500)];
/// Shorter than any backend's resolution: rounded up to it, never refused.
const TINY: Duration = Duration::from_micros(1);
/// Longer than `i32` seconds, and the least the contract lets a long duration be held. (The
/// kit asks for a century, not `Duration::MAX`: the contract holds that as long as the backend
/// can, but a kit that required it would fail drivers for an overflow no caller meets.)
const YEARS_100: Duration = Duration::from_hours(100 * 365 * 24);

/// `elapsed` (since the moment the duration started) lies in `[due - TOLERANCE, due + late]`.
fn ensure_on_time(
    what: &str,
    elapsed: Duration,
    due: Duration,
    late: Duration,
) -> Result<(), String> {
    ensure!(
        elapsed + TOLERANCE >= due,
        "{what}: it came after {elapsed:?}, before its {due:?} (rounded down, or counted from an \
         earlier moment?)"
    );
    ensure!(
        elapsed <= due + late,
        "{what}: it came only after {elapsed:?}, more than the declared tolerance ({late:?}) \
         past its {due:?} (rounded up, or not woken when it became ready?)"
    );
    Ok(())
}

/// A `reserve` of the empty `name` with `wait` answers `None` within `[wait - late, wait + late]`.
async fn empty_wait(
    q: &dyn TaskQueue,
    name: &str,
    wait: Duration,
    late: Duration,
) -> Result<(), String> {
    let start = Instant::now();
    let got = call!(
        format!("reserve of an empty queue with wait {wait:?}"),
        q.reserve(name, wait)
    );
    let elapsed = start.elapsed();
    ensure!(
        got.is_none(),
        "reserve of an empty queue delivered a task: {got:?}"
    );
    ensure!(
        elapsed + late >= wait,
        "reserve of an empty queue with wait {wait:?} answered None after {elapsed:?}: more \
         than the declared tolerance ({late:?}) early (a wait rounded down?)"
    );
    ensure!(
        elapsed <= wait + late,
        "reserve of an empty queue with wait {wait:?} answered None after {elapsed:?}: more \
         than the declared tolerance ({late:?}) late (a wait rounded up to whole seconds?)"
    );
    Ok(())
}

pub(super) async fn reserve_waits_exactly_as_long_as_asked<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let late = s.late();
    let names: Vec<String> = (0..3)
        .map(|n| queue_name(&i.request, &format!("exact-wait-{n}")))
        .collect();
    futures_util::future::try_join3(
        empty_wait(q, &names[0], TINY, late),
        empty_wait(q, &names[1], UNROUNDED[0], late),
        empty_wait(q, &names[2], UNROUNDED[1], late),
    )
    .await?;
    Ok(())
}

/// A task enqueued with `delay` is delivered on time (measured from before the enqueue), on
/// its first attempt, to a `reserve` that was waiting for it.
async fn delayed_on_time(
    q: &dyn TaskQueue,
    name: &str,
    delay: Duration,
    late: Duration,
) -> Result<(), String> {
    let before = Instant::now();
    let id = call!(
        format!("enqueue with a delay of {delay:?}"),
        q.enqueue(
            name,
            Bytes::from_static(b"delayed"),
            EnqueueOptions::default().with_delay(delay)
        )
    );
    let what = format!("a task enqueued with a delay of {delay:?}");
    let r = take(q, name, delay + SLACK, &what).await?;
    let elapsed = before.elapsed();
    ensure!(
        r.task.id == id,
        "{what}: reserve delivered task {:?}, expected {id:?}",
        r.task.id
    );
    ensure_on_time(&what, elapsed, delay, late)?;
    ensure!(
        r.task.attempts == 1,
        "{what}: its first delivery has attempts {}, expected 1",
        r.task.attempts
    );
    call!("ack", q.ack(&r));
    Ok(())
}

/// A task nacked with `retry_after` is redelivered on time (measured from before the nack).
async fn retried_on_time(
    q: &dyn TaskQueue,
    name: &str,
    retry_after: Duration,
    late: Duration,
) -> Result<(), String> {
    put(q, name, Bytes::from_static(b"retried")).await?;
    let first = take(q, name, SLACK, "reserve of an enqueued task").await?;
    let before = Instant::now();
    call!(
        format!("nack with retry_after {retry_after:?}"),
        q.nack(&first, Some(retry_after))
    );
    let what = format!("a task nacked with retry_after {retry_after:?}");
    let again = take(q, name, retry_after + SLACK, &what).await?;
    let elapsed = before.elapsed();
    ensure_redelivery(&first, &again, 2, &what)?;
    ensure_on_time(&what, elapsed, retry_after, late)?;
    call!("ack", q.ack(&again));
    Ok(())
}

pub(super) async fn delays_and_retries_below_and_between_seconds_are_exact<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let late = s.late();
    let name = |what: &str| queue_name(&i.request, &format!("exact-{what}"));
    let mut cases: Vec<futures_util::future::BoxFuture<'_, Result<(), String>>> = Vec::new();
    for (n, duration) in [TINY].into_iter().chain(UNROUNDED).enumerate() {
        let retried = name(&format!("retry-{n}"));
        cases.push(Box::pin(async move {
            retried_on_time(q, &retried, duration, late).await
        }));
        if i.declares(DELAY) {
            let delayed = name(&format!("delay-{n}"));
            cases.push(Box::pin(async move {
                delayed_on_time(q, &delayed, duration, late).await
            }));
        }
    }
    futures_util::future::try_join_all(cases).await?;
    Ok(())
}

pub(super) async fn extreme_durations_are_accepted_and_held<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let late = s.late();
    let name = queue_name(&i.request, "extreme");
    for (what, duration) in [("400 days", DAYS_400), ("100 years", YEARS_100)] {
        if i.declares(DELAY) {
            call!(
                format!("enqueue with a delay of {what} (held as long as the backend can)"),
                q.enqueue(
                    &name,
                    Bytes::from_static(b"far"),
                    EnqueueOptions::default().with_delay(duration)
                )
            );
        }
        put(q, &name, Bytes::from_static(b"retried far")).await?;
        let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        ensure!(
            r.task.payload == "retried far",
            "a task delayed {what} was delivered at once"
        );
        call!(
            format!("nack with retry_after {what} (held as long as the backend can)"),
            q.nack(&r, Some(duration))
        );
    }
    expect_none(
        q,
        &name,
        vt + vt / 2,
        "tasks delayed or nacked for 400 days or 100 years must not be delivered",
    )
    .await?;
    // A wait of a century is a wait without end, not an overflow into no wait at all.
    let waiting = queue_name(&i.request, "extreme-wait");
    let start = Instant::now();
    let enqueued = std::sync::OnceLock::new();
    let (got, id) = tokio::join!(q.reserve(&waiting, YEARS_100), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let id = put(q, &waiting, Bytes::from_static(b"wake up")).await;
        let _ = enqueued.set(start.elapsed());
        id
    });
    let elapsed = start.elapsed();
    let id = id?;
    let Some(r) = got.map_err(|e| format!("a reserve waiting 100 years failed: {e}"))? else {
        return Err(format!(
            "a reserve waiting 100 years answered None after {elapsed:?}"
        ));
    };
    ensure!(
        r.task.id == id,
        "a reserve waiting 100 years delivered task {:?}, not the one enqueued ({id:?})",
        r.task.id
    );
    let enqueued = enqueued.get().copied().unwrap_or(elapsed);
    ensure!(
        elapsed <= enqueued + late,
        "a reserve waiting 100 years delivered a task enqueued {enqueued:?} into its wait \
         only after {elapsed:?}: more than the declared tolerance ({late:?}) later"
    );
    call!("ack", q.ack(&r));
    // `stop` ends reserves waiting 400 days and 100 years.
    let stopped_ones = [DAYS_400, YEARS_100].map(|wait| {
        let q = i.shared();
        let name = queue_name(&i.request, "extreme-stop");
        tokio::spawn(async move { q.reserve(&name, wait).await })
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped = Instant::now();
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    for (what, waiting) in ["400 days", "100 years"].into_iter().zip(stopped_ones) {
        let Ok(joined) = tokio::time::timeout(late + SLACK, waiting).await else {
            return Err(format!(
                "a reserve waiting {what} when stop was called did not answer within {:?}",
                late + SLACK
            ));
        };
        let answer = joined.map_err(|e| format!("the reserve waiting {what} panicked: {e}"))?;
        expect_kind(
            &format!(
                "a reserve waiting {what} when stop was called (answered {:?} after it)",
                stopped.elapsed()
            ),
            ErrorKind::Stopped,
            &answer,
        )?;
    }
    Ok(())
}

pub(super) async fn retry_after_counts_from_the_nack<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let retry_after = Duration::from_secs(1);
    let name = queue_name(&i.request, "retry-from-nack");
    put(q, &name, Bytes::from_static(b"slow worker")).await?;
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    // A worker busy for most of its lease before it gives up.
    let held = vt * 3 / 4;
    tokio::time::sleep(held).await;
    let nacked = Instant::now();
    call!(
        format!("nack with retry_after {retry_after:?}, {held:?} after the reserve"),
        q.nack(&first, Some(retry_after))
    );
    let what = format!(
        "a task nacked with retry_after {retry_after:?} {held:?} after its reserve (counted \
         from the nack, not the reserve)"
    );
    let again = take(q, &name, retry_after + SLACK, &what).await?;
    ensure_on_time(&what, nacked.elapsed(), retry_after, s.late())?;
    ensure_redelivery(&first, &again, 2, &what)?;
    call!("ack", q.ack(&again));
    Ok(())
}

/// A `reserve` waiting 5 s on `name`, whose only task becomes ready `due` after `from`,
/// delivers it on time.
async fn woken_on_time(
    q: &dyn TaskQueue,
    name: &str,
    from: Instant,
    due: Duration,
    late: Duration,
    how: &str,
) -> Result<Reservation, String> {
    let what = format!("a reserve waiting 5 s for a task that becomes ready {how}");
    let r = take(q, name, Duration::from_secs(5), &what).await?;
    ensure_on_time(&what, from.elapsed(), due, late)?;
    Ok(r)
}

pub(super) async fn a_waiting_reserve_wakes_when_a_task_becomes_ready<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let late = s.late();
    let due = Duration::from_millis(500);
    let delayed = async {
        if !i.declares(DELAY) {
            return Ok(());
        }
        let name = queue_name(&i.request, "ready-delay");
        let from = Instant::now();
        call!(
            "enqueue with a delay",
            q.enqueue(
                &name,
                Bytes::from_static(b"delayed"),
                EnqueueOptions::default().with_delay(due)
            )
        );
        let r = woken_on_time(q, &name, from, due, late, "when its delay of 500 ms ends").await?;
        call!("ack", q.ack(&r));
        Ok::<_, String>(())
    };
    let retried = async {
        let name = queue_name(&i.request, "ready-retry");
        put(q, &name, Bytes::from_static(b"retried")).await?;
        let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        let from = Instant::now();
        call!("nack with retry_after", q.nack(&first, Some(due)));
        let how = "when its retry_after of 500 ms ends";
        let r = woken_on_time(q, &name, from, due, late, how).await?;
        ensure_redelivery(&first, &r, 2, how)?;
        call!("ack", q.ack(&r));
        Ok(())
    };
    let abandoned = async {
        let name = queue_name(&i.request, "ready-timeout");
        put(q, &name, Bytes::from_static(b"abandoned")).await?;
        let from = Instant::now();
        let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        // The lease counts from the reservation at the earliest and its answer at the latest.
        let reserved = from.elapsed();
        let how = "when the visibility timeout of its reservation ends";
        let what = format!("a reserve waiting 5 s for a task that becomes ready {how}");
        let r = take(q, &name, Duration::from_secs(5), &what).await?;
        let elapsed = from.elapsed();
        ensure!(
            elapsed + TOLERANCE >= vt,
            "{what}: it came after {elapsed:?}, before the visibility timeout ({vt:?})"
        );
        ensure!(
            elapsed <= reserved + vt + late,
            "{what}: it came only {elapsed:?} after the reserve (which answered after \
             {reserved:?}), more than the declared tolerance ({late:?}) past the visibility \
             timeout ({vt:?}): not woken when the task became ready?"
        );
        ensure_redelivery(&first, &r, 2, how)?;
        call!("ack", q.ack(&r));
        Ok(())
    };
    futures_util::future::try_join3(delayed, retried, abandoned).await?;
    Ok(())
}

/// A `reserve` of `name` with a zero wait, which must find a ready task there (and answer
/// within the declared tolerance): zero looks once, and the task is ready now.
async fn taken_now(
    q: &dyn TaskQueue,
    name: &str,
    late: Duration,
    what: &str,
) -> Result<Reservation, String> {
    let start = Instant::now();
    let got = q
        .reserve(name, Duration::ZERO)
        .await
        .map_err(|e| format!("{what}: a reserve with a zero wait failed: {e}"))?;
    let elapsed = start.elapsed();
    let Some(r) = got else {
        return Err(format!(
            "{what}: a reserve with a zero wait answered None (zero looks once, and a ready task \
             was there)"
        ));
    };
    ensure!(
        elapsed <= late,
        "{what}: a reserve with a zero wait took {elapsed:?}: more than the declared tolerance \
         ({late:?})"
    );
    Ok(r)
}

pub(super) async fn zero_durations_mean_now<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let late = s.late();
    let name = queue_name(&i.request, "zero");
    let id = put(q, &name, Bytes::from_static(b"now")).await?;
    let first = taken_now(q, &name, late, "a queue holding a ready task").await?;
    ensure!(
        first.task.id == id && first.task.attempts == 1,
        "a reserve with a zero wait delivered task {:?} (attempts {}), expected {id:?} on its \
         first attempt",
        first.task.id,
        first.task.attempts
    );
    call!(
        "nack with a zero retry_after",
        q.nack(&first, Some(Duration::ZERO))
    );
    let how = "right after a nack with a zero retry_after (retry at once)";
    let again = taken_now(q, &name, late, how).await?;
    ensure_redelivery(&first, &again, 2, how)?;
    call!("ack", q.ack(&again));
    let zero = EnqueueOptions::default().with_delay(Duration::ZERO);
    if !i.declares(DELAY) {
        expect_unsupported(
            "enqueue with a zero delay",
            &q.enqueue(&name, Bytes::from_static(b"not delayed"), zero)
                .await,
        )?;
        return expect_none(
            q,
            &name,
            Duration::ZERO,
            "an enqueue that answered Unsupported must not enqueue the task",
        )
        .await;
    }
    let id = call!(
        "enqueue with a zero delay",
        q.enqueue(&name, Bytes::from_static(b"not delayed"), zero)
    );
    let what = "right after an enqueue with a zero delay (no delay)";
    let r = taken_now(q, &name, late, what).await?;
    ensure!(
        r.task.id == id && r.task.attempts == 1,
        "{what}: reserve delivered task {:?} (attempts {}), expected {id:?} on its first attempt",
        r.task.id,
        r.task.attempts
    );
    call!("ack", q.ack(&r));
    Ok(())
}
