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
//! use sandloom_conformance::taskqueue::TaskQueueConformance;
//! # use std::time::Duration;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueOps, TaskQueueProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
//! # #[derive(Debug, serde::Deserialize)]
//! # #[serde(deny_unknown_fields)]
//! # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
//! # /// Delivers nothing: a stand-in for a driver under test.
//! # pub struct DrainQueue;
//! # fn named(queue: &str) -> InfraResult<()> {
//! #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
//! # }
//! # impl TaskQueueOps for DrainQueue {
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

use crate::KitRequest;
use crate::harness::{Kit, Tolerance};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

mod concurrency;
mod dead_letter;
mod dedupe;
mod delivery;
mod limits;
mod queues;
mod redelivery;
mod secrets;
mod support;
mod timing;
mod windows;

use concurrency::{
    concurrent_consumers_lose_nothing_and_never_share_a_task,
    concurrent_settles_of_one_receipt_have_one_winner, fifo_order_where_declared,
};
use dead_letter::{dead_letters_list_exhausted_tasks_oldest_first, retry_limit_stops_redelivery};
use dedupe::{
    dedupe_forgets_the_key_after_its_window, dedupe_holds_under_concurrent_enqueues,
    dedupe_is_per_queue_and_per_key, dedupe_key_rules_are_invalid_input,
    dedupe_remembers_the_key_after_ack_and_as_a_dead_letter,
    dedupe_returns_the_first_id_and_creates_nothing,
};
use delivery::{
    delay_is_respected, enqueue_reserve_ack_round_trips, payloads_round_trip_exactly,
    reserve_on_an_empty_queue_waits_then_answers_none,
    reserve_wakes_for_a_task_enqueued_while_waiting, reserved_task_is_invisible_to_other_consumers,
    task_ids_are_unique,
};
use limits::{
    queue_names_and_payloads_at_and_past_their_limits, tasks_and_dead_letters_stay_until_taken,
};
use queues::{
    empty_queue_name_is_invalid_input, operations_after_stop_fail_with_stopped, queues_are_isolated,
};
use redelivery::{
    a_postponed_task_does_not_block_its_queue, nack_redelivers_with_a_new_receipt,
    nack_retry_after_postpones_redelivery, stale_receipt_is_conflict_and_changes_nothing,
    unacked_task_is_redelivered_after_visibility_timeout,
};
use secrets::secrets_never_show;
use timing::{
    a_waiting_reserve_wakes_when_a_task_becomes_ready,
    delays_and_retries_below_and_between_seconds_are_exact,
    extreme_durations_are_accepted_and_held, reserve_waits_exactly_as_long_as_asked,
    retry_after_counts_from_the_nack, zero_durations_mean_now,
};
use windows::{
    a_nacked_receipt_is_spent_at_once, a_second_ack_is_conflict_and_changes_nothing,
    stop_ends_a_waiting_reserve_with_stopped,
};

/// The conformance kit of the `taskqueue` contract. See [`OBLIGATIONS`] for what it holds a
/// driver to; run it with [`taskqueue_conformance!`](crate::taskqueue_conformance).
///
/// The closure must honour the request's `visibility_timeout` and `max_attempts`, and should
/// use its `namespace` when the driver shares a server.
///
/// ```
/// # use sandloom_conformance::taskqueue::TaskQueueConformance;
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

/// What the `taskqueue` kit's obligations are given besides the instance: the declared timing
/// [`Tolerance`] (how late a `reserve` may answer after its wait, and a task come back after its visibility timeout, `retry_after` or delay), set with the kit's
/// [`tolerance`](TaskQueueConformance::tolerance) method.
///
/// ```
/// use sandloom_conformance::taskqueue::TaskQueueSettings;
/// use sandloom_conformance::Tolerance;
/// assert_eq!(TaskQueueSettings::default().tolerance(), Tolerance::DEFAULT);
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct TaskQueueSettings {
    tolerance: Tolerance,
    dedupe_window: Option<std::time::Duration>,
}

