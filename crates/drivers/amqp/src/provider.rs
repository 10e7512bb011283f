//! `AmqpTaskQueue`: the `TaskQueue` operations and the driver lifecycle.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use lapin::ExchangeKind;
use lapin::message::Delivery;
use lapin::options::{BasicGetOptions, ExchangeDeclareOptions};
use lapin::types::FieldTable;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{
    DEAD_LETTER, DEDUPE, DELAY, EnqueueOptions, NAME, Reservation, Task, TaskQueueOps,
    TaskQueueProvider,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use crate::AmqpTaskQueueOptions;
use crate::address::Address;
use crate::engine::{Engine, Target};
use crate::errors;
use crate::message;
use crate::naming;

/// The `taskqueue.amqp` driver: task queues on RabbitMQ.
///
/// Every task queue is a durable classic queue; tasks are persistent messages, and `enqueue`
/// returns only once the broker confirmed the message (publisher confirms; a negative confirm is
/// an error). `reserve` takes a message with a manual ack and holds it as the reservation until
/// `ack`, `nack` or the visibility timeout, which the driver enforces itself. A delay (feature
/// `delay`) parks the task in a delay queue whose messages expire into the ready queue; tasks
/// that used up `max_attempts` go to the task queue's dead-letter queue (feature
/// `dead_letter`). Ready tasks come out in the order they entered the ready queue, but a task
/// that is delivered again re-enters at the back, so the driver does not declare `fifo`.
///
/// Nor does it declare `dedupe`: RabbitMQ keeps no record of what was published, so a publish
/// retried after a lost confirm is a second message, and nothing on the broker can answer "this
/// key was enqueued already" atomically with the publish. An enqueue with an idempotency key
/// answers `Unsupported`; a producer that needs the promise uses `taskqueue.postgres` or
/// `taskqueue.memory`.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
/// use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
///
/// #[tokio::main]
/// async fn main() {
///     let options = AmqpTaskQueueOptions {
///         url: "amqp://guest:guest@127.0.0.1:5672/%2f".into(),
///         ..AmqpTaskQueueOptions::default()
///     };
///     let queue = AmqpTaskQueue::from_options(options).unwrap();
///     queue.start().await.unwrap();
///     queue.enqueue("mail", "hello".into(), EnqueueOptions::default()).await.unwrap();
///     let reservation = queue.reserve("mail", Duration::from_secs(1)).await.unwrap().unwrap();
///     assert_eq!(reservation.task.payload, "hello");
///     queue.ack(&reservation).await.unwrap();
///     queue.stop().await.unwrap();
/// }
/// ```
pub struct AmqpTaskQueue {
    engine: Arc<Engine>,
}

impl fmt::Debug for AmqpTaskQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AmqpTaskQueue")
            .field("address", self.engine.address())
            .field("queue_prefix", &self.engine.prefix)
            .field("visibility_timeout", &self.engine.visibility)
            .field("max_attempts", &self.engine.max_attempts)
            .field("stopped", &self.engine.is_stopped())
            .finish_non_exhaustive()
    }
}

impl TaskQueueOps for AmqpTaskQueue {
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String> {
        self.engine.running()?;
        if options.idempotency_key.is_some() {
            return Err(InfraError::unsupported(
                NAME,
                "enqueue with an idempotency key",
                DEDUPE,
            ));
        }
        let names = self.engine.names(queue)?;
        let target = match options.delay {
            Some(delay) if !delay.is_zero() => Target::Delayed(naming::delay_ms(delay)),
            _ => Target::Ready,
        };
        let id = self.engine.new_task_id();
        self.engine
            .publish(&names, target, &id, &payload, 0)
            .await?;
        Ok(id)
    }

    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>> {
        self.engine.running()?;
        let names = self.engine.names(queue)?;
        self.engine.reserve(names, wait).await
    }

