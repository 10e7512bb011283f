//! The `taskqueue` kit: [`TaskQueueConformance`].
//!
//! The kit asks for a short visibility timeout and a small retry limit through the
//! [`KitRequest`] (`visibility_timeout`, `max_attempts`) and relies on the driver honouring
//! both. Every queue it uses is named after `request.namespace`, so drivers on a shared server
//! never see another obligation's tasks. The `dedupe` obligations assume the instance's dedupe
//! window (how long the key of an acked task is remembered) is longer than an obligation takes:
//! run them with the driver's default window, not with 0.
//!
//! Timing is checked as behaviour, not speed: "not before" bounds are measured from before the
//! call that started the clock (less a small clock tolerance), "within" bounds carry generous
//! slack.
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`taskqueue_conformance!`](crate::taskqueue_conformance)
//! instead.
//!
//! ```
//! use sandloom_driverkit::conformance::taskqueue::TaskQueueConformance;
//! # use std::time::Duration;
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
//! # #[derive(Debug, serde::Deserialize)]
//! # #[serde(deny_unknown_fields)]
//! # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
//! # /// Delivers nothing: a stand-in for a driver under test.
//! # pub struct DrainQueue;
//! # fn named(queue: &str) -> InfraResult<()> {
//! #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
//! # }
//! # #[async_trait]
//! # impl TaskQueue for DrainQueue {
//! #     async fn enqueue(&self, queue: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> {
//! #         named(queue).map(|()| "1".to_owned())
//! #     }
//! #     async fn reserve(&self, queue: &str, _: Duration) -> InfraResult<Option<Reservation>> {
//! #         named(queue).map(|()| None)
//! #     }
//! #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { Ok(()) }
//! #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { Ok(()) }
//! # }
//! # impl Driver for DrainQueue {
//! #     type Options = DrainOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: DrainOptions) -> Result<Self, DriverError> { Ok(DrainQueue) }
//! # }
//! # impl TaskQueueProvider for DrainQueue {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//!
//! // `DrainQueue` (hidden) checks queue names, accepts every task and delivers none.
//! let kit = TaskQueueConformance::<DrainQueue>::new(|request| DrainOptions {
//!     visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
//!     max_attempts: request.max_attempts,
//! });
//! assert!(kit.check("empty_queue_name_is_invalid_input").is_ok());
//! let failure = kit.check("enqueue_reserve_ack_round_trips").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{
    DEAD_LETTER, DELAY, EnqueueOptions, FIFO, Reservation, Task, TaskQueue,
};

use super::harness::{Instance, Kit};
use super::{KitRequest, call, ensure, expect_kind, expect_unsupported};
use crate::taskqueue::TaskQueueProvider;

mod dedupe;

use dedupe::{
    dedupe_holds_under_concurrent_enqueues, dedupe_is_per_queue_and_per_key,
    dedupe_key_rules_are_invalid_input, dedupe_remembers_the_key_after_ack_and_as_a_dead_letter,
    dedupe_returns_the_first_id_and_creates_nothing,
};

/// The conformance kit of the `taskqueue` contract. See [`OBLIGATIONS`] for what it holds a
/// driver to; run it with [`taskqueue_conformance!`](crate::taskqueue_conformance).
///
/// The closure must honour the request's `visibility_timeout` and `max_attempts`, and should
/// use its `namespace` when the driver shares a server.
///
/// ```
/// # use sandloom_driverkit::conformance::taskqueue::TaskQueueConformance;
/// # fn kit<T: sandloom_driverkit::taskqueue::TaskQueueProvider>(
/// #     options: impl Fn(std::time::Duration, u32) -> T::Options + Send + Sync + 'static,
/// # ) {
/// let kit = TaskQueueConformance::<T>::new(move |request| {
///     options(request.visibility_timeout, request.max_attempts)
/// });
/// for failure in kit.check_all() {
///     eprintln!("{failure}");
/// }
/// # }
/// ```
pub type TaskQueueConformance<T> = Kit<T, TaskQueueSettings>;

/// What the `taskqueue` kit's obligations are given besides the instance: nothing yet.
///
/// ```
/// use sandloom_driverkit::conformance::taskqueue::TaskQueueSettings;
/// // An obligation receives `&TaskQueueSettings`; a kit with tolerances to declare would keep them here.
/// let _settings = TaskQueueSettings::default();
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct TaskQueueSettings {}

