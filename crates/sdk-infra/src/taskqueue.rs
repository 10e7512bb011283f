//! The `taskqueue` capability: durable, at-least-once background work.
//!
//! Required operations: [`enqueue`](TaskQueue::enqueue), [`reserve`](TaskQueue::reserve),
//! [`ack`](TaskQueue::ack), [`nack`](TaskQueue::nack). Optional features: [`DELAY`],
//! [`DEAD_LETTER`], [`FIFO`], [`DEDUPE`].
//!
//! # Delivery
//! A reserved task is invisible to other consumers for the driver's visibility timeout. If it is
//! neither acked nor nacked in time (the worker died), it is delivered again. A task is therefore
//! delivered at least once, and a handler must tolerate a repeat. A task that has been delivered
//! the driver's retry limit of times and is nacked or times out again moves to the dead-letter
//! list (feature [`DEAD_LETTER`]) instead of being retried.
//!
//! Nothing leaves a queue because time passed: a task stays until it is acked or moves to the
//! dead-letter list, however long nobody reserves it, and a dead letter stays listed. A driver
//! applies no message ttl or retention of its own.
//!
//! Every driver holds payloads of up to 1 MiB, exactly; a larger one it either holds whole or
//! refuses with `InvalidInput`, enqueuing nothing: it never cuts one to fit.
//!
//! # Durations
//! Every duration, a delay ([`EnqueueOptions::delay`]), a `retry_after` ([`TaskQueue::nack`])
//! and a `reserve`'s `wait` ([`TaskQueue::reserve`]), accepts any length:
//! - **Zero** means now: no delay, retry at once, don't wait.
//! - **Short ones** are kept to the millisecond, never rounded to whole seconds (300 ms is not
//!   0 s or 1 s, 1.5 s is not 1 s or 2 s). A nonzero duration shorter than the backend's
//!   resolution is rounded *up* to it: never to zero, never refused.
//! - **Long ones** are never refused either: a duration longer than the backend can hold is
//!   held as the longest it can, and that is never less than 100 years, so `Duration::MAX`
//!   means "as long as possible". A driver must not panic (`Instant + Duration::MAX`
//!   overflows) nor answer an error for it: a task delayed or nacked for 400 days or
//!   `Duration::MAX` is accepted and not delivered, a `reserve` waiting `Duration::MAX` still
//!   takes a task enqueued meanwhile, and `stop` still ends it.
//! - **On time, both ways.** A task is not delivered before its delay or `retry_after` has
//!   passed, and comes soon after: a `reserve` waiting on the queue wakes when a task *becomes*
//!   ready (its delay or `retry_after` ends, a visibility timeout runs out), not only for an
//!   enqueue. A `retry_after` counts from the `nack`, not from the reservation.
//!
//! # Names
//! Queue names are compared exactly, byte for byte: names that differ only in case, by a
//! trailing space or dot, by a prefix or suffix, as a percent-encoding, or as NFC and NFD forms
//! of one text are different
//! queues, with their own tasks and dead letters. Every operation that takes a queue name
//! (`enqueue`, `reserve`, `dead_letters`) checks it the same way, and a refused call changes
//! nothing. Every driver holds queue names of up to 128 bytes; a longer name it either holds
//! whole, as a queue of its own, or refuses with `InvalidInput` in every operation: it never
//! cuts one to fit. So with a NUL character: held whole or refused (`taskqueue.postgres`
//! refuses it), never cut at the NUL. (128 bytes leave room for the longest queue prefix `taskqueue.amqp` takes
//! within the broker's 255-byte queue names.)
//!
//! # Settling a delivery
//! A receipt settles its delivery once: of any number of `ack`s and `nack`s of one receipt,
//! also at the same time from several threads or processes, exactly one succeeds and the others
//! answer `Conflict`; the task's fate is the winner's (acked: gone for good; nacked: delivered
//! again once).
//!
//! # Enqueueing exactly once
//! An `enqueue` that answers `Unavailable` or `Timeout` may have committed before its answer was
//! lost, so retrying it can create a second copy of the task. With feature [`DEDUPE`] the
//! producer names the task with an idempotency key
//! ([`EnqueueOptions::with_idempotency_key`]) and retries freely: every enqueue with that key
//! returns the first task's id and creates nothing more. [`DEDUPE`] states the whole rule.
//!
//! # Feature names
//! The constants are the names drivers declare and modules require:
//!
//! ```
//! use sandloom_sdk_infra::taskqueue::{
//!     DEAD_LETTER, DEDUPE, DELAY, FEATURES, FIFO, NAME, REQUIRED_OPERATIONS,
//! };
//! use sandloom_sdk_infra::{requires, TASK_QUEUE};
//!
//! // Startup refuses a `taskqueue.mail` whose driver cannot delay tasks.
//! requires!(TASK_QUEUE, "mail", features = [DELAY]);
//!
//! # fn main() {
//! assert_eq!(NAME, TASK_QUEUE.name());
//! assert_eq!((DELAY, DEAD_LETTER, FIFO, DEDUPE), ("delay", "dead_letter", "fifo", "dedupe"));
//! assert_eq!(FEATURES, [DELAY, DEAD_LETTER, FIFO, DEDUPE]);
//! assert_eq!(REQUIRED_OPERATIONS, ["enqueue", "reserve", "ack", "nack"]);
//! # }
//! ```

