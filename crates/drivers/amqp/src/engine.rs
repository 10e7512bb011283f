//! The state one driver instance shares with its background tasks, and its broker calls:
//! declaring queues and publishing with confirms.

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use lapin::Confirmation;
use lapin::options::{BasicPublishOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::taskqueue::NAME;
use tokio::sync::watch;

use crate::AmqpTaskQueueOptions;
use crate::address::Address;
use crate::errors;
use crate::ledger::Ledger;
use crate::link::{Connector, Link};
use crate::message;
use crate::naming::{self, QueueNames};

/// Where a copy of a task is published.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    /// The ready queue: deliverable now.
    Ready,
    /// Deliverable once this many milliseconds passed: through the delay queue of their
    /// bucket, or, beyond [`naming::MAX_DELAY`], through hops of the longest delay queue, the
    /// copy carrying when it is due ([`message::DUE_HEADER`]).
    Delayed(u64),
    /// The dead letters.
    Dead,
}

/// Everything a driver instance shares with the tasks it spawns.
pub(crate) struct Engine {
    pub(crate) connector: Connector,
    pub(crate) prefix: String,
    pub(crate) visibility: Duration,
    pub(crate) max_attempts: u32,
    pub(crate) operation_timeout: Duration,
    queue_ttl_ms: Option<u64>,
    salt: u64,
    counter: AtomicU64,
    /// Every reservation this instance handed out, and their visibility timer.
    pub(crate) ledger: Ledger,
    stopped: AtomicBool,
    stop_signal: watch::Sender<bool>,
}

impl Engine {
    pub(crate) fn new(options: &AmqpTaskQueueOptions, address: Address) -> Self {
        let salt = RandomState::new().hash_one((std::process::id(), std::time::SystemTime::now()));
        Self {
            connector: Connector::new(
                address,
                Duration::from_millis(options.connect_timeout_ms),
                Duration::from_millis(options.reconnect_backoff_max_ms),
            ),
            prefix: options.queue_prefix.clone(),
            visibility: Duration::from_millis(options.visibility_timeout_ms),
            max_attempts: options.max_attempts,
            operation_timeout: Duration::from_millis(options.operation_timeout_ms),
            queue_ttl_ms: options.queue_ttl_ms,
            salt,
            counter: AtomicU64::new(0),
            ledger: Ledger::default(),
            stopped: AtomicBool::new(false),
            stop_signal: watch::Sender::new(false),
        }
    }

    pub(crate) fn address(&self) -> &Address {
        self.connector.address()
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// `Stopped` once the driver stopped.
    pub(crate) fn running(&self) -> InfraResult<()> {
        if self.is_stopped() {
            Err(InfraError::stopped(NAME))
        } else {
            Ok(())
        }
    }

    /// Mark the driver stopped and wake every waiting `reserve`; `false` if it already was.
    pub(crate) fn mark_stopped(&self) -> bool {
        let first = !self.stopped.swap(true, Ordering::AcqRel);
        self.stop_signal.send_replace(true);
        self.ledger.wake();
        first
    }

    /// A receiver that sees the driver stop.
    pub(crate) fn stop_receiver(&self) -> watch::Receiver<bool> {
        self.stop_signal.subscribe()
    }

    /// A consumer tag unique across instances and processes.
    pub(crate) fn new_consumer_tag(&self) -> ShortString {
        ShortString::from(format!(
            "sandloom-{:016x}-{}",
            self.salt,
            self.next_number()
        ))
    }

    pub(crate) fn names(&self, queue: &str) -> InfraResult<QueueNames> {
        QueueNames::new(&self.prefix, queue)
    }

    /// A number unique within this instance.
    pub(crate) fn next_number(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A task id unique across instances and processes.
    pub(crate) fn new_task_id(&self) -> String {
        format!("t-{:016x}-{}", self.salt, self.next_number())
    }

    /// A receipt unique across instances and processes, and its number.
    pub(crate) fn new_receipt(&self) -> (String, u64) {
        let number = self.next_number();
        (format!("r-{:016x}-{number}", self.salt), number)
    }

    /// Run one broker call under the operation timeout, mapping its failure.
    pub(crate) async fn call<T>(
        &self,
        what: &str,
        call: impl Future<Output = lapin::Result<T>>,
    ) -> InfraResult<T> {
        match tokio::time::timeout(self.operation_timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(self.failure(what, &err)),
            Err(_) if self.is_stopped() => Err(InfraError::stopped(NAME)),
            Err(_) => Err(errors::timed_out(
                self.address(),
                what,
                self.operation_timeout,
            )),
        }
    }

    /// The error for a failed broker call: `Stopped` when the failure came from `stop`.
    pub(crate) fn failure(&self, what: &str, err: &lapin::Error) -> InfraError {
        if self.is_stopped() {
            InfraError::stopped(NAME)
        } else {
            errors::client(self.address(), what, err)
        }
    }

    pub(crate) async fn link(&self) -> InfraResult<Arc<Link>> {
        self.running()?;
        self.connector.link().await
    }

    /// Declare `queue` (durable) unless this connection declared it less than `fresh_for` ago.
    async fn declare(
        &self,
        link: &Link,
        queue: &ShortString,
        arguments: FieldTable,
        fresh_for: Option<Duration>,
    ) -> InfraResult<()> {
        if link.declared_within(queue, fresh_for) {
            return Ok(());
        }
        let options = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        self.call(
            &format!("declaring queue {:?}", queue.as_str()),
            link.publisher
                .queue_declare(queue.clone(), options, arguments),
        )
        .await?;
        link.mark_declared(queue);
        Ok(())
    }

    /// Arguments every queue of the driver gets: always a classic queue (whatever the vhost's
    /// default type), deleted after `expires_ms` unused when set.
    fn arguments(expires_ms: Option<u64>) -> FieldTable {
        let mut arguments = FieldTable::default();
        arguments.insert(
            "x-queue-type".into(),
            AMQPValue::LongString(LongString::from("classic")),
        );
        if let Some(ms) = expires_ms {
            arguments.insert(
                "x-expires".into(),
                AMQPValue::LongLongInt(i64::try_from(ms).unwrap_or(i64::MAX)),
            );
        }
        arguments
    }

    /// How long a declaration of a ready or dead-letter queue stays good: forever, or half the
    /// `queue_ttl_ms` (a redeclaration renews the queue's lease, publishing does not).
    fn freshness(&self) -> Option<Duration> {
        self.queue_ttl_ms.map(|ms| Duration::from_millis(ms / 2))
    }

    pub(crate) async fn ensure_ready(&self, link: &Link, names: &QueueNames) -> InfraResult<()> {
        self.declare(
            link,
            &names.ready,
            Self::arguments(self.queue_ttl_ms),
            self.freshness(),
        )
        .await
    }

    async fn ensure_dead(&self, link: &Link, names: &QueueNames) -> InfraResult<()> {
        self.declare(
            link,
            &names.dead,
            Self::arguments(self.queue_ttl_ms),
            self.freshness(),
        )
        .await
    }

    /// The delay queue for `delay_ms`: its messages expire into the ready queue.
    async fn ensure_delayed(
        &self,
        link: &Link,
        names: &QueueNames,
        delay_ms: u64,
    ) -> InfraResult<ShortString> {
        let bucket = naming::bucket(delay_ms);
        let queue = names.delay(bucket)?;
        let (expires_ms, fresh_for) = naming::delay_queue_expiry(bucket);
        let mut arguments = Self::arguments(Some(expires_ms));
        arguments.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(LongString::from("")),
        );
        arguments.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(LongString::from(names.ready.as_str())),
        );
        self.declare(link, &queue, arguments, Some(fresh_for))
            .await?;
        Ok(queue)
    }

