//! Taking tasks: `basic.get` first, then a consumer of prefetch 1 while `reserve` waits; and
//! giving back deliveries that no caller will see.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt as _, StreamExt as _};
use lapin::Consumer;
use lapin::message::{BasicGetMessage, Delivery};
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicGetOptions, BasicNackOptions,
};
use lapin::types::{FieldTable, ShortString};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{NAME, Reservation, Task};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::engine::{Engine, Target};
use crate::errors;
use crate::link::Link;
use crate::message;
use crate::naming::QueueNames;

type GetFuture = Pin<Box<dyn Future<Output = lapin::Result<Option<BasicGetMessage>>> + Send>>;

/// The future of a `basic.get` whose answer must not be lost: dropped before it finished (the
/// caller gave up, or the operation timed out), it goes on in a task of its own that gives back
/// whatever the answer brings.
struct PendingGet {
    future: Option<GetFuture>,
    engine: Arc<Engine>,
    names: QueueNames,
}

impl PendingGet {
    /// The answer, or `None` when it did not come within `limit`.
    async fn answer(&mut self, limit: Duration) -> Option<lapin::Result<Option<BasicGetMessage>>> {
        let future = self.future.as_mut()?;
        let answer = tokio::time::timeout(limit, future).await.ok()?;
        self.future = None;
        Some(answer)
    }
}

impl Drop for PendingGet {
    fn drop(&mut self) {
        let Some(future) = self.future.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (engine, names) = (Arc::clone(&self.engine), self.names.clone());
        runtime.spawn(async move {
            if let Ok(Some(late)) = future.await {
                engine.give_back(&names, late.delivery).await;
            }
        });
    }
}

impl Engine {
    /// `reserve`: one `basic.get` in the caller's task; waiting for a task, and the rare cases,
    /// in a task of its own, so a caller that gives up never strands a delivery (whatever
    /// arrives becomes a reservation, which times out like any other).
    pub(crate) async fn reserve(
        self: &Arc<Self>,
        names: QueueNames,
        wait: Duration,
    ) -> InfraResult<Option<Reservation>> {
        let deadline = Instant::now().checked_add(wait);
        let link = self.link().await?;
        self.ensure_ready(&link, &names).await?;
        let first = match self.get(&link, &names).await {
            // No `.await` between the answer and the reservation: nothing can drop it.
            Ok(Some(delivery))
                if !delivery.redelivered
                    && message::still_delayed_ms(&delivery.properties).is_none() =>
            {
                return Ok(Some(self.accept_fresh(&names, delivery)));
            }
            Ok(Some(delivery)) => Some(delivery),
            Ok(None) if wait.is_zero() => return Ok(None),
            Ok(None) => None,
            Err(err) if err.kind() == ErrorKind::NotFound => {
                link.forget_declared(&names.ready);
                None
            }
            Err(err) => return Err(err),
        };
        tokio::spawn(Arc::clone(self).receive(names, deadline, first))
            .await
            .unwrap_or_else(|err| {
                Err(InfraError::new(
                    ErrorKind::Backend,
                    NAME,
                    format!("reserve failed: {err}"),
                ))
            })
    }