use std::time::Duration;

use bytes::Bytes;

use crate::error::{InfraError, InfraResult};

/// Capability name of the task queue, as written in `INFRA` (`[taskqueue.default]`); see the
/// [module example](self#feature-names).
pub const NAME: &str = "taskqueue";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`TaskQueue`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::taskqueue::FUTURE_BYTES, 576);
/// ```
pub const FUTURE_BYTES: usize = 576;

/// Feature: [`EnqueueOptions::delay`] is honoured.
pub const DELAY: &str = "delay";
/// Feature: exhausted tasks are kept and [`TaskQueue::dead_letters`] lists them.
pub const DEAD_LETTER: &str = "dead_letter";
/// Feature: tasks of one queue that are ready are reserved in the order they were enqueued.
pub const FIFO: &str = "fifo";
/// Feature: [`EnqueueOptions::idempotency_key`] is honoured, so a retried `enqueue` never
/// creates a second task.
///
/// # The contract
/// - **Same key, same queue: one task.** An enqueue with the key of a task that the queue still
///   remembers creates nothing and returns that first task's id.
/// - **The key identifies the task.** The later enqueue's payload and delay are not compared
///   and change nothing: it returns the first id even when they differ.
/// - **Per queue.** The same key in another queue (or another instance's namespace) names
///   another task.
/// - **Concurrency included.** Any number of enqueues with one key, at the same time, from any
///   number of threads, processes or instances on the same backend, create exactly one task and
///   all return its id. A retry after a lost answer is just another such enqueue.
/// - **The window.** The key is remembered for as long as its task is in the queue (ready,
///   delayed, reserved, nacked, or dead-lettered, until the dead letter is removed) and then
///   for at least the driver's *dedupe window* after it left the queue (acked, or dropped after
///   its last delivery by a driver without [`DEAD_LETTER`]). The built-in drivers take the
///   window from the option `dedupe_window_ms`, 24 hours by default. Once the window has passed
///   the key is free again: an enqueue with it creates a new task, with a new id.
/// - **Keys.** 1 to [`IDEMPOTENCY_KEY_MAX_LEN`] bytes of UTF-8 without NUL characters;
///   anything else answers `InvalidInput` (see [`EnqueueOptions::checked_idempotency_key`]).
///   Keys are compared byte for byte: keys that differ only in case, by a trailing space or dot,
///   as a percent-encoding or as NFC and NFD forms of one text are different keys.
/// - **Without the feature** an enqueue with a key answers `Unsupported` and enqueues nothing:
///   a module that needs the promise requires the feature, and startup refuses a driver that
///   cannot keep it.
///
/// ```
/// use sandloom_sdk_infra::taskqueue::{DEDUPE, EnqueueOptions, TaskQueue};
/// use sandloom_sdk_infra::{requires, InfraResult, TASK_QUEUE};
///
/// // Startup refuses a `taskqueue.billing` whose driver cannot deduplicate.
/// requires!(TASK_QUEUE, "billing", features = [DEDUPE]);
///
/// /// Charge an invoice once, however often this is retried.
/// async fn charge(queue: &dyn TaskQueue, invoice: u64) -> InfraResult<String> {
///     let once = EnqueueOptions::default().with_idempotency_key(format!("charge-{invoice}"));
///     queue.enqueue("billing", invoice.to_string().into(), once).await
/// }
/// # fn main() {}
/// ```
pub const DEDUPE: &str = "dedupe";
/// Longest idempotency key, in bytes (feature [`DEDUPE`]).
///
/// ```
/// use sandloom_sdk_infra::taskqueue::{EnqueueOptions, IDEMPOTENCY_KEY_MAX_LEN};
/// let longest = EnqueueOptions::default().with_idempotency_key("k".repeat(IDEMPOTENCY_KEY_MAX_LEN));
/// assert!(longest.checked_idempotency_key().is_ok());
/// ```
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;