    /// Publish a copy of task `task_id` to `target` and wait for the broker's confirm. A copy
    /// returned as unroutable (its queue expired or was deleted since it was declared) is
    /// published once more after declaring the queue again.
    pub(crate) async fn publish(
        &self,
        names: &QueueNames,
        target: Target,
        task_id: &str,
        payload: &[u8],
        attempts: u32,
    ) -> InfraResult<()> {
        for round in 0..2 {
            let link = self.link().await?;
            let (queue, expiration) = match target {
                Target::Ready => {
                    self.ensure_ready(&link, names).await?;
                    (names.ready.clone(), None)
                }
                Target::Dead => {
                    self.ensure_dead(&link, names).await?;
                    (names.dead.clone(), None)
                }
                Target::Delayed(ms) => {
                    // Expired copies go to the ready queue: it must exist when they do.
                    self.ensure_ready(&link, names).await?;
                    let hop = ms.min(naming::MAX_DELAY.as_millis() as u64);
                    (self.ensure_delayed(&link, names, hop).await?, Some(hop))
                }
            };
            let due = match target {
                Target::Delayed(ms) if Some(ms) != expiration => {
                    Some(message::now_ms().saturating_add(ms))
                }
                _ => None,
            };
            let properties = message::properties(task_id, attempts, expiration, due);
            let options = BasicPublishOptions {
                mandatory: true,
                immediate: false,
            };
            let confirm = self
                .call(
                    "publishing a task",
                    link.publisher.basic_publish(
                        "".into(),
                        queue.clone(),
                        options,
                        payload,
                        properties,
                    ),
                )
                .await?;
            match self.call("awaiting the publisher confirm", confirm).await? {
                Confirmation::Ack(None) => return Ok(()),
                Confirmation::Ack(Some(_)) if round == 0 => link.forget_declared(&queue),
                Confirmation::Ack(Some(returned)) => {
                    return Err(InfraError::new(
                        ErrorKind::Backend,
                        NAME,
                        format!(
                            "the broker at {} could not route the task to queue {:?}: {}",
                            self.address().shown(),
                            queue.as_str(),
                            returned.reply_text.as_str()
                        ),
                    ));
                }
                Confirmation::Nack(_) => {
                    return Err(InfraError::unavailable(
                        NAME,
                        format!(
                            "the broker at {} refused to store the task (negative publisher confirm)",
                            self.address().shown()
                        ),
                    ));
                }
                Confirmation::NotRequested => {
                    return Err(InfraError::new(
                        ErrorKind::Backend,
                        NAME,
                        "the publishing channel is not in confirm mode",
                    ));
                }
            }
        }
        Err(InfraError::new(
            ErrorKind::Backend,
            NAME,
            "the task could not be published",
        ))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The sweeper holds the engine weakly: let it see the engine is gone and end.
        self.ledger.wake();
    }
}
