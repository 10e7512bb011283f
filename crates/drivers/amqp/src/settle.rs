//! How a task leaves a reservation: `ack`, `nack`, or its visibility timeout.
//!
//! Whoever takes the reservation out of the ledger first (the sweeper, `ack` or `nack`) settles
//! it; the others find it gone and answer `Conflict`. A timeout republishes the task (its attempt
//! count one higher) and acks the old delivery. An `ack` that arrives after the deadline but
//! before the sweeper ran settles the task as the sweeper would have, and answers `Conflict`
//! too: the task will be delivered again, so its handler must tolerate a repeat.
//!
//! The sweeper that finds expired reservations in the [`Ledger`](crate::ledger::Ledger) and
//! times them out lives here too, since timing out is settling.

use std::sync::{Arc, Weak};
use std::time::Duration;

use lapin::Acker;
use lapin::options::{BasicAckOptions, BasicNackOptions};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{NAME, Reservation, Task};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::engine::{Engine, Target};
use crate::errors;
use crate::ledger::Held;
use crate::naming::{self, QueueNames};

/// A deadline this far away stands for "never" when adding the timeout would overflow.
const FAR_FUTURE: Duration = Duration::from_hours(30 * 365 * 24);

impl Engine {
    /// Record a delivery as a reservation, due back after the visibility timeout.
    pub(crate) fn hold(self: &Arc<Self>, task: Task, acker: Acker) -> Reservation {
        let (receipt, number) = self.new_receipt();
        let deadline = self.deadline_from(Instant::now());
        self.ledger.insert(
            receipt.clone(),
            number,
            task.clone(),
            acker,
            deadline,
            |wake| tokio::spawn(sweep(Arc::downgrade(self), wake)),
        );
        Reservation::new(task, receipt)
    }

    /// When a reservation made at `now` times out.
    pub(crate) fn deadline_from(&self, now: Instant) -> Instant {
        now.checked_add(self.visibility)
            .or_else(|| now.checked_add(FAR_FUTURE))
            .unwrap_or(now)
    }

    /// Take `reservation` out of the ledger if it is current.
    fn release(&self, reservation: &Reservation) -> InfraResult<Held> {
        self.ledger
            .take(&reservation.receipt, &reservation.task.id)
            .ok_or_else(|| {
                errors::stale(
                    &reservation.task.id,
                    "it was acked, nacked or timed out (or another instance handed it out)",
                )
            })
    }

    /// The visibility timeout of `entry` passed: deliver the task again, or dead-letter it.
    pub(crate) async fn time_out(&self, entry: Held) {
        let Ok(names) = self.names(&entry.task.queue) else {
            return;
        };
        if entry.acker.poisoned() {
            // Its connection is gone: the broker took the delivery back and hands it out again.
            return;
        }
        if let Err(err) = self.settle(&names, entry.task, &entry.acker, None).await {
            tracing::warn!(
                queue = names.queue.as_str(),
                "taskqueue.amqp: a timed-out task was handed back to the broker as is: {}",
                err.message()
            );
        }
    }

    /// `ack`: the task is done.
    pub(crate) async fn ack(self: &Arc<Self>, reservation: &Reservation) -> InfraResult<()> {
        self.running()?;
        let entry = self.release(reservation)?;
        if Instant::now() >= entry.deadline {
            return Err(self.too_late(entry).await);
        }
        // Nothing above awaits: a caller that drops this future before polling it changes
        // nothing, and once polled the ack is on its way.
        match tokio::time::timeout(
            self.operation_timeout,
            entry.acker.ack(BasicAckOptions::default()),
        )
        .await
        {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err(lost(&entry.task)),
            Ok(Err(err)) => Err(self.failure("acking a task", &err)),
            Err(_) => Err(errors::timed_out(
                self.address(),
                "acking a task",
                self.operation_timeout,
            )),
        }
    }

