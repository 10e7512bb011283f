//! Task queue obligations on the edges of its inputs and on what the contract promises will not
//! happen: queue names and payloads at and past the sizes every driver holds, and tasks and dead
//! letters that stay until they are taken.
//!
//! Each input of the contract, by partition, and the obligation that holds a driver to it:
//!
//! | input | empty | one | typical | at the limit | past the limit | look-alike forms |
//! |---|---|---|---|---|---|---|
//! | queue name | `empty_queue_name_is_invalid_input` | `queue_names_and_payloads_at_and_past_their_limits` | every obligation | `queue_names_and_payloads_at_and_past_their_limits` (128 bytes, ASCII and 2-byte letters) | the same (one character more: its own queue or `InvalidInput` from every operation) | `queues_are_isolated` (case, trailing space and dot, `%6F`, suffix, NFC/NFD); `dead_letters_list_exhausted_tasks_oldest_first`; NUL: `queue_names_and_payloads_at_and_past_their_limits` (its own queue or `InvalidInput`) |
//! | payload | `payloads_round_trip_exactly` | `queue_names_and_payloads_at_and_past_their_limits` | `payloads_round_trip_exactly` (64 KiB) | `queue_names_and_payloads_at_and_past_their_limits` (1 MiB) | the same (1 MiB + 1: whole or `InvalidInput`) | `payloads_round_trip_exactly` (NUL, every byte) |
//! | wait of `reserve` | `zero_durations_mean_now`, `reserve_on_an_empty_queue_waits_then_answers_none` | `reserve_waits_exactly_as_long_as_asked` (1 µs) | the same (300 ms, 1.5 s) | `extreme_durations_are_accepted_and_held` (100 years) | no limit: held as long as the driver can | none apply |
//! | delay, `retry_after` | `zero_durations_mean_now` | `delays_and_retries_below_and_between_seconds_are_exact` (1 µs) | `delay_is_respected`, `nack_retry_after_postpones_redelivery` | `extreme_durations_are_accepted_and_held` (100 years) | no limit | none apply |
//! | no delay | — | — | `tasks_and_dead_letters_stay_until_taken` (ready at once and still there after the window) | — | — | — |
//! | a long delay or `retry_after` | — | — | — | `tasks_and_dead_letters_stay_until_taken` (400 days: still not due after the window) | — | — |
//! | idempotency key | `dedupe_key_rules_are_invalid_input` | `dedupe_is_per_queue_and_per_key` | `dedupe_returns_the_first_id_and_creates_nothing` | `dedupe_key_rules_are_invalid_input` (255 bytes) | the same (256 bytes: `InvalidInput`) | `dedupe_is_per_queue_and_per_key` (case, prefix); NUL: `dedupe_key_rules_are_invalid_input` |
//! | `limit` of `dead_letters` | `dead_letters_list_exhausted_tasks_oldest_first` (0) | the same | the same | no limit | — | none apply |
//! | receipt | — | — | every obligation | — | — | stale, spent, nacked: `stale_receipt_is_conflict_and_changes_nothing`, `a_second_ack_is_conflict_and_changes_nothing`, `a_nacked_receipt_is_spent_at_once` |

use std::time::Duration;

use sandloom_driverkit::taskqueue::TaskQueueProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{DEAD_LETTER, DELAY, EnqueueOptions, TaskQueue};

use super::TaskQueueSettings;
use super::dead_letter::exhaust;
use super::support::{DAYS_400, SLACK, expect_none, put, queue_name, take};
use crate::harness::Instance;
use crate::{call, ensure};

/// The longest queue name every driver holds, in bytes (the contract's limit).
const QUEUE_NAME_LIMIT: usize = 128;
/// The largest payload every driver holds, in bytes (the contract's limit).
const PAYLOAD_LIMIT: usize = 1024 * 1024;

/// `prefix` filled up to exactly `bytes` bytes with `unit`, after as many `x` as it takes to
/// make the rest a whole number of `unit`s (so the name ends in `unit`).
fn filled(prefix: &str, unit: &str, bytes: usize) -> String {
    let room = bytes - prefix.len();
    let pad = "x".repeat(room % unit.len());
    format!("{prefix}{pad}{}", unit.repeat(room / unit.len()))
}

/// A short description of a long queue name, for messages.
fn shown(name: &str) -> String {
    let head: String = name.chars().take(16).collect();
    format!("{head:?}… ({} bytes)", name.len())
}

