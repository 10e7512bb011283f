//! The obligations of feature `dedupe`: idempotency keys. Declared, the contract of
//! [`DEDUPE`] is exercised: one task per key and queue, whatever the payload, under
//! concurrency, after ack and as a dead letter, with the key rules. Undeclared, an enqueue with a
//! key must answer `Unsupported` from the driver itself (as `delay` is checked) and from the gate
//! modules call, and enqueue nothing.

use std::collections::HashSet;
use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{
    DEAD_LETTER, DEDUPE, DELAY, EnqueueOptions, IDEMPOTENCY_KEY_MAX_LEN, TaskQueue,
};

use super::TaskQueueSettings;
use super::support::{SLACK, expect_none, put, queue_name, take};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};
use sandloom_driverkit::taskqueue::{TaskQueueCapability, TaskQueueProvider};

/// How the kit names the operation in its messages.
const OPERATION: &str = "enqueue with an idempotency key";

fn once(key: &str) -> EnqueueOptions {
    EnqueueOptions::default().with_idempotency_key(key)
}

/// Enqueue `payload` to `queue` with `key`; it must succeed.
async fn put_once(
    q: &dyn TaskQueue,
    queue: &str,
    key: &str,
    payload: &'static [u8],
) -> Result<String, String> {
    q.enqueue(queue, Bytes::from_static(payload), once(key))
        .await
        .map_err(|e| format!("enqueue to {queue:?} with the key {key:?} failed: {e}"))
}

/// Reserve and ack every task `queue` delivers within a short wait: their ids.
async fn drain(q: &dyn TaskQueue, queue: &str, wait: Duration) -> Result<Vec<String>, String> {
    let mut ids = Vec::new();
    while let Some(r) = call!(format!("reserve from {queue:?}"), q.reserve(queue, wait)) {
        call!("ack", q.ack(&r));
        ids.push(r.task.id);
    }
    Ok(ids)
}

/// Without the feature: the driver and the gate refuse a key, and (when `check_queue`) nothing
/// was enqueued.
async fn undeclared<T: TaskQueueProvider>(
    i: &Instance<T>,
    queue: &str,
    check_queue: bool,
) -> Result<(), String> {
    let payload = Bytes::from_static(b"once");
    expect_unsupported(
        OPERATION,
        &i.driver
            .enqueue(queue, payload.clone(), once("undeclared"))
            .await,
    )?;
    let served = i.served::<TaskQueueCapability>();
    expect_unsupported(
        &format!("{OPERATION} (through the gate)"),
        &served.enqueue(queue, payload, once("undeclared")).await,
    )?;
    if !check_queue {
        return Ok(());
    }
    let vt = i.request.visibility_timeout;
    expect_none(
        &*i.driver,
        queue,
        vt / 4,
        "an enqueue with a key that answered Unsupported must not enqueue the task",
    )
    .await
}

pub(super) async fn dedupe_returns_the_first_id_and_creates_nothing<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "once");
    if !i.declares(DEDUPE) {
        return undeclared(i, &name, true).await;
    }
    let first = put_once(q, &name, "invoice-7", b"first").await?;
    ensure!(!first.is_empty(), "enqueue returned an empty id");
    // The key identifies the task: another payload (and delay) changes nothing.
    let mut other = once("invoice-7");
    if i.declares(DELAY) {
        other = other.with_delay(Duration::from_millis(100));
    }
    let again = call!(
        "a second enqueue with the same key",
        q.enqueue(&name, Bytes::from_static(b"second"), other)
    );
    ensure!(
        again == first,
        "a second enqueue with the same key returned id {again:?}, not the first task's id {first:?}"
    );
    let r = take(
        q,
        &name,
        SLACK,
        "reserve of a task enqueued twice with one key",
    )
    .await?;
    ensure!(
        r.task.id == first && r.task.payload == "first",
        "reserve delivered task {:?} with payload {:?}, expected the first task {first:?} with payload \"first\"",
        r.task.id,
        r.task.payload
    );
    // Reserved, then nacked: the task is still in the queue, and the key still names it.
    let reserved = put_once(q, &name, "invoice-7", b"third").await?;
    ensure!(
        reserved == first,
        "an enqueue with the key of a reserved task returned id {reserved:?}, not {first:?}"
    );
    expect_none(
        q,
        &name,
        vt / 4,
        "enqueues with the key of a task in the queue must create no other task",
    )
    .await?;
    call!("nack", q.nack(&r, None));
    let nacked = put_once(q, &name, "invoice-7", b"fourth").await?;
    ensure!(
        nacked == first,
        "an enqueue with the key of a nacked task returned id {nacked:?}, not {first:?}"
    );
    let again = take(q, &name, SLACK, "reserve after a nack").await?;
    ensure!(
        again.task.id == first && again.task.attempts == 2 && again.task.payload == "first",
        "after a nack, reserve delivered task {:?} (attempts {}), expected {first:?} again (attempts 2) with its first payload",
        again.task.id,
        again.task.attempts
    );
    call!("ack", q.ack(&again));
    expect_none(
        q,
        &name,
        vt / 4,
        "four enqueues with one key must have created one task",
    )
    .await
}