    /// `nack`: deliver the task again after `retry_after`, or dead-letter it.
    pub(crate) async fn nack(
        self: &Arc<Self>,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.running()?;
        let names = self.names(&reservation.task.queue)?;
        let entry = self.release(reservation)?;
        if Instant::now() >= entry.deadline {
            return Err(self.too_late(entry).await);
        }
        // Settled in a task of its own: a caller that gives up half-way must not strand it.
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            engine
                .settle(&names, entry.task, &entry.acker, retry_after)
                .await
        })
        .await
        .unwrap_or_else(|err| {
            Err(InfraError::new(
                sandloom_driverkit::sdk::ErrorKind::Backend,
                NAME,
                format!("settling the task failed: {err}"),
            ))
        })
    }

    /// An `ack` or `nack` after the deadline, before the timer ran: time the task out now.
    async fn too_late(self: &Arc<Self>, entry: Held) -> InfraError {
        let id = entry.task.id.clone();
        let engine = Arc::clone(self);
        let _ = tokio::spawn(async move { engine.time_out(entry).await }).await;
        errors::stale(
            &id,
            "its visibility timeout passed; the task will be delivered again",
        )
    }

    /// Publish the next copy of `task` (delivered `task.attempts` times): to the dead letters
    /// when its attempts are exhausted, else to the ready queue or, after `retry_after`, to a
    /// delay queue. Then ack the delivery it came from. When the copy cannot be published, the
    /// delivery is handed back to the broker instead (a requeue, which the next `reserve` counts
    /// as a lost delivery).
    pub(crate) async fn settle(
        &self,
        names: &QueueNames,
        task: Task,
        acker: &Acker,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        if acker.poisoned() {
            // A copy now would be a second one: the broker redelivers the original itself.
            return Err(lost(&task));
        }
        let target = if task.attempts >= self.max_attempts {
            Target::Dead
        } else {
            match retry_after {
                Some(delay) if !delay.is_zero() => Target::Delayed(naming::delay_ms(delay)),
                _ => Target::Ready,
            }
        };
        if let Err(err) = self
            .publish(names, target, &task.id, &task.payload, task.attempts)
            .await
        {
            let _ = tokio::time::timeout(
                self.operation_timeout,
                acker.nack(BasicNackOptions {
                    requeue: true,
                    multiple: false,
                }),
            )
            .await;
            return Err(err);
        }
        // If this ack is lost with the connection, the broker redelivers the old copy too: one
        // extra delivery, which at-least-once allows.
        if let Ok(Err(err)) = tokio::time::timeout(
            self.operation_timeout,
            acker.ack(BasicAckOptions::default()),
        )
        .await
        {
            tracing::debug!(
                queue = names.queue.as_str(),
                "taskqueue.amqp: acking a republished delivery failed: {}",
                self.address().scrub(&err.to_string())
            );
        }
        Ok(())
    }
}

/// `Conflict`: the connection the task was delivered on is gone, and the broker hands the task
/// out again.
fn lost(task: &Task) -> InfraError {
    errors::stale(
        &task.id,
        "the connection it was delivered on was lost; the broker delivers the task again",
    )
}

/// The sweeper: hand every expired reservation to the engine, then sleep until the next
/// deadline or a wake-up. Holds the engine only weakly while it sleeps, so a dropped driver
/// closes its connection (and the broker redelivers its reservations).
async fn sweep(engine: Weak<Engine>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(engine) = engine.upgrade() else {
                return;
            };
            if engine.is_stopped() {
                return;
            }
            let now = Instant::now();
            let (expired, next) = engine.ledger.take_expired(now, engine.deadline_from(now));
            for entry in expired {
                let engine = Arc::clone(&engine);
                tokio::spawn(async move { engine.time_out(entry).await });
            }
            next
        };
        tokio::select! {
            () = tokio::time::sleep_until(next) => {}
            () = wake.notified() => {}
        }
    }
}