    async fn ack(&self, reservation: &Reservation) -> InfraResult<()> {
        self.engine.ack(reservation).await
    }

    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.engine.nack(reservation, retry_after).await
    }

    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        self.engine.running()?;
        let names = self.engine.names(queue)?;
        let engine = &self.engine;
        let link = engine.link().await?;
        // A channel of its own: the messages it takes go back, in order, when it closes.
        let channel = engine
            .call("opening a channel", link.scratch_channel())
            .await?;
        let mut tasks = Vec::new();
        let mut failure = None;
        while tasks.len() < limit {
            let got = tokio::time::timeout(
                engine.operation_timeout,
                channel.basic_get(names.dead.clone(), BasicGetOptions { no_ack: false }),
            )
            .await;
            match got {
                Ok(Ok(Some(got))) => {
                    let Delivery {
                        data, properties, ..
                    } = got.delivery;
                    tasks.push(Task::new(
                        message::id_of(&properties).unwrap_or_default(),
                        names.queue.clone(),
                        Bytes::from(data),
                        message::attempts_of(&properties),
                    ));
                }
                Ok(Ok(None)) => break,
                // No dead-letter queue yet: nothing was ever dead-lettered.
                Ok(Err(err)) if errors::is_not_found(&err) => break,
                Ok(Err(err)) => {
                    failure = Some(engine.failure("listing dead letters", &err));
                    break;
                }
                Err(_) => {
                    failure = Some(errors::timed_out(
                        engine.address(),
                        "listing dead letters",
                        engine.operation_timeout,
                    ));
                    break;
                }
            }
        }
        if channel.status().connected() {
            let _ = tokio::time::timeout(
                engine.operation_timeout,
                channel.close(200, "listed".into()),
            )
            .await;
        }
        match failure {
            Some(err) => Err(err),
            None => Ok(tasks),
        }
    }
}

impl Driver for AmqpTaskQueue {
    type Options = AmqpTaskQueueOptions;

    fn supported_features() -> &'static [&'static str] {
        &[DELAY, DEAD_LETTER]
    }

    fn validate(options: &AmqpTaskQueueOptions) -> Result<(), DriverError> {
        match options.problem() {
            Some(problem) => Err(DriverError::new(problem).about_option_it_names()),
            None => Ok(()),
        }
    }

    fn from_options(options: AmqpTaskQueueOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        let address = Address::parse(options.url.expose()).map_err(DriverError::new)?;
        Ok(Self {
            engine: Arc::new(Engine::new(&options, address)),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        self.engine
            .connector
            .connect()
            .await
            .map_err(|err| DriverError::new(err.message().to_owned()))
    }

    async fn stop(&self) -> Result<(), DriverError> {
        if !self.engine.mark_stopped() {
            return Ok(());
        }
        self.engine.ledger.clear();
        self.engine
            .connector
            .close()
            .await
            .map_err(DriverError::new)
    }

    async fn health(&self) -> Health {
        if self.engine.is_stopped() {
            return Health::Unhealthy(InfraError::stopped(NAME).to_string());
        }
        let link = match self.engine.link().await {
            Ok(link) => link,
            Err(err) => return Health::Unhealthy(err.to_string()),
        };
        // A round trip: a passive declaration of an exchange every broker has.
        let check = self
            .engine
            .call(
                "checking the broker",
                link.publisher.exchange_declare(
                    "amq.direct".into(),
                    ExchangeKind::Direct,
                    ExchangeDeclareOptions {
                        passive: true,
                        ..ExchangeDeclareOptions::default()
                    },
                    FieldTable::default(),
                ),
            )
            .await;
        match check {
            Ok(()) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }
}

impl TaskQueueProvider for AmqpTaskQueue {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

impl AmqpTaskQueue {
    /// Whether the driver holds an open connection right now (no I/O): `false` before `start`,
    /// after `stop`, and while it reconnects.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
    ///
    /// let queue = AmqpTaskQueue::from_options(AmqpTaskQueueOptions::default()).unwrap();
    /// assert!(!queue.is_connected()); // `from_options` does no I/O
    /// ```
    pub fn is_connected(&self) -> bool {
        self.engine.connector.connected()
    }
}