    /// Take the next ready task of `names` (starting with `first`, a delivery already taken),
    /// waiting until `deadline`.
    async fn receive(
        self: Arc<Self>,
        names: QueueNames,
        deadline: Option<Instant>,
        first: Option<Delivery>,
    ) -> InfraResult<Option<Reservation>> {
        let mut stop = self.stop_receiver();
        if let Some(delivery) = first
            && let Some(reservation) = self.accept(&names, delivery).await?
        {
            return Ok(Some(reservation));
        }
        let mut vanished = 0;
        loop {
            let link = self.link().await?;
            self.ensure_ready(&link, &names).await?;
            let got = match self.get(&link, &names).await {
                Ok(got) => got,
                // Deleted since it was declared (`queue_ttl_ms`, or by hand): declare it again.
                Err(err) if err.kind() == ErrorKind::NotFound && vanished == 0 => {
                    vanished += 1;
                    link.forget_declared(&names.ready);
                    continue;
                }
                Err(err) => return Err(err),
            };
            if let Some(delivery) = got {
                match self.accept(&names, delivery).await? {
                    Some(reservation) => return Ok(Some(reservation)),
                    None => continue,
                }
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Ok(None);
            }
            match self.consume(&link, &names, deadline, &mut stop).await? {
                Some(reservation) => return Ok(Some(reservation)),
                None if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                    return Ok(None);
                }
                // The broker cancelled the consumer (the queue was deleted): look again.
                None => {}
            }
        }
    }

    /// One `basic.get`; its answer is never lost (see [`PendingGet`]).
    async fn get(
        self: &Arc<Self>,
        link: &Link,
        names: &QueueNames,
    ) -> InfraResult<Option<Delivery>> {
        let channel = link.consumer.clone();
        let queue = names.ready.clone();
        let mut pending = PendingGet {
            future: Some(Box::pin(async move {
                channel
                    .basic_get(queue, BasicGetOptions { no_ack: false })
                    .await
            })),
            engine: Arc::clone(self),
            names: names.clone(),
        };
        match pending.answer(self.operation_timeout).await {
            Some(Ok(got)) => Ok(got.map(|got| got.delivery)),
            Some(Err(err)) if errors::is_not_found(&err) => Err(InfraError::not_found(
                NAME,
                format!("queue {:?} does not exist", names.ready.as_str()),
            )),
            Some(Err(err)) => Err(self.failure("taking a task", &err)),
            None if self.is_stopped() => Err(InfraError::stopped(NAME)),
            None => Err(errors::timed_out(
                self.address(),
                "taking a task",
                self.operation_timeout,
            )),
        }
    }

    /// Wait for a delivery with a consumer of prefetch 1, until `deadline`.
    async fn consume(
        self: &Arc<Self>,
        link: &Link,
        names: &QueueNames,
        deadline: Option<Instant>,
        stop: &mut watch::Receiver<bool>,
    ) -> InfraResult<Option<Reservation>> {
        let tag = self.new_consumer_tag();
        let channel = link.consumer.clone();
        let (queue, consumer_tag) = (names.ready.clone(), tag.clone());
        let mut start = Box::pin(async move {
            channel
                .basic_consume(
                    queue,
                    consumer_tag,
                    BasicConsumeOptions::default(),
                    FieldTable::default(),
                )
                .await
        });
        let mut consumer = match tokio::time::timeout(self.operation_timeout, &mut start).await {
            Ok(Ok(consumer)) => consumer,
            Ok(Err(err)) => return Err(self.failure("waiting for a task", &err)),
            Err(_) => {
                // The consumer may still start: retire it then.
                let engine = Arc::clone(self);
                let (channel, names) = (link.consumer.clone(), names.clone());
                tokio::spawn(async move {
                    if let Ok(consumer) = start.await {
                        engine.retire(channel, consumer, tag, names).await;
                    }
                });
                return Err(errors::timed_out(
                    self.address(),
                    "waiting for a task",
                    self.operation_timeout,
                ));
            }
        };
        let outcome = self
            .next_delivery(&mut consumer, names, deadline, stop)
            .await;
        // Cancelled in the background: `reserve` answers now, and a delivery that races the
        // cancel is given back to the queue rather than stranded in the consumer's buffer.
        tokio::spawn(Arc::clone(self).retire(link.consumer.clone(), consumer, tag, names.clone()));
        outcome
    }

    /// Cancel `consumer` and give back every delivery it still receives until the broker
    /// confirms the cancel (with prefetch 1, at most one).
    async fn retire(
        self: Arc<Self>,
        channel: lapin::Channel,
        mut consumer: Consumer,
        tag: ShortString,
        names: QueueNames,
    ) {
        if channel.status().connected() {
            let _ = channel
                .basic_cancel(tag, BasicCancelOptions::default())
                .await;
        }
        while let Some(Some(Ok(delivery))) = consumer.next().now_or_never() {
            self.give_back(&names, delivery).await;
        }
    }

    /// A copy that came out of its last delay queue before its delay ended (a delay longer than
    /// one delay queue holds): publish it to a delay queue for the rest, then ack it. Its
    /// attempt count stays: it was never delivered.
    async fn park_again(
        &self,
        names: &QueueNames,
        delivery: Delivery,
        left_ms: u64,
    ) -> InfraResult<()> {
        let Delivery {
            data,
            properties,
            acker,
            ..
        } = delivery;
        let attempts = message::attempts_of(&properties);
        let id = message::id_of(&properties).unwrap_or_else(|| self.new_task_id());
        let published = self
            .publish(names, Target::Delayed(left_ms), &id, &data, attempts)
            .await;
        // A lost ack leaves the old copy to the broker, which hands it out again: it is parked
        // again then, a second copy at worst, which at-least-once allows.
        let limit = self.operation_timeout;
        if published.is_ok() {
            let _ = tokio::time::timeout(limit, acker.ack(BasicAckOptions::default())).await;
        } else {
            let requeue = BasicNackOptions {
                requeue: true,
                multiple: false,
            };
            let _ = tokio::time::timeout(limit, acker.nack(requeue)).await;
        }
        published
    }

    /// Put a delivery no caller will see back in its queue, its attempt count unchanged (raised
    /// by one when the broker redelivered it: that earlier delivery was lost).
    async fn give_back(&self, names: &QueueNames, delivery: Delivery) {
        if let Some(left) = message::still_delayed_ms(&delivery.properties) {
            if let Err(err) = self.park_again(names, delivery, left).await {
                tracing::warn!(
                    queue = names.queue.as_str(),
                    "taskqueue.amqp: a task delayed beyond one delay queue was handed back to the broker as is: {}",
                    err.message()
                );
            }
            return;
        }
        let Delivery {
            data,
            properties,
            redelivered,
            acker,
            ..
        } = delivery;
        let attempts = message::attempts_of(&properties).saturating_add(u32::from(redelivered));
        let id = message::id_of(&properties).unwrap_or_else(|| self.new_task_id());
        let task = Task::new(id, names.queue.clone(), Bytes::from(data), attempts);
        if let Err(err) = self.settle(names, task, &acker, None).await {
            tracing::warn!(
                queue = names.queue.as_str(),
                "taskqueue.amqp: a delivery no reserve took was handed back to the broker as is: {}",
                err.message()
            );
        }
    }

    async fn next_delivery(
        self: &Arc<Self>,
        consumer: &mut Consumer,
        names: &QueueNames,
        deadline: Option<Instant>,
        stop: &mut watch::Receiver<bool>,
    ) -> InfraResult<Option<Reservation>> {
        loop {
            let item = tokio::select! {
                item = consumer.next() => item,
                () = until(deadline) => return Ok(None),
                _ = stop.changed() => return Err(InfraError::stopped(NAME)),
            };
            match item {
                Some(Ok(delivery)) => {
                    if let Some(reservation) = self.accept(names, delivery).await? {
                        return Ok(Some(reservation));
                    }
                }
                Some(Err(err)) => return Err(self.failure("waiting for a task", &err)),
                None => return Ok(None),
            }
        }
    }

    /// Turn a delivery into a reservation. A delivery the broker redelivers (its consumer's
    /// connection was lost before it was settled) counts as an attempt: it is republished with
    /// its count raised, or dead-lettered, and `None` says to look again.
    async fn accept(
        self: &Arc<Self>,
        names: &QueueNames,
        delivery: Delivery,
    ) -> InfraResult<Option<Reservation>> {
        if let Some(left) = message::still_delayed_ms(&delivery.properties) {
            self.park_again(names, delivery, left).await?;
            return Ok(None);
        }
        if !delivery.redelivered {
            return Ok(Some(self.accept_fresh(names, delivery)));
        }
        let Delivery {
            data,
            properties,
            acker,
            ..
        } = delivery;
        let before = message::attempts_of(&properties);
        let id = message::id_of(&properties).unwrap_or_else(|| self.new_task_id());
        let lost = Task::new(
            id,
            names.queue.clone(),
            Bytes::from(data),
            before.saturating_add(1),
        );
        self.settle(names, lost, &acker, None).await?;
        Ok(None)
    }

    /// A reservation of a delivery the broker has not redelivered.
    fn accept_fresh(self: &Arc<Self>, names: &QueueNames, delivery: Delivery) -> Reservation {
        let Delivery {
            data,
            properties,
            acker,
            ..
        } = delivery;
        let before = message::attempts_of(&properties);
        let id = message::id_of(&properties).unwrap_or_else(|| self.new_task_id());
        let task = Task::new(
            id,
            names.queue.clone(),
            Bytes::from(data),
            before.saturating_add(1),
        );
        self.hold(task, acker)
    }
}

/// Sleep until `deadline`; forever without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