pub(super) async fn dedupe_is_per_queue_and_per_key<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let first = queue_name(&i.request, "keys");
    let second = queue_name(&i.request, "keys-b");
    if !i.declares(DEDUPE) {
        return undeclared(i, &first, false).await;
    }
    let a = put_once(q, &first, "invoice-1", b"a").await?;
    let b = put_once(q, &second, "invoice-1", b"b").await?;
    ensure!(
        a != b,
        "the same key in two queues returned the same id {a:?}: keys are per queue"
    );
    // Keys that share a prefix, or differ only in case, by a trailing space or dot, as a
    // percent-encoding (`%31` is `1`) or as NFC and NFD, are different keys.
    let mut ids = vec![a.clone()];
    for key in [
        "invoice-10",
        "Invoice-1",
        "invoice-",
        "invoice-1 ",
        "invoice-1.",
        "invoice-%31",
        "invoice-\u{e9}",
        "invoice-e\u{301}",
    ] {
        let id = put_once(q, &first, key, b"other key").await?;
        ensure!(
            !ids.contains(&id),
            "the key {key:?} returned id {id:?}, already returned for another key"
        );
        ids.push(id);
    }
    let keyless = put(q, &first, Bytes::from_static(b"no key")).await?;
    ensure!(
        !ids.contains(&keyless),
        "an enqueue without a key returned id {keyless:?}, already returned for a key"
    );
    ids.push(keyless);
    let mut delivered = drain(q, &first, vt / 4).await?;
    delivered.sort();
    ids.sort();
    ensure!(
        delivered == ids,
        "queue {first:?} delivered tasks {delivered:?}, expected one per key and one without: {ids:?}"
    );
    let delivered = drain(q, &second, vt / 4).await?;
    ensure!(
        delivered == [b.clone()],
        "queue {second:?} delivered tasks {delivered:?}, expected its own task {b:?}"
    );
    Ok(())
}

pub(super) async fn dedupe_holds_under_concurrent_enqueues<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 4;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "once-concurrent");
    if !i.declares(DEDUPE) {
        return undeclared(i, &name, false).await;
    }
    // 16 enqueues with one key at once: on several threads, several at a time on each.
    let mut spawned = Vec::new();
    for _ in 0..THREADS {
        let (q, name) = (i.shared(), name.clone());
        spawned.push(tokio::spawn(async move {
            let enqueues = (0..PER_THREAD).map(|n| {
                let (q, name) = (&q, &name);
                async move {
                    q.enqueue(name, Bytes::from(format!("try {n}")), once("only-once"))
                        .await
                        .map_err(|e| format!("a concurrent enqueue with one key failed: {e}"))
                }
            });
            futures_util::future::try_join_all(enqueues).await
        }));
    }
    let mut ids = HashSet::new();
    for enqueues in spawned {
        let returned = enqueues
            .await
            .map_err(|e| format!("an enqueuing task panicked: {e}"))??;
        ids.extend(returned);
    }
    ensure!(
        ids.len() == 1,
        "{} concurrent enqueues with one key returned {} different ids {ids:?}: they must all return the one task's id",
        THREADS * PER_THREAD,
        ids.len()
    );
    let delivered = drain(&*i.driver, &name, vt / 4).await?;
    ensure!(
        delivered.len() == 1 && ids.contains(&delivered[0]),
        "{} concurrent enqueues with one key created tasks {delivered:?}, expected exactly the one with id {ids:?}",
        THREADS * PER_THREAD
    );
    Ok(())
}

pub(super) async fn dedupe_remembers_the_key_after_ack_and_as_a_dead_letter<
    T: TaskQueueProvider,