/// How to enqueue a task.
///
/// ```
/// use std::time::Duration;
/// use sandloom_sdk_infra::taskqueue::EnqueueOptions;
/// let later = EnqueueOptions::default().with_delay(Duration::from_secs(60));
/// assert_eq!(later.delay, Some(Duration::from_secs(60)));
/// let once = EnqueueOptions::default().with_idempotency_key("order-42-receipt");
/// assert_eq!(once.idempotency_key.as_deref(), Some("order-42-receipt"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnqueueOptions {
    /// Do not deliver before this much time has passed (feature [`DELAY`]); any length, kept
    /// to the millisecond, `Duration::MAX` for as long as the backend can hold it (see
    /// [Durations](self#durations)).
    pub delay: Option<Duration>,
    /// Names the task, so that enqueueing it again creates nothing (feature [`DEDUPE`]).
    ///
    /// While the queue remembers the key (as long as its task is in the queue, ready, delayed,
    /// reserved or dead-lettered, and for at least the driver's dedupe window after the task
    /// left it: 24 hours by default for the built-in drivers), an enqueue with the same key in
    /// the same queue returns the first task's id and creates nothing, whatever its payload and
    /// delay; concurrent enqueues with one key create exactly one task. 1 to
    /// [`IDEMPOTENCY_KEY_MAX_LEN`] bytes without NUL characters, or `InvalidInput`. Without the
    /// feature, an enqueue with a key answers `Unsupported`. [`DEDUPE`] states the contract in
    /// full.
    pub idempotency_key: Option<String>,
}

impl EnqueueOptions {
    /// Set the delay.
    ///
    /// ```
    /// # use sandloom_sdk_infra::taskqueue::EnqueueOptions;
    /// # use std::time::Duration;
    /// assert!(EnqueueOptions::default().with_delay(Duration::from_millis(5)).delay.is_some());
    /// ```
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Set the idempotency key (feature [`DEDUPE`]): retrying this enqueue, even after an
    /// `Unavailable` or `Timeout` answer that may have committed, never creates a second task.
    ///
    /// ```
    /// use sandloom_sdk_infra::taskqueue::{EnqueueOptions, TaskQueue};
    /// use sandloom_sdk_infra::InfraResult;
    ///
    /// /// Enqueue the welcome mail of `user` once, retrying while the backend is away.
    /// async fn welcome(queue: &dyn TaskQueue, user: u64) -> InfraResult<String> {
    ///     let mut tries = 0;
    ///     loop {
    ///         let once = EnqueueOptions::default().with_idempotency_key(format!("welcome-{user}"));
    ///         match queue.enqueue("mail", user.to_string().into(), once).await {
    ///             // Unavailable or Timeout: it may have committed; the retry cannot copy it.
    ///             Err(e) if e.kind().is_retryable() && tries < 5 => tries += 1,
    ///             result => return result, // the same id, whichever try committed
    ///         }
    ///     }
    /// }
    /// ```
    #[must_use]
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// The idempotency key, checked against the key rules of [`DEDUPE`]: `None` without one.
    /// For drivers, which must refuse a key that breaks the rules.
    ///
    /// ```
    /// use sandloom_sdk_infra::taskqueue::EnqueueOptions;
    /// use sandloom_sdk_infra::ErrorKind;
    ///
    /// let key = |k: &str| EnqueueOptions::default().with_idempotency_key(k);
    /// assert_eq!(key("welcome-7").checked_idempotency_key().unwrap(), Some("welcome-7"));
    /// assert_eq!(EnqueueOptions::default().checked_idempotency_key().unwrap(), None);
    /// for bad in [String::new(), "a\0b".to_owned(), "k".repeat(256)] {
    ///     let err = key(&bad).checked_idempotency_key().unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::InvalidInput);
    /// }
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for an empty key, a key longer than [`IDEMPOTENCY_KEY_MAX_LEN`] bytes, or
    /// one with a NUL character.
    pub fn checked_idempotency_key(&self) -> InfraResult<Option<&str>> {
        let Some(key) = self.idempotency_key.as_deref() else {
            return Ok(None);
        };
        if key.is_empty() || key.len() > IDEMPOTENCY_KEY_MAX_LEN || key.contains('\0') {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "an idempotency key must be 1 to {IDEMPOTENCY_KEY_MAX_LEN} bytes without NUL characters, not {} bytes",
                    key.len()
                ),
            ));
        }
        Ok(Some(key))
    }
}

