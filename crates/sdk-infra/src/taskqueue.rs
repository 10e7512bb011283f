//! The `taskqueue` capability: durable, at-least-once background work.
//!
//! Required operations: [`enqueue`](TaskQueue::enqueue), [`reserve`](TaskQueue::reserve),
//! [`ack`](TaskQueue::ack), [`nack`](TaskQueue::nack). Optional features: [`DELAY`],
//! [`DEAD_LETTER`], [`FIFO`].
//!
//! # Delivery
//! A reserved task is invisible to other consumers for the driver's visibility timeout. If it is
//! neither acked nor nacked in time (the worker died), it is delivered again. A task is therefore
//! delivered at least once, and a handler must tolerate a repeat. A task that has been delivered
//! the driver's retry limit of times and is nacked or times out again moves to the dead-letter
//! list (feature [`DEAD_LETTER`]) instead of being retried.
//!
//! # Names
//! The constants are the names drivers declare and modules require:
//!
//! ```
//! use sandloom_sdk_infra::taskqueue::{DEAD_LETTER, DELAY, FEATURES, FIFO, NAME, REQUIRED_OPERATIONS};
//! use sandloom_sdk_infra::{requires, TASK_QUEUE};
//!
//! // Startup refuses a `taskqueue.mail` whose driver cannot delay tasks.
//! requires!(TASK_QUEUE, "mail", features = [DELAY]);
//!
//! # fn main() {
//! assert_eq!(NAME, TASK_QUEUE.name());
//! assert_eq!((DELAY, DEAD_LETTER, FIFO), ("delay", "dead_letter", "fifo"));
//! assert_eq!(FEATURES, [DELAY, DEAD_LETTER, FIFO]);
//! assert_eq!(REQUIRED_OPERATIONS, ["enqueue", "reserve", "ack", "nack"]);
//! # }
//! ```

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{InfraError, InfraResult};

/// Capability name of the task queue, as written in `INFRA` (`[taskqueue.default]`); see the
/// [module example](self#names).
pub const NAME: &str = "taskqueue";

/// Feature: [`EnqueueOptions::delay`] is honoured.
pub const DELAY: &str = "delay";
/// Feature: exhausted tasks are kept and [`TaskQueue::dead_letters`] lists them.
pub const DEAD_LETTER: &str = "dead_letter";
/// Feature: tasks of one queue that are ready are reserved in the order they were enqueued.
pub const FIFO: &str = "fifo";
/// Every optional feature a task queue driver may declare: [`DELAY`], [`DEAD_LETTER`],
/// [`FIFO`].
pub const FEATURES: &[&str] = &[DELAY, DEAD_LETTER, FIFO];
/// Every required operation: never a feature.
pub const REQUIRED_OPERATIONS: &[&str] = &["enqueue", "reserve", "ack", "nack"];

/// How to enqueue a task.
///
/// ```
/// use std::time::Duration;
/// use sandloom_sdk_infra::taskqueue::EnqueueOptions;
/// let later = EnqueueOptions::default().with_delay(Duration::from_secs(60));
/// assert_eq!(later.delay, Some(Duration::from_secs(60)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnqueueOptions {
    /// Do not deliver before this much time has passed (feature [`DELAY`]).
    pub delay: Option<Duration>,
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
#[async_trait]
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
    /// # Errors
    /// `InvalidInput` for an empty queue name; `Unsupported` for a delay without [`DELAY`];
    /// `Unavailable` when the backend fails; `Stopped` after the driver stopped.
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String>;

    /// Take the next ready task of `queue`, waiting up to `wait` for one; `None` when none came.
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
    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>>;

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
    /// # Errors
    /// `Conflict` when the reservation is stale (timed out and possibly redelivered).
    async fn ack(&self, reservation: &Reservation) -> InfraResult<()>;

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
    /// # Errors
    /// `Conflict` when the reservation is stale.
    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()>;

    /// Up to `limit` dead-lettered tasks of `queue`, oldest first. Feature [`DEAD_LETTER`].
    ///
    /// ```
    /// use sandloom_sdk_infra::taskqueue::TaskQueue;
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
    /// # use sandloom_sdk_infra::{async_trait, bytes::Bytes};
    /// # use sandloom_sdk_infra::taskqueue::{EnqueueOptions, Reservation};
    /// # struct PlainQueue;
    /// # #[async_trait]
    /// # impl TaskQueue for PlainQueue {
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
    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        let _ = (queue, limit);
        Err(InfraError::unsupported(NAME, "dead_letters", DEAD_LETTER))
    }
}