impl<T: TaskQueueProvider> Kit<T, TaskQueueSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::taskqueue::TaskQueueConformance;
    /// use sandloom_driverkit::conformance::KitRequest;
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # #[derive(Debug, serde::Deserialize)]
    /// # #[serde(deny_unknown_fields)]
    /// # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
    /// # /// Delivers nothing: a stand-in for a driver under test.
    /// # pub struct DrainQueue;
    /// # fn named(queue: &str) -> InfraResult<()> {
    /// #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
    /// # }
    /// # #[async_trait]
    /// # impl TaskQueue for DrainQueue {
    /// #     async fn enqueue(&self, queue: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> {
    /// #         named(queue).map(|()| "1".to_owned())
    /// #     }
    /// #     async fn reserve(&self, queue: &str, _: Duration) -> InfraResult<Option<Reservation>> {
    /// #         named(queue).map(|()| None)
    /// #     }
    /// #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { Ok(()) }
    /// #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { Ok(()) }
    /// # }
    /// # impl Driver for DrainQueue {
    /// #     type Options = DrainOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: DrainOptions) -> Result<Self, DriverError> { Ok(DrainQueue) }
    /// # }
    /// # impl TaskQueueProvider for DrainQueue {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = TaskQueueConformance::<DrainQueue>::new(|request: &KitRequest| {
    ///     // Called once per obligation, for a fresh instance with its own scratch space.
    ///     assert!(request.scratch_dir.is_dir());
    ///     assert!(!request.namespace.is_empty());
    ///     DrainOptions {
    ///         visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
    ///         max_attempts: request.max_attempts,
    ///     }
    /// });
    /// assert!(kit.check("empty_queue_name_is_invalid_input").is_ok());
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<crate::taskqueue::TaskQueueCapability>(
            obligations::<T>(),
            options,
            TaskQueueSettings::default(),
        )
    }
}