/// A task, as stored.
///
/// ```
/// use sandloom_sdk_infra::taskqueue::Task;
///
/// fn describe(task: &Task) -> String {
///     let (queue, id, attempts) = (&task.queue, &task.id, task.attempts);
///     format!("{queue} #{id}, attempt {attempts}: {} bytes", task.payload.len())
/// }
/// let task = Task::new("42", "mail", "hello".into(), 2); // drivers build tasks
/// assert_eq!(describe(&task), "mail #42, attempt 2: 5 bytes");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Task {
    /// Unique identifier, assigned by `enqueue`.
    pub id: String,
    /// The queue it belongs to.
    pub queue: String,
    /// The bytes the producer enqueued.
    pub payload: Bytes,
    /// How many times it has been delivered, this delivery included (1 on first delivery).
    pub attempts: u32,
}

impl Task {
    /// A task value (drivers build these).
    ///
    /// ```
    /// let t = sandloom_sdk_infra::taskqueue::Task::new("1", "mail", "x".into(), 1);
    /// assert_eq!(t.attempts, 1);
    /// ```
    pub fn new(
        id: impl Into<String>,
        queue: impl Into<String>,
        payload: Bytes,
        attempts: u32,
    ) -> Self {
        Self {
            id: id.into(),
            queue: queue.into(),
            payload,
            attempts,
        }
    }
}

/// A delivered task and the token that proves this consumer holds it.
///
/// Ack or nack it before the visibility timeout; afterwards the reservation is stale and
/// `ack`/`nack` answer [`ErrorKind::Conflict`](crate::ErrorKind::Conflict).
///
/// ```
/// use std::time::Duration;
/// use sandloom_sdk_infra::taskqueue::{Reservation, TaskQueue};
/// use sandloom_sdk_infra::InfraResult;
///
/// /// A worker: handle tasks until the queue stays empty for 5 s.
/// async fn drain(queue: &dyn TaskQueue, handle: impl Fn(&[u8]) -> bool) -> InfraResult<()> {
///     while let Some(reservation) = queue.reserve("mail", Duration::from_secs(5)).await? {
///         let Reservation { task, .. } = &reservation;
///         if handle(&task.payload) {
///             queue.ack(&reservation).await?;
///         } else {
///             queue.nack(&reservation, Some(Duration::from_secs(30))).await?;
///         }
///     }
///     Ok(())
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reservation {
    /// The task.
    pub task: Task,
    /// Opaque token naming this delivery; differs for every delivery of the same task.
    pub receipt: String,
}

impl Reservation {
    /// A reservation value (drivers build these).
    ///
    /// ```
    /// use sandloom_sdk_infra::taskqueue::{Reservation, Task};
    /// let r = Reservation::new(Task::new("1", "q", "x".into(), 1), "r-1");
    /// assert_eq!(r.receipt, "r-1");
    /// ```
    pub fn new(task: Task, receipt: impl Into<String>) -> Self {
        Self {
            task,
            receipt: receipt.into(),
        }
    }
}