/// Reserve the one task of `queue`, which must be `id` with `payload`, and ack it.
async fn take_exactly(
    q: &dyn TaskQueue,
    queue: &str,
    id: &str,
    payload: &Bytes,
    why: &str,
) -> Result<(), String> {
    let got = take(q, queue, SLACK, &format!("reserve from {}", shown(queue))).await?;
    ensure!(
        got.task.id == id && got.task.queue == queue && got.task.payload == *payload,
        "reserve from {} delivered task {:?} of {} with {} bytes, expected {id:?} with {} \
         bytes: {why}",
        shown(queue),
        got.task.id,
        shown(&got.task.queue),
        got.task.payload.len(),
        payload.len()
    );
    call!("ack", q.ack(&got));
    Ok(())
}

pub(super) async fn queue_names_and_payloads_at_and_past_their_limits<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    // A queue named by one byte, and a payload of one.
    let one = Bytes::from_static(b"1");
    let id = put(q, "q", one.clone()).await?;
    take_exactly(
        q,
        "q",
        &id,
        &one,
        "a one-byte queue name is a queue like any other",
    )
    .await?;
    // Queues named at the limit, in ASCII and in 2-byte letters, beside their own prefixes one
    // character shorter: each its own queue. Filled last-made first, taken in order.
    let base = queue_name(&i.request, "lim-");
    let ascii = filled(&base, "q", QUEUE_NAME_LIMIT);
    let letters = filled(&base, "é", QUEUE_NAME_LIMIT);
    let names = [
        ascii.clone(),
        letters.clone(),
        ascii[..ascii.len() - 1].to_owned(),
        letters[..letters.len() - "é".len()].to_owned(),
    ];
    let mut tasks = Vec::new();
    for (n, name) in names.iter().enumerate().rev() {
        let payload = Bytes::from(format!("at-{n}"));
        tasks.push((name, put(q, name, payload.clone()).await?, payload));
    }
    let why = format!(
        "every driver holds queue names of up to {QUEUE_NAME_LIMIT} bytes, each its own queue"
    );
    for (name, id, payload) in tasks.iter().rev() {
        take_exactly(q, name, id, payload, &why).await?;
    }
    // Past the limit: its own queue, or `InvalidInput` from `enqueue` and `reserve` alike;
    // never the queue at the limit it starts with.
    for (at_limit, unit) in [(&ascii, "q"), (&letters, "é")] {
        own_queue_or_refused(q, at_limit, &format!("{at_limit}{unit}"), vt).await?;
    }
    // A NUL character: the same, never cut at the NUL onto the (empty) queue before it.
    let before = queue_name(&i.request, "nul");
    own_queue_or_refused(q, &before, &format!("{before}\0after"), vt).await?;
    payloads_at_and_past_the_limit(q, &queue_name(&i.request, "payload"), vt).await
}

/// A queue named `name` (past the limit, or holding a NUL) is a queue of its own (not
/// `at_limit`, the empty queue named by what comes before) or refused with `InvalidInput` by
/// `enqueue` and `reserve` alike.
async fn own_queue_or_refused(
    q: &dyn TaskQueue,
    at_limit: &str,
    name: &str,
    vt: Duration,
) -> Result<(), String> {
    let payload = Bytes::from_static(b"past");
    match q
        .enqueue(name, payload.clone(), EnqueueOptions::default())
        .await
    {
        Ok(id) => {
            expect_none(
                q,
                at_limit,
                vt / 4,
                &format!(
                    "nothing was enqueued to {} since its task was taken: a task enqueued to \
                     a name that only starts with it must stay in a queue of its own",
                    shown(at_limit)
                ),
            )
            .await?;
            take_exactly(q, name, &id, &payload, "a name is held whole, never cut").await
        }
        Err(error) if error.kind() == ErrorKind::InvalidInput => {
            let reserved = q.reserve(name, Duration::ZERO).await;
            ensure!(
                reserved
                    .as_ref()
                    .is_err_and(|e| e.kind() == ErrorKind::InvalidInput),
                "enqueue to {} answered InvalidInput, but reserve from it answered {:?}: \
                 every operation checks a queue name the same way",
                shown(name),
                reserved.map(|r| r.map(|r| r.task.id))
            );
            Ok(())
        }
        Err(error) => Err(format!(
            "enqueue to {} failed with {}: a driver holds a queue name or \
             refuses it with InvalidInput: {error}",
            shown(name),
            error.kind()
        )),
    }
}