crate::define_kit! {
    /// Run the whole `taskqueue` kit from a driver crate's tests: one `#[test]` per obligation, in a
    /// module `taskqueue_conformance`.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] turn on the
    /// // `conformance` feature of sandloom-driverkit.
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # #[derive(Debug, serde::Deserialize)]
    /// # #[serde(deny_unknown_fields)]
    /// # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
    /// # /// Delivers nothing: a stand-in for a driver under test.
    /// # pub struct DrainQueue;
    /// # fn named(queue: &str) -> InfraResult<()> {
    /// #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
    /// # }
    /// # #[async_trait]
    /// # impl TaskQueue for DrainQueue {
    /// #     async fn enqueue(&self, queue: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> {
    /// #         named(queue).map(|()| "1".to_owned())
    /// #     }
    /// #     async fn reserve(&self, queue: &str, _: Duration) -> InfraResult<Option<Reservation>> {
    /// #         named(queue).map(|()| None)
    /// #     }
    /// #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { Ok(()) }
    /// #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { Ok(()) }
    /// # }
    /// # impl Driver for DrainQueue {
    /// #     type Options = DrainOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: DrainOptions) -> Result<Self, DriverError> { Ok(DrainQueue) }
    /// # }
    /// # impl TaskQueueProvider for DrainQueue {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    /// # pub type MyQueue = DrainQueue;
    ///
    /// sandloom_driverkit::taskqueue_conformance!(MyQueue, |request| DrainOptions {
    ///     visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
    ///     max_attempts: request.max_attempts,
    /// });
    /// # fn main() {}
    /// ```
    macro taskqueue_conformance;
    kit crate::conformance::taskqueue::TaskQueueConformance::new;
    provider TaskQueueProvider;
    settings TaskQueueSettings;
    /// Every obligation of the task queue contract, in the order the kit runs them.
    ///
    /// - `enqueue_reserve_ack_round_trips`: a reserved task carries the id `enqueue` returned, its
    ///   queue, its payload, `attempts == 1` and a receipt; after `ack` it is gone for good (`reserve`
    ///   waiting past the visibility timeout answers `None`).
    /// - `payloads_round_trip_exactly`: every byte value 0..=255, NUL bytes, an empty payload and a
    ///   payload of 64 KiB come back exactly.
    /// - `task_ids_are_unique`: 50 enqueues of the same payload give 50 distinct ids, and exactly those
    ///   50 tasks are delivered.
    /// - `reserve_on_an_empty_queue_waits_then_answers_none`: `reserve` of an empty queue answers
    ///   `None`, not before half of `wait` and within `wait` plus slack; a zero `wait` answers `None`
    ///   promptly.
    /// - `reserve_wakes_for_a_task_enqueued_while_waiting`: a `reserve` waiting 5 s delivers a task
    ///   enqueued 200 ms into its wait, well before the wait ends.
    /// - `reserved_task_is_invisible_to_other_consumers`: while a task is reserved, 8 other consumers
    ///   get nothing; 8 consumers racing for one task get it exactly once.
    /// - `nack_redelivers_with_a_new_receipt`: after `nack(None)` the task is delivered again with
    ///   `attempts == 2`, the same id and payload, and a new receipt.
    /// - `nack_retry_after_postpones_redelivery`: a task nacked with `retry_after` is not delivered
    ///   before it, and is delivered after it.
    /// - `unacked_task_is_redelivered_after_visibility_timeout`: a task neither acked nor nacked is
    ///   hidden for the visibility timeout, then delivered again with `attempts == 2` and a new
    ///   receipt.
    /// - `stale_receipt_is_conflict_and_changes_nothing`: once a receipt is stale (its visibility
    ///   timeout passed, even before any redelivery; or the task was redelivered after a timeout or a
    ///   nack), `ack` and `nack` with it answer `Conflict`, and the task stays with its current
    ///   delivery.
    /// - `delay_is_respected`: declared `delay`: a delayed task is not delivered before its delay (a
    ///   later undelayed task is), and is delivered after it; undeclared: an enqueue with a delay
    ///   answers `Unsupported` and enqueues nothing.
    /// - `retry_limit_stops_redelivery`: a task is delivered exactly `max_attempts` times (attempts 1,
    ///   2, …); a further nack, and separately a further visibility timeout, does not redeliver it.
    /// - `dead_letters_list_exhausted_tasks_oldest_first`: declared `dead_letter`: exhausted tasks (by
    ///   nack and by timeout) are listed per queue, oldest first, with their payload and attempts,
    ///   `limit` respected; undeclared: `dead_letters` answers `Unsupported`.
    /// - `concurrent_consumers_lose_nothing_and_never_share_a_task`: 200 tasks enqueued concurrently,
    ///   taken by 8 concurrent consumers: every task is acked exactly once, none is lost, and no task
    ///   is held by two consumers at once.
    /// - `fifo_order_where_declared`: declared `fifo`: ready tasks are reserved in enqueue order;
    ///   undeclared: every task is delivered once, in any order.
    /// - `dedupe_returns_the_first_id_and_creates_nothing`: declared `dedupe`: a second enqueue with
    ///   the same key (another payload, and a delay where declared) returns the first id, and so do
    ///   enqueues while the task is reserved and after it was nacked; one task is delivered, with the
    ///   first payload. Undeclared: an enqueue with a key answers `Unsupported`, from the driver and
    ///   from the gate, and enqueues nothing (each `dedupe_` obligation checks the refusal).
    /// - `dedupe_is_per_queue_and_per_key`: declared `dedupe`: the same key in another queue is
    ///   another task; keys sharing a prefix or differing in case are different keys; a keyless
    ///   enqueue is its own task.
    /// - `dedupe_holds_under_concurrent_enqueues`: declared `dedupe`: 16 enqueues with one key at
    ///   once, on several threads, all return one id, and exactly one task is delivered.
    /// - `dedupe_remembers_the_key_after_ack_and_as_a_dead_letter`: declared `dedupe`: an enqueue
    ///   with the key of a task acked moments ago (within the dedupe window) returns its id and
    ///   creates nothing; so does one with the key of a dead letter (where `dead_letter` is
    ///   declared).
    /// - `dedupe_key_rules_are_invalid_input`: declared `dedupe`: an empty key, a key of 256 bytes
    ///   and a key with a NUL character answer `InvalidInput` and enqueue nothing; a key of 255
    ///   bytes, non-ASCII, blank or punctuated keys work.
    /// - `queues_are_isolated`: a task is delivered only from its own queue (also when one name is a
    ///   prefix of another), and a consumer waiting on one queue is not handed another queue's
    ///   task.
    /// - `empty_queue_name_is_invalid_input`: `enqueue` and `reserve` of the queue `""` answer
    ///   `InvalidInput`.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `enqueue`, `reserve`, `ack`, `nack`
    ///   (and `dead_letters` when declared) answer `Stopped`.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::taskqueue::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 23);
    /// assert_eq!(OBLIGATIONS[0], "enqueue_reserve_ack_round_trips");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"operations_after_stop_fail_with_stopped"));
    /// ```
    obligations [
        enqueue_reserve_ack_round_trips,
        payloads_round_trip_exactly,
        task_ids_are_unique,
        reserve_on_an_empty_queue_waits_then_answers_none,
        reserve_wakes_for_a_task_enqueued_while_waiting,
        reserved_task_is_invisible_to_other_consumers,
        nack_redelivers_with_a_new_receipt,
        nack_retry_after_postpones_redelivery,
        unacked_task_is_redelivered_after_visibility_timeout,
        stale_receipt_is_conflict_and_changes_nothing,
        delay_is_respected,
        retry_limit_stops_redelivery,
        dead_letters_list_exhausted_tasks_oldest_first,
        concurrent_consumers_lose_nothing_and_never_share_a_task,
        fifo_order_where_declared,
        dedupe_returns_the_first_id_and_creates_nothing,
        dedupe_is_per_queue_and_per_key,
        dedupe_holds_under_concurrent_enqueues,
        dedupe_remembers_the_key_after_ack_and_as_a_dead_letter,
        dedupe_key_rules_are_invalid_input,
        queues_are_isolated,
        empty_queue_name_is_invalid_input,
        operations_after_stop_fail_with_stopped,
    ];
}

