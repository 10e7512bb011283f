//! Obligations on the retry limit and the dead letters.

use std::time::{Duration, Instant};

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{DEAD_LETTER, Task, TaskQueue};

use super::TaskQueueSettings;
use super::support::{DAYS_400, SLACK, expect_none, ids, patience, put, queue_name, take};
use crate::harness::Instance;
use crate::{KitRequest, call, ensure, expect_unsupported};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

/// Deliver the only task of `name` `max_attempts` times, ending each delivery by nack or by
/// letting it time out; returns its id. `last_retry`: the `retry_after` of the last nack.
pub(super) async fn exhaust(
    q: &dyn TaskQueue,
    name: &str,
    payload: &'static [u8],
    request: &KitRequest,
    (by_timeout, last_retry): (bool, Option<Duration>),
) -> Result<String, String> {
    let (vt, max) = (request.visibility_timeout, request.max_attempts);
    let id = put(q, name, Bytes::from_static(payload)).await?;
    let how = if by_timeout { "timeout" } else { "nack" };
    for attempt in 1..=max {
        let wait = if by_timeout && attempt > 1 {
            patience(vt)
        } else {
            SLACK
        };
        let r = take(
            q,
            name,
            wait,
            &format!("delivery {attempt} of {max} (max_attempts), each ended by {how}"),
        )
        .await?;
        ensure!(
            r.task.id == id,
            "reserve delivered task {:?}, expected {id:?}",
            r.task.id
        );
        ensure!(
            r.task.attempts == attempt,
            "delivery {attempt} has attempts {}",
            r.task.attempts
        );
        if !by_timeout {
            let retry_after = if attempt == max { last_retry } else { None };
            call!(
                format!("nack of delivery {attempt} of {max}, retry_after {retry_after:?}"),
                q.nack(&r, retry_after)
            );
        }
    }
    Ok(id)
}

pub(super) async fn retry_limit_stops_redelivery<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let (vt, max) = (i.request.visibility_timeout, i.request.max_attempts);
    let by_nack = queue_name(&i.request, "limit-nack");
    let by_timeout = queue_name(&i.request, "limit-timeout");
    let nacked = async {
        exhaust(q, &by_nack, b"nacked", &i.request, (false, None)).await?;
        expect_none(
            q,
            &by_nack,
            vt + vt / 2,
            &format!(
                "after {max} deliveries (max_attempts) a further nack must not redeliver the task"
            ),
        )
        .await
    };
    let timed_out = async {
        exhaust(q, &by_timeout, b"timed out", &i.request, (true, None)).await?;
        expect_none(
            q,
            &by_timeout,
            vt * 2,
            &format!("after {max} deliveries (max_attempts) a further visibility timeout must not redeliver the task"),
        )
        .await
    };
    futures_util::future::try_join(nacked, timed_out).await?;
    Ok(())
}

pub(super) async fn dead_letters_list_exhausted_tasks_oldest_first<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "dead");
    if !i.declares(DEAD_LETTER) {
        return expect_unsupported("dead_letters", &q.dead_letters(&name, 10).await);
    }
    let none = call!("dead_letters of a fresh queue", q.dead_letters(&name, 10));
    ensure!(
        none.is_empty(),
        "dead_letters of a fresh queue listed {:?}",
        ids(&none)
    );
    let timed_out = queue_name(&i.request, "dead-timeout");
    let postponed = queue_name(&i.request, "dead-postponed");
    futures_util::future::try_join3(
        dead_letters_by_nack(q, &name, &i.request),
        dead_letters_by_timeout(q, &timed_out, &i.request),
        dead_letters_despite_a_retry_after(q, &postponed, &i.request),
    )
    .await?;
    let zero = call!("dead_letters with limit 0", q.dead_letters(&name, 0));
    ensure!(
        zero.is_empty(),
        "dead_letters with limit 0 listed {:?}: a limit of 0 asks for none",
        ids(&zero)
    );
    // Queues with no exhausted task, among them names near-identical to one with some.
    for other in [
        queue_name(&i.request, "dead-other"),
        queue_name(&i.request, "DEAD"),
        format!("{name} "),
        queue_name(&i.request, "dead-timeout-b"),
    ] {
        let listed = call!(
            format!("dead_letters of {other:?}"),
            q.dead_letters(&other, 10)
        );
        ensure!(
            listed.is_empty(),
            "dead_letters of {other:?}, a queue without exhausted tasks, listed {:?}: dead \
             letters are per queue, and near-identical names are other queues",
            ids(&listed)
        );
    }
    Ok(())
}