/// Payloads: at the limit, exact; one byte past it, whole or refused with nothing enqueued.
async fn payloads_at_and_past_the_limit(
    q: &dyn TaskQueue,
    queue: &str,
    vt: Duration,
) -> Result<(), String> {
    let at: Bytes = (0..PAYLOAD_LIMIT)
        .map(|n| (n % 251) as u8)
        .collect::<Vec<u8>>()
        .into();
    let id = put(q, queue, at.clone()).await?;
    take_exactly(
        q,
        queue,
        &id,
        &at,
        "every driver holds payloads of up to 1 MiB, exactly",
    )
    .await?;
    let past: Bytes = (0..=PAYLOAD_LIMIT)
        .map(|n| (n % 253) as u8)
        .collect::<Vec<u8>>()
        .into();
    match q
        .enqueue(queue, past.clone(), EnqueueOptions::default())
        .await
    {
        Ok(id) => {
            take_exactly(
                q,
                queue,
                &id,
                &past,
                "past the limit a payload is held whole, never cut",
            )
            .await
        }
        Err(error) if error.kind() == ErrorKind::InvalidInput => {
            expect_none(q, queue, vt / 4, "a refused enqueue enqueues nothing").await
        }
        Err(error) => Err(format!(
            "enqueue of {} bytes failed with {}: past the limit a driver holds a payload or \
             refuses it with InvalidInput: {error}",
            PAYLOAD_LIMIT + 1,
            error.kind()
        )),
    }
}

/// How long `tasks_and_dead_letters_stay_until_taken` leaves its task and dead letter alone:
/// longer than every delay, `retry_after` and visibility timeout the kit uses elsewhere (1.5 s
/// at most) plus half as much again, so that a silent message ttl which would pass them all
/// (2 s, say) ends within it. The declared tolerance is added on top.
const WINDOW: Duration = Duration::from_secs(3);

pub(super) async fn tasks_and_dead_letters_stay_until_taken<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let started = tokio::time::Instant::now();
    let queue = queue_name(&i.request, "stay");
    let payload = Bytes::from_static(b"stays");
    let id = put(q, &queue, payload.clone()).await?;
    // Postponed for 400 days, by a `retry_after` (and a delay, where declared): still not due
    // at the end of the window (no silent cap on how long a task can wait).
    let later = queue_name(&i.request, "stay-later");
    if i.declares(DELAY) {
        call!(
            "enqueue with a delay of 400 days",
            q.enqueue(
                &later,
                Bytes::from_static(b"delayed"),
                EnqueueOptions::default().with_delay(DAYS_400)
            )
        );
    }
    put(q, &later, Bytes::from_static(b"nacked")).await?;
    let nacked = take(q, &later, SLACK, "reserve of a task to nack for 400 days").await?;
    call!(
        "nack with a retry_after of 400 days",
        q.nack(&nacked, Some(DAYS_400))
    );
    let dead = queue_name(&i.request, "stay-dead");
    let buried = if i.declares(DEAD_LETTER) {
        let id = exhaust(q, &dead, b"buried", &i.request, (false, None)).await?;
        let listed = call!("dead_letters", q.dead_letters(&dead, 10));
        ensure!(
            listed.iter().any(|task| task.id == id),
            "a task nacked on its last allowed delivery is not listed as a dead letter"
        );
        Some(id)
    } else {
        None
    };
    tokio::time::sleep_until(started + WINDOW + s.late()).await;
    let got = match q.reserve(&queue, Duration::ZERO).await {
        Ok(Some(got)) => got,
        Ok(None) => {
            return Err(format!(
                "a task enqueued with no delay {:?} ago, and never reserved, was gone: a task \
                 stays in its queue until it is acked (a message ttl applied without asking?)",
                started.elapsed()
            ));
        }
        Err(error) => return Err(format!("reserve after the wait failed: {error}")),
    };
    ensure!(
        got.task.id == id && got.task.payload == payload && got.task.attempts == 1,
        "a reserve {:?} after the only enqueue delivered task {:?} (attempts {}), expected \
         {id:?} on its first attempt",
        started.elapsed(),
        got.task.id,
        got.task.attempts
    );
    call!("ack", q.ack(&got));
    expect_none(
        q,
        &later,
        Duration::ZERO,
        &format!(
            "tasks delayed or nacked for 400 days are not due {:?} later (a cap on \
             postponements applied without asking?)",
            started.elapsed()
        ),
    )
    .await?;
    if let Some(id) = buried {
        let listed = call!("dead_letters after the wait", q.dead_letters(&dead, 10));
        ensure!(
            listed.iter().any(|task| task.id == id),
            "a dead letter was no longer listed {:?} after the task was enqueued: dead letters \
             stay until the operator takes them",
            started.elapsed()
        );
    }
    Ok(())
}