/// Generous slack for "answers within" bounds: the kit checks behaviour, not speed.
const SLACK: Duration = Duration::from_secs(2);
/// Allowed clock disagreement in "not before" bounds (a backend may round to milliseconds or
/// keep time on another host).
const TOLERANCE: Duration = Duration::from_millis(50);
/// The delay and `retry_after` the kit uses: a whole second (some backends count in seconds).
const POSTPONE: Duration = Duration::from_secs(1);

/// How long to wait for a delivery that is due about one visibility timeout from now.
fn patience(visibility: Duration) -> Duration {
    visibility * 4 + SLACK
}

/// A queue of this instance only: the namespace plus a suffix naming its use.
fn queue_name(request: &KitRequest, suffix: &str) -> String {
    format!("{}-{suffix}", request.namespace)
}

fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn put(q: &dyn TaskQueue, queue: &str, payload: Bytes) -> Result<String, String> {
    q.enqueue(queue, payload, EnqueueOptions::default())
        .await
        .map_err(|e| format!("enqueue to {queue:?} failed: {e}"))
}

/// Reserve from `queue` waiting up to `wait`; a task must come.
async fn take(
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
async fn expect_none(
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
fn ensure_redelivery(
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

fn ids(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.id.as_str()).collect()
}

async fn enqueue_reserve_ack_round_trips<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "basic");
    let id = put(q, &name, Bytes::from_static(b"hello")).await?;
    ensure!(!id.is_empty(), "enqueue returned an empty id");
    let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    ensure!(
        r.task.id == id,
        "enqueue returned id {id:?}, the reserved task has id {:?}",
        r.task.id
    );
    ensure!(
        r.task.queue == name,
        "a task reserved from {name:?} names queue {:?}",
        r.task.queue
    );
    ensure!(
        r.task.payload == "hello",
        "payload \"hello\" came back as {:?}",
        r.task.payload
    );
    ensure!(
        r.task.attempts == 1,
        "the first delivery must have attempts 1, it has {}",
        r.task.attempts
    );
    ensure!(
        !r.receipt.is_empty(),
        "the reservation has an empty receipt"
    );
    call!("ack of a current reservation", q.ack(&r));
    let vt = i.request.visibility_timeout;
    expect_none(
        q,
        &name,
        vt + vt / 2,
        "an acked task must be gone for good, also after the visibility timeout",
    )
    .await
}

async fn payloads_round_trip_exactly<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "payloads");
    let payloads: Vec<(&str, Bytes)> = vec![
        ("every byte value", (0..=255_u8).collect::<Vec<u8>>().into()),
        ("NUL bytes", Bytes::from_static(b"\0a\0\0\xff")),
        ("an empty payload", Bytes::new()),
        (
            "a 64 KiB payload",
            (0..64 * 1024_u32)
                .map(|n| (n % 251) as u8)
                .collect::<Vec<u8>>()
                .into(),
        ),
    ];
    let mut expected = HashMap::new();
    for (what, payload) in &payloads {
        let id = put(q, &name, payload.clone()).await?;
        expected.insert(id, (*what, payload.clone()));
    }
    for _ in 0..payloads.len() {
        let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        let Some((what, payload)) = expected.remove(&r.task.id) else {
            return Err(format!(
                "reserve delivered task {:?}, not one enqueued (or delivered twice)",
                r.task.id
            ));
        };
        ensure!(
            r.task.payload == payload,
            "{what} of {} bytes came back as {} bytes{}",
            payload.len(),
            r.task.payload.len(),
            if r.task.payload.len() == payload.len() {
                " with different content"
            } else {
                ""
            }
        );
        call!("ack", q.ack(&r));
    }
    Ok(())
}

async fn task_ids_are_unique<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "ids");
    let mut enqueued = HashSet::new();
    for n in 0..50 {
        let id = put(q, &name, Bytes::from_static(b"same payload")).await?;
        ensure!(!id.is_empty(), "enqueue returned an empty id");
        ensure!(
            enqueued.insert(id.clone()),
            "enqueue {n} of the same payload returned id {id:?} again"
        );
    }
    for n in 0..50 {
        let r = take(q, &name, SLACK, &format!("delivery {n} of 50 tasks")).await?;
        ensure!(
            enqueued.remove(&r.task.id),
            "reserve delivered task {:?}, which is not an enqueued id or was delivered before",
            r.task.id
        );
        call!("ack", q.ack(&r));
    }
    Ok(())
}