impl TaskQueueSettings {
    /// The declared timing tolerance.
    ///
    /// ```
    /// use sandloom_conformance::taskqueue::TaskQueueSettings;
    /// let tolerance = TaskQueueSettings::default().tolerance().get();
    /// assert!(tolerance < std::time::Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// The dedupe window the driver crate declared it configured (feature `dedupe`), if any.
    ///
    /// ```
    /// use sandloom_conformance::taskqueue::TaskQueueSettings;
    /// assert_eq!(TaskQueueSettings::default().dedupe_window(), None);
    /// ```
    #[must_use]
    pub fn dedupe_window(&self) -> Option<std::time::Duration> {
        self.dedupe_window
    }

    /// The tolerance as a duration, for the obligations' bounds.
    pub(crate) fn late(&self) -> std::time::Duration {
        self.tolerance.get()
    }
}

/// The longest dedupe window the kit waits out.
const LONGEST_DEDUPE_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

impl<T: TaskQueueProvider> Kit<T, TaskQueueSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_conformance::taskqueue::TaskQueueConformance;
    /// use sandloom_conformance::KitRequest;
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueOps, TaskQueueProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # #[derive(Debug, serde::Deserialize)]
    /// # #[serde(deny_unknown_fields)]
    /// # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
    /// # /// Delivers nothing: a stand-in for a driver under test.
    /// # pub struct DrainQueue;
    /// # fn named(queue: &str) -> InfraResult<()> {
    /// #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
    /// # }
    /// # impl TaskQueueOps for DrainQueue {
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
        Kit::build::<sandloom_driverkit::taskqueue::TaskQueueCapability>(
            obligations::<T>(),
            options,
            TaskQueueSettings::default(),
        )
    }

    /// Widen the timing tolerance for a driver on a server (default [`Tolerance::DEFAULT`],
    /// at most [`Tolerance::MAX`]: above it, every obligation fails saying so). The
    /// tolerance is how late a `reserve` may answer after its wait, and a task come back after its visibility timeout, `retry_after` or delay.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_conformance::taskqueue::TaskQueueConformance;
    /// # fn kit<T: sandloom_driverkit::taskqueue::TaskQueueProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // For a queue on a server that polls for due tasks every 500 ms:
    /// let kit = TaskQueueConformance::<T>::new(move |_request| options.clone())
    ///     .tolerance(Duration::from_millis(750));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `taskqueue_conformance!(MyDriver, |request| …, .tolerance(Duration::from_millis(750)));`.
    #[must_use]
    pub fn tolerance(self, late: std::time::Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }

    /// Declare the dedupe window the options closure configures (feature `dedupe`): the kit
    /// then holds the driver to forgetting a key once its task has been acked for that long
    /// (`dedupe_forgets_the_key_after_its_window`). Without it the kit cannot know the window
    /// and checks only that keys are remembered. At most 10 s, which the kit waits out; a
    /// longer or zero window fails every obligation saying so.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_conformance::taskqueue::TaskQueueConformance;
    /// # fn kit<T: sandloom_driverkit::taskqueue::TaskQueueProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // The closure sets the driver's option (say `dedupe_window_ms = 1000`) and tells the kit:
    /// let kit = TaskQueueConformance::<T>::new(move |_request| options.clone())
    ///     .dedupe_window(Duration::from_secs(1));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `taskqueue_conformance!(MyDriver, |request| …, .dedupe_window(Duration::from_secs(1)));`.
    #[must_use]
    pub fn dedupe_window(mut self, window: std::time::Duration) -> Self {
        if window.is_zero() || window > LONGEST_DEDUPE_WINDOW {
            self.refuse(format!(
                "a dedupe window of {window:?} was declared: the kit waits it out, so it must be \
                 more than zero and at most {LONGEST_DEDUPE_WINDOW:?}"
            ));
        } else {
            self.settings_mut().dedupe_window = Some(window);
        }
        self
    }
}