>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let (vt, max) = (i.request.visibility_timeout, i.request.max_attempts);
    let name = queue_name(&i.request, "once-acked");
    if !i.declares(DEDUPE) {
        return undeclared(i, &name, false).await;
    }
    let done = put_once(q, &name, "welcome-1", b"done").await?;
    let r = take(q, &name, SLACK, "reserve of a task with a key").await?;
    call!("ack", q.ack(&r));
    // The kit runs well within any dedupe window (the default of the built-in drivers is a day).
    let again = put_once(q, &name, "welcome-1", b"done again").await?;
    ensure!(
        again == done,
        "an enqueue with the key of a task acked moments ago returned id {again:?}, not {done:?}: the key must be remembered for the dedupe window after ack"
    );
    expect_none(
        q,
        &name,
        vt / 4,
        "an enqueue with the key of an acked task (within the dedupe window) must create nothing",
    )
    .await?;
    if !i.declares(DEAD_LETTER) {
        return Ok(());
    }
    let dead_queue = queue_name(&i.request, "once-dead");
    let dead = put_once(q, &dead_queue, "welcome-2", b"failing").await?;
    for attempt in 1..=max {
        let r = take(
            q,
            &dead_queue,
            SLACK,
            &format!("delivery {attempt} of {max} (max_attempts)"),
        )
        .await?;
        call!("nack", q.nack(&r, None));
    }
    let letters = call!("dead_letters", q.dead_letters(&dead_queue, 10));
    ensure!(
        letters.iter().any(|task| task.id == dead),
        "a task with a key nacked {max} times is not in dead_letters"
    );
    let again = put_once(q, &dead_queue, "welcome-2", b"failing again").await?;
    ensure!(
        again == dead,
        "an enqueue with the key of a dead-lettered task returned id {again:?}, not {dead:?}"
    );
    expect_none(
        q,
        &dead_queue,
        vt / 4,
        "an enqueue with the key of a dead-lettered task must create nothing",
    )
    .await
}

pub(super) async fn dedupe_key_rules_are_invalid_input<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "once-rules");
    if !i.declares(DEDUPE) {
        return undeclared(i, &name, false).await;
    }
    let too_long = "k".repeat(IDEMPOTENCY_KEY_MAX_LEN + 1);
    for (what, key) in [
        ("an empty idempotency key", ""),
        ("an idempotency key of 256 bytes", too_long.as_str()),
        ("an idempotency key with a NUL character", "a\0b"),
    ] {
        expect_kind(
            &format!("enqueue with {what}"),
            ErrorKind::InvalidInput,
            &q.enqueue(&name, Bytes::from_static(b"refused"), once(key))
                .await,
        )?;
    }
    let longest = "k".repeat(IDEMPOTENCY_KEY_MAX_LEN);
    let mut valid = Vec::new();
    for key in [longest.as_str(), "clé-ключ-鍵", " ", "a/b?c=d&e#f%00"] {
        let first = call!(
            format!("enqueue with the valid key {key:?}"),
            q.enqueue(&name, Bytes::from_static(b"valid"), once(key))
        );
        let again = call!(
            format!("a second enqueue with the valid key {key:?}"),
            q.enqueue(&name, Bytes::from_static(b"valid"), once(key))
        );
        ensure!(
            again == first,
            "the key {key:?} returned {first:?}, then {again:?}"
        );
        valid.push(first);
    }
    let mut delivered = drain(q, &name, vt / 4).await?;
    delivered.sort();
    valid.sort();
    ensure!(
        delivered == valid,
        "the queue delivered tasks {delivered:?}, expected one per valid key ({valid:?}) and none for the refused ones"
    );
    Ok(())
}

pub(super) async fn dedupe_forgets_the_key_after_its_window<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "window");
    if !i.declares(DEDUPE) {
        return undeclared(i, &name, false).await;
    }
    let Some(window) = s.dedupe_window() else {
        return Ok(()); // The window is the driver's: nothing to hold it to.
    };
    let waiting = queue_name(&i.request, "window-waiting");
    let stays = put_once(q, &waiting, "window-stays", b"stays").await?;
    let first = put_once(q, &name, "window-key", b"first").await?;
    let r = take(q, &name, SLACK, "reserve of a task with a key").await?;
    call!("ack", q.ack(&r));
    let acked = tokio::time::Instant::now();
    tokio::time::sleep_until(acked + window + s.late()).await;
    let second = put_once(q, &name, "window-key", b"second").await?;
    ensure!(
        second != first,
        "an enqueue with the key of a task acked {:?} ago, past the declared dedupe window of \
         {window:?} and the tolerance, returned the first id {first:?}: once the window has \
         passed the key is free again",
        acked.elapsed()
    );
    let r = take(q, &name, SLACK, "reserve of the task the freed key created").await?;
    ensure!(
        r.task.id == second && r.task.payload == "second",
        "the freed key's enqueue answered id {second:?}, but reserve delivered {:?} ({:?})",
        r.task.id,
        r.task.payload
    );
    call!("ack", q.ack(&r));
    let again = put_once(q, &waiting, "window-stays", b"stays again").await?;
    ensure!(
        again == stays,
        "an enqueue with the key of a task still in the queue, enqueued longer ago than the \
         dedupe window, returned id {again:?}, not {stays:?}: the window counts from the task \
         leaving the queue"
    );
    Ok(())
}