async fn reserve_on_an_empty_queue_waits_then_answers_none<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "empty");
    let wait = Duration::from_millis(800);
    let start = Instant::now();
    let got = call!("reserve of an empty queue", q.reserve(&name, wait));
    let elapsed = start.elapsed();
    ensure!(
        got.is_none(),
        "reserve of an empty queue delivered a task: {got:?}"
    );
    ensure!(
        elapsed >= wait / 2,
        "reserve of an empty queue with wait {wait:?} answered None after {elapsed:?}: it must wait for a task"
    );
    ensure!(
        elapsed <= wait + SLACK,
        "reserve of an empty queue with wait {wait:?} took {elapsed:?}"
    );
    let start = Instant::now();
    let got = call!("reserve with a zero wait", q.reserve(&name, Duration::ZERO));
    let elapsed = start.elapsed();
    ensure!(
        got.is_none(),
        "reserve of an empty queue delivered a task: {got:?}"
    );
    ensure!(
        elapsed <= SLACK,
        "reserve of an empty queue with a zero wait took {elapsed:?}"
    );
    Ok(())
}

async fn reserve_wakes_for_a_task_enqueued_while_waiting<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "wake");
    let wait = Duration::from_secs(5);
    let start = Instant::now();
    let (got, id) = tokio::join!(q.reserve(&name, wait), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        put(q, &name, Bytes::from_static(b"wake up")).await
    });
    let elapsed = start.elapsed();
    let id = id?;
    let got = got.map_err(|e| format!("a waiting reserve failed: {e}"))?;
    let Some(r) = got else {
        return Err(format!(
            "a reserve waiting {wait:?} answered None after {elapsed:?}, although a task was enqueued 200 ms into its wait"
        ));
    };
    ensure!(
        r.task.id == id,
        "the waiting reserve delivered task {:?}, not the one enqueued ({id:?})",
        r.task.id
    );
    ensure!(
        elapsed < wait / 2,
        "a reserve waiting {wait:?} delivered a task enqueued 200 ms into its wait only after {elapsed:?}: it must wake for it"
    );
    call!("ack", q.ack(&r));
    Ok(())
}

async fn reserved_task_is_invisible_to_other_consumers<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "invisible");
    put(q, &name, Bytes::from_static(b"held")).await?;
    let held = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    let others = futures_util::future::join_all((0..8).map(|_| q.reserve(&name, vt / 4))).await;
    for other in others {
        match other {
            Ok(None) => {}
            Ok(Some(r)) => {
                return Err(format!(
                    "task {:?} was delivered to another consumer while reserved (visibility timeout {vt:?})",
                    r.task.id
                ));
            }
            Err(e) => return Err(format!("reserve failed: {e}")),
        }
    }
    call!("ack", q.ack(&held));
    // Consumers racing for one task: exactly one gets it.
    let id = put(q, &name, Bytes::from_static(b"contested")).await?;
    let racers = futures_util::future::join_all((0..8).map(|_| q.reserve(&name, vt / 4))).await;
    let mut winners = Vec::new();
    for racer in racers {
        match racer {
            Ok(Some(r)) => winners.push(r),
            Ok(None) => {}
            Err(e) => return Err(format!("reserve failed: {e}")),
        }
    }
    ensure!(
        winners.len() == 1,
        "8 consumers racing for one task got {} deliveries (ids {:?}); exactly one must get it",
        winners.len(),
        winners.iter().map(|r| &r.task.id).collect::<Vec<_>>()
    );
    ensure!(
        winners[0].task.id == id,
        "the race delivered task {:?}, not the one enqueued",
        winners[0].task.id
    );
    call!("ack", q.ack(&winners[0]));
    Ok(())
}

async fn nack_redelivers_with_a_new_receipt<T: TaskQueueProvider>(
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

async fn nack_retry_after_postpones_redelivery<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
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
    ensure_redelivery(&first, &again, 2, "after a nack with retry_after")?;
    call!("ack of the redelivery", q.ack(&again));
    Ok(())
}

async fn unacked_task_is_redelivered_after_visibility_timeout<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "timeout");
    put(q, &name, Bytes::from_static(b"abandoned")).await?;
    let before = Instant::now();
    let first = take(q, &name, SLACK, "reserve of an enqueued task").await?;
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