crate::define_kit! {
    /// Run the whole `taskqueue` kit from a driver crate's tests: one `#[test]` per obligation, in a
    /// module `taskqueue_conformance`.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] name
    /// // sandloom-conformance.
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue, TaskQueueOps, TaskQueueProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # #[derive(Debug, serde::Deserialize)]
    /// # #[serde(deny_unknown_fields)]
    /// # pub struct DrainOptions { pub visibility_timeout_ms: u64, pub max_attempts: u32 }
    /// # /// Delivers nothing: a stand-in for a driver under test.
    /// # pub struct DrainQueue;
    /// # fn named(queue: &str) -> InfraResult<()> {
    /// #     if queue.is_empty() { Err(InfraError::invalid_input("taskqueue", "empty queue name")) } else { Ok(()) }
    /// # }
    /// # impl TaskQueueOps for DrainQueue {
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
    /// sandloom_conformance::taskqueue_conformance!(MyQueue, |request| DrainOptions {
    ///     visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
    ///     max_attempts: request.max_attempts,
    /// });
    /// # fn main() {}
    /// ```
    macro taskqueue_conformance;
    kit crate::taskqueue::TaskQueueConformance::new;
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
    ///   `None` after its `wait` of 800 ms, neither earlier nor later than the declared tolerance;
    ///   a zero `wait` answers `None` within the tolerance.
    /// - `reserve_wakes_for_a_task_enqueued_while_waiting`: a `reserve` waiting 5 s delivers a task
    ///   enqueued 200 ms into its wait, within the declared tolerance of the `enqueue`.
    /// - `reserved_task_is_invisible_to_other_consumers`: while a task is reserved, 8 other consumers
    ///   get nothing; 8 consumers racing for one task get it exactly once.
    /// - `nack_redelivers_with_a_new_receipt`: after `nack(None)` the task is delivered again with
    ///   `attempts == 2`, the same id and payload, and a new receipt.
    /// - `nack_retry_after_postpones_redelivery`: a task nacked with a `retry_after` of 1 s is not
    ///   delivered before it, and is delivered within the declared tolerance after it.
    /// - `unacked_task_is_redelivered_after_visibility_timeout`: a task neither acked nor nacked is
    ///   hidden for the visibility timeout, then delivered again, within the declared tolerance
    ///   after it, with `attempts == 2` and a new receipt.
    /// - `stale_receipt_is_conflict_and_changes_nothing`: once a receipt is stale (its visibility
    ///   timeout passed, even before any redelivery; or the task was redelivered after a timeout or a
    ///   nack), `ack` and `nack` with it answer `Conflict`, and the task stays with its current
    ///   delivery.
    /// - `a_second_ack_is_conflict_and_changes_nothing`: once a task is acked, a second `ack` and a
    ///   `nack` with its receipt answer `Conflict` (the contract's rule for a spent receipt), and
    ///   the queue's other task is still delivered once, on its first attempt; nothing comes back.
    /// - `a_nacked_receipt_is_spent_at_once`: right after a `nack` with a `retry_after`, before any
    ///   redelivery, `ack` and `nack` with its receipt answer `Conflict`; the task neither goes nor
    ///   comes back early, and is redelivered (attempt 2, a new receipt) after its `retry_after`.
    /// - `delay_is_respected`: declared `delay`: a task delayed 1 s is not delivered before its
    ///   delay (a later undelayed task is), and is delivered within the declared tolerance after
    ///   it; undeclared: an enqueue with a delay answers `Unsupported` and enqueues nothing.
    /// - `retry_limit_stops_redelivery`: a task is delivered exactly `max_attempts` times (attempts 1,
    ///   2, …); a further nack, and separately a further visibility timeout, does not redeliver it.
    /// - `dead_letters_list_exhausted_tasks_oldest_first`: declared `dead_letter`: exhausted tasks (by
    ///   nack and by timeout) are listed per queue, oldest first, with their payload and attempts,
    ///   `limit` respected (a limit of 0 lists none); a task whose last allowed delivery is
    ///   nacked with a `retry_after` of 400 days is listed at once (no retry is left); queues
    ///   without exhausted tasks, also ones whose names differ only in case, by a trailing space
    ///   or a suffix, list none; undeclared: `dead_letters` answers `Unsupported`.
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
    ///   another task; keys sharing a prefix or differing in case, by a trailing space or dot, as a
    ///   percent-encoding (`%31` for `1`) or as NFC and NFD are different keys; a keyless enqueue
    ///   is its own task.
    /// - `dedupe_holds_under_concurrent_enqueues`: declared `dedupe`: 16 enqueues with one key at
    ///   once, on several threads, all return one id, and exactly one task is delivered.
    /// - `dedupe_remembers_the_key_after_ack_and_as_a_dead_letter`: declared `dedupe`: an enqueue
    ///   with the key of a task acked moments ago (within the dedupe window) returns its id and
    ///   creates nothing; so does one with the key of a dead letter (where `dead_letter` is
    ///   declared).
    /// - `dedupe_key_rules_are_invalid_input`: declared `dedupe`: an empty key, a key of 256 bytes
    ///   and a key with a NUL character answer `InvalidInput` and enqueue nothing; a key of 255
    ///   bytes, non-ASCII, blank or punctuated keys work.
    /// - `dedupe_forgets_the_key_after_its_window`: declared `dedupe` and a dedupe window (the
    ///   kit's `dedupe_window` builder method): once a task with a key has been acked for the
    ///   window plus the declared tolerance, an enqueue with the key creates a new task with a
    ///   new id, which is delivered; a key whose task is still in the queue is remembered past
    ///   the window. Nothing to check without a declared window.
    /// - `queues_are_isolated`: a task is delivered only from its own queue, also when the names
    ///   differ only by a suffix, in case, by a trailing space or dot, as a percent-encoding (`%6F`
    ///   for `o`), or as NFC and NFD; and a consumer waiting on one queue is not handed another
    ///   queue's task.
    /// - `empty_queue_name_is_invalid_input`: `enqueue`, `reserve` (with no wait and with a long
    ///   one) and `dead_letters` (when declared) of the queue `""` answer `InvalidInput`.
    /// - `reserve_waits_exactly_as_long_as_asked`: on an empty queue, `reserve` with a `wait` of
    ///   1 µs, 300 ms and 1.5 s answers `None` after its wait, neither earlier nor later than the
    ///   declared tolerance (a wait rounded to whole milliseconds is fine, to whole seconds is
    ///   not).
    /// - `delays_and_retries_below_and_between_seconds_are_exact`: a `retry_after` (and, declared
    ///   `delay`, a delay) of 1 µs, 300 ms and 1.5 s brings the task to a waiting `reserve` not
    ///   before it and within the declared tolerance after it; a delayed task's first delivery
    ///   has `attempts == 1`.
    /// - `extreme_durations_are_accepted_and_held`: a `retry_after` (and, declared `delay`, a
    ///   delay) of 400 days and of 100 years is accepted and the task is not delivered; a
    ///   `reserve` with a `wait` of 100 years delivers a task enqueued while it waits, within
    ///   the declared tolerance; `stop` ends `reserve`s waiting 400 days and 100 years with
    ///   `Stopped`.
    /// - `retry_after_counts_from_the_nack`: a task nacked with a `retry_after` of 1 s, most of a
    ///   visibility timeout after its reserve, comes back 1 s after the nack (not the reserve),
    ///   within the declared tolerance.
    /// - `a_waiting_reserve_wakes_when_a_task_becomes_ready`: a `reserve` waiting 5 s on a queue
    ///   whose only task becomes ready 500 ms later (its `retry_after` ends, its delay ends where
    ///   `delay` is declared) or when its visibility timeout ends delivers it within the declared
    ///   tolerance of that moment, not at the end of its wait.
    /// - `concurrent_settles_of_one_receipt_have_one_winner`: 8 acks of one receipt at once, from
    ///   several threads: one succeeds, the others answer `Conflict`, and the task is gone; 4 acks
    ///   and 4 nacks at once: one succeeds, and the task's fate is the winner's (acked: gone for
    ///   good; nacked: delivered once more, attempt 2).
    /// - `zero_durations_mean_now`: a `reserve` with a zero wait of a queue holding a ready task
    ///   delivers it (zero looks once), within the declared tolerance; after a `nack` with a zero
    ///   `retry_after`, a `reserve` with a zero wait delivers the task again at once, attempt 2;
    ///   declared `delay`: a task enqueued with a zero delay is delivered at once by a `reserve`
    ///   with a zero wait, attempt 1; undeclared: an enqueue with a zero delay answers
    ///   `Unsupported` and enqueues nothing.
    /// - `a_postponed_task_does_not_block_its_queue`: of two tasks in one queue, the one
    ///   delivered first, nacked with a `retry_after` of 400 days, does not hold back the other:
    ///   a `reserve` delivers it within the declared tolerance; nor does one reserved and not
    ///   settled (its visibility timeout still running).
    /// - `queue_names_and_payloads_at_and_past_their_limits`: a one-byte queue name and payload
    ///   work; queues named by exactly 128 bytes (ASCII, and 2-byte letters) are distinct from
    ///   their own prefixes one character shorter; a name one character past the limit, and one
    ///   holding a NUL character, is a queue of its own, or `InvalidInput` from `enqueue` and
    ///   `reserve` alike; a payload of
    ///   1 MiB comes back exactly, and one of 1 MiB and 1 byte whole or is refused with
    ///   `InvalidInput`, enqueuing nothing.
    /// - `tasks_and_dead_letters_stay_until_taken`: a task enqueued with no delay and never
    ///   reserved, and (declared `dead_letter`) a dead letter, are still there after 3 s plus
    ///   the declared tolerance, longer than every delay, `retry_after` and visibility timeout
    ///   the kit uses elsewhere: the task is delivered by a zero-wait `reserve` on its first
    ///   attempt, and the dead letter is listed; tasks postponed 400 days (by a `retry_after`,
    ///   and by a delay where `delay` is declared) are still not delivered.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `enqueue`, `reserve`, `ack`, `nack`
    ///   (and `dead_letters` when declared) answer `Stopped`.
    /// - `stop_ends_a_waiting_reserve_with_stopped`: a `reserve` waiting (for up to a minute) on an
    ///   empty queue when `stop` is called answers `Stopped` within the declared tolerance after
    ///   `stop` returns, not `None` and not at the end of its wait.
    /// - `secrets_never_show`: the secrets the kit plants itself in every `writeOnly` option
    ///   of the options' JSON Schema (every `Secret` and `SecretUrl`, with no declaration), on
    ///   an instance it builds from them, and the values declared with
    ///   [`Kit::secrets`](crate::Kit::secrets): none shows in the options' `Debug`, the
    ///   driver's `Debug`, or the `Display` or `Debug` of the errors of `validate`,
    ///   `from_options`, `start`, `stop` and of the contract's operations given an empty key or
    ///   name (`InvalidInput`); the declared ones also after `stop` (`Stopped`) and on an
    ///   instance pointed at an unreachable address. Nothing to check for options with no
    ///   `writeOnly` option and no declared secret.
    ///
    /// ```
    /// use sandloom_conformance::taskqueue::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 38);
    /// assert_eq!(OBLIGATIONS[0], "enqueue_reserve_ack_round_trips");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
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
        a_second_ack_is_conflict_and_changes_nothing,
        a_nacked_receipt_is_spent_at_once,
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
        dedupe_forgets_the_key_after_its_window,
        queues_are_isolated,
        empty_queue_name_is_invalid_input,
        reserve_waits_exactly_as_long_as_asked,
        delays_and_retries_below_and_between_seconds_are_exact,
        extreme_durations_are_accepted_and_held,
        retry_after_counts_from_the_nack,
        a_waiting_reserve_wakes_when_a_task_becomes_ready,
        concurrent_settles_of_one_receipt_have_one_winner,
        zero_durations_mean_now,
        a_postponed_task_does_not_block_its_queue,
        queue_names_and_payloads_at_and_past_their_limits,
        tasks_and_dead_letters_stay_until_taken,
        operations_after_stop_fail_with_stopped,
        stop_ends_a_waiting_reserve_with_stopped,
        secrets_never_show,
    ];
}