fn ensure_dead(task: &Task, id: &str, queue: &str, payload: &[u8], max: u32) -> Result<(), String> {
    ensure!(
        task.id == id && task.queue == queue && task.payload == payload,
        "dead letter {:?} of queue {:?} does not match the exhausted task {id:?} of {queue:?} (or its payload changed)",
        task.id,
        task.queue
    );
    ensure!(
        task.attempts == max,
        "dead letter {id:?} has attempts {}, expected {max} (max_attempts)",
        task.attempts
    );
    Ok(())
}

async fn dead_letters_by_nack(
    q: &dyn TaskQueue,
    name: &str,
    request: &KitRequest,
) -> Result<(), String> {
    let max = request.max_attempts;
    let first = exhaust(q, name, b"first", request, (false, None)).await?;
    let second = exhaust(q, name, b"second", request, (false, None)).await?;
    let dead = call!("dead_letters", q.dead_letters(name, 10));
    ensure!(
        ids(&dead) == [first.as_str(), second.as_str()],
        "dead_letters listed {:?}, expected the exhausted tasks oldest first: {:?}",
        ids(&dead),
        [&first, &second]
    );
    ensure_dead(&dead[0], &first, name, b"first", max)?;
    ensure_dead(&dead[1], &second, name, b"second", max)?;
    let limited = call!("dead_letters with limit 1", q.dead_letters(name, 1));
    ensure!(
        ids(&limited) == [first.as_str()],
        "dead_letters with limit 1 listed {:?}, expected the oldest, {first:?}",
        ids(&limited)
    );
    Ok(())
}

/// The last allowed delivery nacked with a `retry_after` of 400 days: no retry is left, so the
/// task is a dead letter now, not in 400 days.
async fn dead_letters_despite_a_retry_after(
    q: &dyn TaskQueue,
    name: &str,
    request: &KitRequest,
) -> Result<(), String> {
    let id = exhaust(q, name, b"postponed", request, (false, Some(DAYS_400))).await?;
    await_dead_letter(
        q,
        (name, &id, b"postponed"),
        request.max_attempts,
        "a task whose last allowed delivery was nacked with a retry_after of 400 days (with no \
         retry left, a nack dead-letters it whatever its retry_after)",
    )
    .await
}

/// Wait up to [`SLACK`] for task `id` (with `payload`) to be the one dead letter of `name`
/// (a driver may move it on a background sweep). `what`: the task, for the failure.
async fn await_dead_letter(
    q: &dyn TaskQueue,
    (name, id, payload): (&str, &str, &[u8]),
    max_attempts: u32,
    what: &str,
) -> Result<(), String> {
    let deadline = Instant::now() + SLACK;
    loop {
        let dead = call!("dead_letters", q.dead_letters(name, 10));
        if !dead.is_empty() {
            ensure!(
                ids(&dead) == [id],
                "dead_letters listed {:?}, expected only {what}, {id:?}",
                ids(&dead)
            );
            return ensure_dead(&dead[0], id, name, payload, max_attempts);
        }
        ensure!(
            Instant::now() < deadline,
            "{what} is not in dead_letters {SLACK:?} later"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn dead_letters_by_timeout(
    q: &dyn TaskQueue,
    name: &str,
    request: &KitRequest,
) -> Result<(), String> {
    let vt = request.visibility_timeout;
    let id = exhaust(q, name, b"abandoned", request, (true, None)).await?;
    expect_none(q, name, vt * 2, "an exhausted task must not be redelivered").await?;
    await_dead_letter(
        q,
        (name, &id, b"abandoned"),
        request.max_attempts,
        "a task whose last delivery timed out",
    )
    .await
}