async fn stale_receipt_is_conflict_and_changes_nothing<T: TaskQueueProvider>(
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

async fn delay_is_respected<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "delay");
    let delayed = EnqueueOptions::default().with_delay(POSTPONE);
    if !i.declares(DELAY) {
        expect_unsupported(
            "enqueue with a delay",
            &q.enqueue(&name, Bytes::from_static(b"later"), delayed)
                .await,
        )?;
        return expect_none(
            q,
            &name,
            POSTPONE + vt,
            "an enqueue that answered Unsupported must not enqueue the task",
        )
        .await;
    }
    let before = Instant::now();
    let later = call!(
        "enqueue with a delay",
        q.enqueue(&name, Bytes::from_static(b"later"), delayed)
    );
    let undelayed = put(q, &name, Bytes::from_static(b"now")).await?;
    let first = take(q, &name, SLACK, "reserve of an undelayed task").await?;
    if first.task.id == later {
        return Err(format!(
            "a task enqueued with a delay of {POSTPONE:?} was delivered after {:?}",
            before.elapsed()
        ));
    }
    ensure!(
        first.task.id == undelayed,
        "reserve delivered task {:?}, expected the undelayed task {undelayed:?}",
        first.task.id
    );
    call!("ack", q.ack(&first));
    let second = take(
        q,
        &name,
        POSTPONE + SLACK,
        &format!("a task enqueued with a delay of {POSTPONE:?} must be delivered after it"),
    )
    .await?;
    let after = before.elapsed();
    ensure!(
        second.task.id == later,
        "reserve delivered task {:?}, expected the delayed task {later:?}",
        second.task.id
    );
    ensure!(
        after + TOLERANCE >= POSTPONE,
        "a task enqueued with a delay of {POSTPONE:?} was delivered after {after:?}"
    );
    ensure!(
        second.task.attempts == 1,
        "the first delivery of a delayed task has attempts {}",
        second.task.attempts
    );
    call!("ack", q.ack(&second));
    Ok(())
}

/// Deliver the only task of `name` `max_attempts` times, ending each delivery by nack or by
/// letting it time out; returns its id.
async fn exhaust(
    q: &dyn TaskQueue,
    name: &str,
    payload: &'static [u8],
    request: &KitRequest,
    by_timeout: bool,
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
            call!(
                format!("nack of delivery {attempt} of {max}"),
                q.nack(&r, None)
            );
        }
    }
    Ok(id)
}