/// The `taskqueue` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __taskqueue_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "taskqueue",
            stability: Stable,
            version: (1, 0, 0),
            features: ["delay", "dead_letter", "fifo", "dedupe"],
            ops: TaskQueueOps,
            future_bytes: $crate::taskqueue::FUTURE_BYTES,
            trait: {
                /// A queue of tasks with at-least-once delivery.
                ///
                /// ```
                /// use std::time::Duration;
                /// use sandloom_sdk_infra::taskqueue::{EnqueueOptions, TaskQueue};
                /// use sandloom_sdk_infra::InfraResult;
                ///
                /// async fn work_once(queue: &dyn TaskQueue) -> InfraResult<()> {
                ///     queue.enqueue("mail", "hello".into(), EnqueueOptions::default()).await?;
                ///     if let Some(reservation) = queue.reserve("mail", Duration::from_millis(100)).await? {
                ///         // ... handle reservation.task.payload, then:
                ///         queue.ack(&reservation).await?;
                ///     }
                ///     Ok(())
                /// }
                /// ```
                pub trait TaskQueue: Send + Sync {
                    /// Add a task to `queue`; returns its id.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::taskqueue::{EnqueueOptions, TaskQueue};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn schedule_reminder(queue: &dyn TaskQueue, user: u64) -> InfraResult<String> {
                    ///     let in_a_day = EnqueueOptions::default().with_delay(Duration::from_secs(24 * 3600));
                    ///     queue.enqueue("reminders", user.to_string().into(), in_a_day).await
                    /// }
                    /// ```
                    ///
                    /// With an [idempotency key](EnqueueOptions::idempotency_key) (feature [`DEDUPE`]), an
                    /// enqueue whose key the queue still remembers creates nothing and returns the first task's
                    /// id, whatever its payload and delay. The queue remembers a key as long as its task is in
                    /// the queue (ready, delayed, reserved or dead-lettered) and for at least the driver's dedupe
                    /// window after the task left it (24 hours by default for the built-in drivers);
                    /// concurrent enqueues with one key create exactly one task. Without a key, every enqueue
                    /// creates a task, so retrying one that answered `Unavailable` or `Timeout` (which may have
                    /// committed) can create a copy.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::taskqueue::{EnqueueOptions, TaskQueue};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// /// Both calls answer the same id; the queue holds one task.
                    /// async fn twice(queue: &dyn TaskQueue) -> InfraResult<bool> {
                    ///     let once = || EnqueueOptions::default().with_idempotency_key("invoice-7");
                    ///     let first = queue.enqueue("billing", "7".into(), once()).await?;
                    ///     let again = queue.enqueue("billing", "7".into(), once()).await?;
                    ///     Ok(first == again)
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for an empty queue name or an idempotency key that breaks the key rules of
                    /// [`DEDUPE`]; `Unsupported` for a delay without [`DELAY`] or a key without [`DEDUPE`];
                    /// `Unavailable` when the backend fails; `Stopped` after the driver stopped.
                    #[feature = "delay", when = options.delay.is_some(), operation = "enqueue with a delay"]
                    #[feature = "dedupe", when = options.idempotency_key.is_some(), operation = "enqueue with an idempotency key"]
                    async fn enqueue(
                        &self,
                        queue: &str,
                        payload: $crate::bytes::Bytes,
                        options: $crate::taskqueue::EnqueueOptions,
                    ) -> $crate::InfraResult<String>;

                    /// Take the next ready task of `queue`, waiting up to `wait` for one; `None` when none came.
                    ///
                    /// A `reserve` still waiting when the driver is stopped answers `Stopped` promptly: it
                    /// neither waits out `wait` nor answers `None` (a consumer loop then ends instead of
                    /// polling a stopped driver).
                    ///
                    /// `wait` may be any length (see [Durations](self#durations)): zero looks once, a wait is
                    /// kept to the millisecond, and `Duration::MAX` waits until a task comes or the driver
                    /// stops. A waiting `reserve` takes a task as soon as one is ready: enqueued, nacked, or
                    /// become ready by its delay, `retry_after` or a visibility timeout ending.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::taskqueue::{Reservation, TaskQueue};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn next_job(queue: &dyn TaskQueue) -> InfraResult<Option<Reservation>> {
                    ///     queue.reserve("jobs", Duration::from_secs(20)).await // long poll
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As `enqueue`.
                    #[waits = "A cut takes no task from the queue unless the backend had already \
                        leased one for this call as the drain began (a statement in flight); such a \
                        task is delivered again once its visibility timeout ends: at least once, \
                        never lost."]
                    async fn reserve(&self, queue: &str, wait: ::std::time::Duration) -> $crate::InfraResult<Option<$crate::taskqueue::Reservation>>;

                    /// The task is done: remove it for good.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::taskqueue::{Reservation, TaskQueue};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// async fn done(queue: &dyn TaskQueue, reservation: &Reservation) -> InfraResult<()> {
                    ///     match queue.ack(reservation).await {
                    ///         // Too late: the task was (or will be) delivered again; its handler must tolerate that.
                    ///         Err(err) if err.kind() == ErrorKind::Conflict => Ok(()),
                    ///         result => result,
                    ///     }
                    /// }
                    /// ```
                    ///
                    /// A receipt is spent once acked: a second `ack` of the same reservation, or a `nack` after
                    /// the `ack`, answers `Conflict` and changes nothing (as any stale receipt does). Handlers
                    /// that ack twice by mistake learn it, and no other task is touched.
                    ///
                    /// # Errors
                    /// `Conflict` when the reservation is stale (timed out and possibly redelivered, already
                    /// acked or nacked).
                    async fn ack(&self, reservation: &$crate::taskqueue::Reservation) -> $crate::InfraResult<()>;

                    /// The task failed: deliver it again after `retry_after` (immediately when `None`), or
                    /// dead-letter it when its attempts are exhausted.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::taskqueue::{Reservation, TaskQueue};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// /// Retry with exponential backoff: 2 s, 4 s, 8 s, …
                    /// async fn retry_later(queue: &dyn TaskQueue, reservation: &Reservation) -> InfraResult<()> {
                    ///     let backoff = Duration::from_secs(1 << reservation.task.attempts.min(10));
                    ///     queue.nack(reservation, Some(backoff)).await
                    /// }
                    /// ```
                    ///
                    /// The receipt is spent by the `nack` at once, before any redelivery: acking or nacking
                    /// with it again answers `Conflict`, and changes neither the task's retry time nor its
                    /// attempts.
                    ///
                    /// `retry_after` counts from the `nack`, not from the reservation, and may be any length
                    /// (see [Durations](self#durations)): kept to the millisecond, `Duration::MAX` for as long
                    /// as the backend can hold the task.
                    ///
                    /// # Errors
                    /// `Conflict` when the reservation is stale (timed out, already acked or nacked).
                    async fn nack(
                        &self,
                        reservation: &$crate::taskqueue::Reservation,
                        retry_after: Option<::std::time::Duration>,
                    ) -> $crate::InfraResult<()>;

                    /// Up to `limit` dead-lettered tasks of `queue`, oldest first. Feature [`DEAD_LETTER`].
                    ///
                    /// A `limit` of 0 asks for none: the answer is an empty list (like SQL's `LIMIT 0`), not
                    /// an error and not every dead letter. Only `queue`'s own dead letters are listed, never
                    /// those of a queue whose name differs from it in any way (see [Names](self#names)).
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::taskqueue::{TaskQueue, TaskQueueOps};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// /// The ids of failed mails, or `None` when the driver does not keep them.
                    /// async fn failed_mails(queue: &dyn TaskQueue) -> InfraResult<Option<Vec<String>>> {
                    ///     match queue.dead_letters("mail", 100).await {
                    ///         Ok(tasks) => Ok(Some(tasks.into_iter().map(|task| task.id).collect())),
                    ///         Err(err) if err.kind() == ErrorKind::Unsupported => Ok(None),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// # use std::time::Duration;
                    /// # use sandloom_sdk_infra::{bytes::Bytes};
                    /// # use sandloom_sdk_infra::taskqueue::{EnqueueOptions, Reservation};
                    /// # struct PlainQueue;
                    /// # impl TaskQueueOps for PlainQueue {
                    /// #     async fn enqueue(&self, _: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> { unreachable!() }
                    /// #     async fn reserve(&self, _: &str, _: Duration) -> InfraResult<Option<Reservation>> { unreachable!() }
                    /// #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { unreachable!() }
                    /// #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { unreachable!() }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainQueue` implements only the required operations: no `dead_letter`.
                    /// assert_eq!(block_on(failed_mails(&PlainQueue)).unwrap(), None);
                    /// ```
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature.
                    #[feature = "dead_letter"]
                    async fn dead_letters(&self, queue: &str, limit: usize) -> $crate::InfraResult<Vec<$crate::taskqueue::Task>>;
                }
            }
        }
    };
}

crate::__taskqueue_contract!([crate::__operation_trait] []);
crate::__taskqueue_contract!([crate::__capability_constants] []);
