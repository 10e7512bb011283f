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

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{InfraError, InfraResult};

/// Capability name of the task queue.
pub const NAME: &str = "taskqueue";

/// Feature: [`EnqueueOptions::delay`] is honoured.
pub const DELAY: &str = "delay";
/// Feature: exhausted tasks are kept and [`TaskQueue::dead_letters`] lists them.
pub const DEAD_LETTER: &str = "dead_letter";
/// Feature: tasks of one queue that are ready are reserved in the order they were enqueued.
pub const FIFO: &str = "fifo";
/// Every optional feature a task queue driver may declare.
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
    /// # Errors
    /// As `enqueue`.
    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>>;

    /// The task is done: remove it for good.
    ///
    /// # Errors
    /// `Conflict` when the reservation is stale (timed out and possibly redelivered).
    async fn ack(&self, reservation: &Reservation) -> InfraResult<()>;

    /// The task failed: deliver it again after `retry_after` (immediately when `None`), or
    /// dead-letter it when its attempts are exhausted.
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
    /// # Errors
    /// `Unsupported` without the feature.
    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        let _ = (queue, limit);
        Err(InfraError::unsupported(NAME, "dead_letters", DEAD_LETTER))
    }
}