async fn retry_limit_stops_redelivery<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let (vt, max) = (i.request.visibility_timeout, i.request.max_attempts);
    let by_nack = queue_name(&i.request, "limit-nack");
    let by_timeout = queue_name(&i.request, "limit-timeout");
    let nacked = async {
        exhaust(q, &by_nack, b"nacked", &i.request, false).await?;
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
        exhaust(q, &by_timeout, b"timed out", &i.request, true).await?;
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

async fn dead_letters_list_exhausted_tasks_oldest_first<T: TaskQueueProvider>(
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
    futures_util::future::try_join(
        dead_letters_by_nack(q, &name, &i.request),
        dead_letters_by_timeout(q, &timed_out, &i.request),
    )
    .await?;
    let other = call!(
        "dead_letters of an unused queue",
        q.dead_letters(&queue_name(&i.request, "dead-other"), 10)
    );
    ensure!(
        other.is_empty(),
        "dead_letters of a queue without exhausted tasks listed {:?}: dead letters must be per queue",
        ids(&other)
    );
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
    let first = exhaust(q, name, b"first", request, false).await?;
    let second = exhaust(q, name, b"second", request, false).await?;
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

async fn dead_letters_by_timeout(
    q: &dyn TaskQueue,
    name: &str,
    request: &KitRequest,
) -> Result<(), String> {
    let vt = request.visibility_timeout;
    let id = exhaust(q, name, b"abandoned", request, true).await?;
    expect_none(q, name, vt * 2, "an exhausted task must not be redelivered").await?;
    // A driver may move it on a background sweep: give it some time.
    let deadline = Instant::now() + SLACK;
    loop {
        let dead = call!("dead_letters", q.dead_letters(name, 10));
        if !dead.is_empty() {
            ensure!(
                ids(&dead) == [id.as_str()],
                "dead_letters listed {:?}, expected the task exhausted by timeouts, {id:?}",
                ids(&dead)
            );
            return ensure_dead(&dead[0], &id, name, b"abandoned", request.max_attempts);
        }
        ensure!(
            Instant::now() < deadline,
            "a task whose last delivery timed out is not in dead_letters"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the consumers of the concurrency obligation saw, shared between them.
#[derive(Default)]
struct Ledger {
    /// Task id → when the consumer holding it received it.
    holders: HashMap<String, Instant>,
    /// Task id → successful acks.
    acked: HashMap<String, u32>,
}

/// Take and ack tasks until every task is acked or the queue stays empty for twice the
/// visibility timeout.
async fn consume<T: TaskQueue + 'static>(
    q: super::harness::Shared<T>,
    name: Arc<str>,
    expected: Arc<HashMap<String, Bytes>>,
    ledger: Arc<Mutex<Ledger>>,
    vt: Duration,
) -> Result<(), String> {
    loop {
        if lock(&ledger).acked.len() >= expected.len() {
            return Ok(());
        }
        let reserved = q
            .reserve(&name, vt * 2)
            .await
            .map_err(|e| format!("reserve failed: {e}"))?;
        let Some(r) = reserved else {
            return Ok(());
        };
        let received = Instant::now();
        match expected.get(&r.task.id) {
            None => return Err(format!("reserve delivered unknown task {:?}", r.task.id)),
            Some(payload) if *payload != r.task.payload => {
                return Err(format!(
                    "task {:?} came back with another payload",
                    r.task.id
                ));
            }
            Some(_) => {}
        }
        if let Some(since) = lock(&ledger).holders.insert(r.task.id.clone(), received) {
            // A redelivery after the visibility timeout is legitimate; an overlap is not.
            let held = received.saturating_duration_since(since);
            ensure!(
                held >= vt / 2,
                "task {:?} was held by two consumers at once: the other one had received it {held:?} earlier, within the visibility timeout ({vt:?})",
                r.task.id
            );
        }
        // The work: lets another consumer run while this one holds the task.
        tokio::task::yield_now().await;
        let outcome = q.ack(&r).await;
        let mut book = lock(&ledger);
        if book.holders.get(&r.task.id) == Some(&received) {
            book.holders.remove(&r.task.id);
        }
        match outcome {
            Ok(()) => *book.acked.entry(r.task.id).or_default() += 1,
            // Held past the visibility timeout (a slow machine) and redelivered: someone else
            // acks it.
            Err(e) if e.kind() == ErrorKind::Conflict => {}
            Err(e) => return Err(format!("ack of task {:?} failed: {e}", r.task.id)),
        }
    }
}

async fn concurrent_consumers_lose_nothing_and_never_share_a_task<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    const PRODUCERS: u32 = 4;
    const PER_PRODUCER: u32 = 50;
    const CONSUMER_PAIRS: usize = 4;
    let vt = i.request.visibility_timeout;
    let name: Arc<str> = queue_name(&i.request, "concurrent").into();
    // Producers on several threads, each with concurrent enqueues.
    let mut producers = Vec::new();
    for p in 0..PRODUCERS {
        let (q, name) = (i.shared(), Arc::clone(&name));
        producers.push(tokio::spawn(async move {
            let enqueues = (0..PER_PRODUCER).map(|n| {
                let (q, name) = (&q, &name);
                async move {
                    let payload = Bytes::from(format!("{p}-{n}"));
                    let id = put(&**q, name, payload.clone()).await?;
                    Ok::<_, String>((id, payload))
                }
            });
            futures_util::future::try_join_all(enqueues).await
        }));
    }
    let mut expected = HashMap::new();
    for producer in producers {
        for (id, payload) in producer
            .await
            .map_err(|e| format!("a producer panicked: {e}"))??
        {
            ensure!(
                expected.insert(id.clone(), payload).is_none(),
                "enqueue returned id {id:?} twice"
            );
        }
    }
    let expected = Arc::new(expected);
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    // 8 consumers: pairs on several threads, each pair interleaving within its task.
    let mut consumers = Vec::new();
    for _ in 0..CONSUMER_PAIRS {
        let consumer = || {
            consume(
                i.shared(),
                Arc::clone(&name),
                Arc::clone(&expected),
                Arc::clone(&ledger),
                vt,
            )
        };
        consumers.push(tokio::spawn(futures_util::future::try_join(
            consumer(),
            consumer(),
        )));
    }
    for consumer in consumers {
        consumer
            .await
            .map_err(|e| format!("a consumer panicked: {e}"))??;
    }
    verify_every_task_acked_once(&expected, &lock(&ledger).acked)?;
    expect_none(
        &*i.driver,
        &name,
        vt + vt / 2,
        "after every task was acked the queue must be empty",
    )
    .await
}

fn verify_every_task_acked_once(
    expected: &HashMap<String, Bytes>,
    acked: &HashMap<String, u32>,
) -> Result<(), String> {
    let mut lost: Vec<&String> = expected
        .keys()
        .filter(|id| !acked.contains_key(*id))
        .collect();
    lost.sort();
    ensure!(
        lost.is_empty(),
        "{} of {} tasks were never delivered (lost), e.g. {:?}",
        lost.len(),
        expected.len(),
        &lost[..lost.len().min(5)]
    );
    let twice: Vec<(&String, &u32)> = acked.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(
        twice.is_empty(),
        "tasks were acked successfully more than once (a stale receipt was accepted): {twice:?}"
    );
    Ok(())
}

async fn fifo_order_where_declared<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "order");
    let mut enqueued = Vec::new();
    for n in 0..20 {
        enqueued.push(put(q, &name, Bytes::from(format!("task {n}"))).await?);
    }
    let mut delivered = Vec::new();
    for n in 0..enqueued.len() {
        let r = take(q, &name, SLACK, &format!("delivery {n} of 20 tasks")).await?;
        call!("ack", q.ack(&r));
        delivered.push(r.task.id);
    }
    if i.declares(FIFO) {
        if let Some(at) = enqueued.iter().zip(&delivered).position(|(e, d)| e != d) {
            return Err(format!(
                "declared `fifo`, but delivery {at} was task {:?}, enqueued as number {:?}; expected {:?}",
                delivered[at],
                enqueued.iter().position(|id| *id == delivered[at]),
                enqueued[at]
            ));
        }
    } else {
        let mut sorted = delivered.clone();
        sorted.sort();
        sorted.dedup();
        let mut all = enqueued.clone();
        all.sort();
        ensure!(
            sorted == all,
            "20 enqueued tasks were not each delivered once: delivered {delivered:?}"
        );
    }
    Ok(())
}

async fn queues_are_isolated<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let first = queue_name(&i.request, "iso");
    let second = queue_name(&i.request, "iso-b");
    let unused = queue_name(&i.request, "iso-unused");
    let id_first = put(q, &first, Bytes::from_static(b"for a")).await?;
    let id_second = put(q, &second, Bytes::from_static(b"for b")).await?;
    for (name, id) in [(&second, &id_second), (&first, &id_first)] {
        let got = take(q, name, SLACK, &format!("reserve from {name:?}")).await?;
        ensure!(
            got.task.id == *id && got.task.queue == *name,
            "reserve from {name:?} delivered task {:?} of queue {:?}, expected {id:?}",
            got.task.id,
            got.task.queue
        );
        call!("ack", q.ack(&got));
    }
    expect_none(
        q,
        &unused,
        vt / 4,
        "a queue nothing was enqueued to must be empty",
    )
    .await?;
    // A consumer waiting on one queue is not handed another queue's task.
    let (waiting, late) = tokio::join!(
        expect_none(
            q,
            &second,
            Duration::from_millis(600),
            "a consumer waiting on one queue must not get a task enqueued to another"
        ),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            put(q, &first, Bytes::from_static(b"late for a")).await
        }
    );
    waiting?;
    let late = late?;
    let got = take(
        q,
        &first,
        SLACK,
        "reserve of the late task from its own queue",
    )
    .await?;
    ensure!(
        got.task.id == late,
        "reserve from {first:?} delivered task {:?}, expected {late:?}",
        got.task.id
    );
    call!("ack", q.ack(&got));
    Ok(())
}

