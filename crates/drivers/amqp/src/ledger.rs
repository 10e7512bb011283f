//! The reservations one instance handed out, and the one timer task that times them out.
//!
//! Every reservation is an unacked delivery on the consumer channel, which RabbitMQ keeps for as
//! long as the connection lives: the visibility timeout is this ledger's. A single sweeper task
//! ([`crate::settle`]) sleeps until the earliest deadline (or, with nothing held, for one
//! visibility timeout) and hands the expired reservations to the engine. Every reservation gets the same timeout, so a
//! new deadline is never earlier than the one the sweeper sleeps towards: `reserve` and `ack`
//! only touch two maps under one lock, and never wake another thread.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use lapin::Acker;
use sandloom_driverkit::taskqueue::Task;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::link::lock;

/// One reservation: the delivery it holds and when it times out.
pub(crate) struct Held {
    pub(crate) task: Task,
    pub(crate) acker: Acker,
    pub(crate) deadline: Instant,
    /// Its key in the deadline order (the deadline, then a number unique to the reservation).
    key: (Instant, u64),
}

#[derive(Default)]
struct State {
    /// Receipt → reservation.
    held: HashMap<String, Held>,
    /// Deadline order → receipt.
    due: BTreeMap<(Instant, u64), String>,
    /// The time the sweeper sleeps towards; `None` until it first looked.
    armed: Option<Instant>,
    sweeper: Option<JoinHandle<()>>,
}

#[derive(Default)]
pub(crate) struct Ledger {
    state: Mutex<State>,
    wake: Arc<Notify>,
}

impl Ledger {
    /// Record a reservation; `number` is unique to it. Starts the sweeper with `sweeper` (given
    /// the notifier that wakes it) on first use, and again if the runtime it ran on is gone.
    ///
    /// The sweeper is passed in rather than spawned here because it settles what it finds,
    /// which is the engine's work ([`crate::settle`]): the ledger only keeps the books.
    pub(crate) fn insert(
        &self,
        receipt: String,
        number: u64,
        task: Task,
        acker: Acker,
        deadline: Instant,
        sweeper: impl FnOnce(Arc<Notify>) -> JoinHandle<()>,
    ) {
        let key = (deadline, number);
        let mut state = lock(&self.state);
        state.due.insert(key, receipt.clone());
        state.held.insert(
            receipt,
            Held {
                task,
                acker,
                deadline,
                key,
            },
        );
        if state.sweeper.as_ref().is_none_or(JoinHandle::is_finished) {
            state.armed = None;
            state.sweeper = Some(sweeper(Arc::clone(&self.wake)));
        }
        if state.armed.is_none_or(|armed| armed > deadline) {
            self.wake.notify_one();
        }
    }

    /// Take out the reservation of `receipt` if it holds task `task_id`.
    pub(crate) fn take(&self, receipt: &str, task_id: &str) -> Option<Held> {
        let mut state = lock(&self.state);
        if state.held.get(receipt)?.task.id != task_id {
            return None;
        }
        let entry = state.held.remove(receipt)?;
        state.due.remove(&entry.key);
        Some(entry)
    }

    /// Take out every reservation due at `now`; when the sweeper looks next: the next deadline,
    /// or `idle_until` when nothing is held.
    pub(crate) fn take_expired(&self, now: Instant, idle_until: Instant) -> (Vec<Held>, Instant) {
        let mut state = lock(&self.state);
        let mut expired = Vec::new();
        while let Some(entry) = state.due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let receipt = entry.remove();
            if let Some(held) = state.held.remove(&receipt) {
                expired.push(held);
            }
        }
        let next = state
            .due
            .first_key_value()
            .map_or(idle_until, |((at, _), _)| *at);
        state.armed = Some(next);
        (expired, next)
    }

    /// Forget every reservation (at `stop`, when closing the connection hands them back).
    pub(crate) fn clear(&self) {
        let mut state = lock(&self.state);
        state.held.clear();
        state.due.clear();
        drop(state);
        self.wake.notify_one();
    }

    /// Wake the sweeper so it notices the driver stopped or went away.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }
}