async fn empty_queue_name_is_invalid_input<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q = &*i.driver;
    expect_kind(
        "enqueue to the queue \"\"",
        ErrorKind::InvalidInput,
        &q.enqueue("", Bytes::from_static(b"x"), EnqueueOptions::default())
            .await,
    )?;
    expect_kind(
        "reserve from the queue \"\"",
        ErrorKind::InvalidInput,
        &q.reserve("", Duration::ZERO).await,
    )
}

async fn operations_after_stop_fail_with_stopped<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q = &*i.driver;
    let name = queue_name(&i.request, "stop");
    put(q, &name, Bytes::from_static(b"held")).await?;
    put(q, &name, Bytes::from_static(b"waiting")).await?;
    let held = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    q.stop().await.map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "enqueue after stop",
        ErrorKind::Stopped,
        &q.enqueue(&name, Bytes::from_static(b"x"), EnqueueOptions::default())
            .await,
    )?;
    expect_kind(
        "reserve after stop",
        ErrorKind::Stopped,
        &q.reserve(&name, Duration::ZERO).await,
    )?;
    expect_kind("ack after stop", ErrorKind::Stopped, &q.ack(&held).await)?;
    expect_kind(
        "nack after stop",
        ErrorKind::Stopped,
        &q.nack(&held, None).await,
    )?;
    if i.declares(DEAD_LETTER) {
        expect_kind(
            "dead_letters after stop",
            ErrorKind::Stopped,
            &q.dead_letters(&name, 10).await,
        )?;
    }
    Ok(())
}
