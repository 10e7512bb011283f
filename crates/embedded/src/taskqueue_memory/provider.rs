//! The `taskqueue.memory` driver: queues in the process, leases by deadline.

use crate::serving::Serving;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{
    DEAD_LETTER, DEDUPE, DELAY, EnqueueOptions, FIFO, NAME, Reservation, Task, TaskQueueOps,
    TaskQueueProvider,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::options::MemoryTaskQueueOptions;

/// The longest delay, `retry_after` or wait the driver holds: a hundred years (the contract's
/// least for "as long as possible"), and longer ones are held this long.
const FAR_FUTURE: Duration = Duration::from_hours(24 * 366 * 100);

/// `now + duration`, with `duration` held at [`FAR_FUTURE`] when longer (never an overflow).
fn after(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration.min(FAR_FUTURE)).unwrap_or(now)
}

#[derive(Debug)]
enum Status {
    Ready,
    Delayed,
    Reserved { receipt: String, until: Instant },
}

#[derive(Debug)]
struct Entry {
    id: String,
    payload: Bytes,
    attempts: u32,
    status: Status,
    /// Its idempotency key, if it was enqueued with one.
    key: Option<String>,
}

/// One named queue. Every task is in `tasks` and in exactly one of `ready`, `delayed` and
/// `reserved`, as its `status` says; `seq` (enqueue order) is its key everywhere.
#[derive(Debug, Default)]
struct Queue {
    tasks: HashMap<u64, Entry>,
    ready: BTreeSet<u64>,
    delayed: BTreeSet<(Instant, u64)>,
    reserved: BTreeSet<(Instant, u64)>,
    dead: VecDeque<Task>,
    /// Idempotency key → the id of the task it names: while the task is in the queue (dead
    /// letters included), then until the key's turn comes in `forgetting`.
    keys: HashMap<String, String>,
    /// Keys of acked tasks in the order they are forgotten (the window is the same for all):
    /// when, the key, and the id it named then (the key may name a newer task by now).
    forgetting: VecDeque<(Instant, String, String)>,
    notify: Arc<Notify>,
}

impl Queue {
    /// Forget the keys of acked tasks whose dedupe window has passed.
    fn forget_keys(&mut self, now: Instant) {
        while let Some((until, _, _)) = self.forgetting.front() {
            if *until > now {
                break;
            }
            let Some((_, key, id)) = self.forgetting.pop_front() else {
                break;
            };
            if self.keys.get(&key) == Some(&id) {
                self.keys.remove(&key);
            }
        }
    }

    /// Task `seq` was acked: it leaves the queue, and its key starts its dedupe window.
    fn remove_acked(&mut self, seq: u64, now: Instant, window: Duration) {
        let Some(entry) = self.tasks.remove(&seq) else {
            return;
        };
        let Some(key) = entry.key else {
            return;
        };
        self.forgetting
            .push_back((after(now, window), key, entry.id));
        self.forget_keys(now);
    }

    /// Make due delayed tasks ready, and expired reservations ready again or dead.
    fn promote(&mut self, name: &str, now: Instant, max_attempts: u32) {
        while let Some(&(at, seq)) = self.delayed.first() {
            if at > now {
                break;
            }
            self.delayed.pop_first();
            if let Some(entry) = self.tasks.get_mut(&seq) {
                entry.status = Status::Ready;
                self.ready.insert(seq);
            }
        }
        while let Some(&(until, seq)) = self.reserved.first() {
            if until > now {
                break;
            }
            self.reserved.pop_first();
            let exhausted = self
                .tasks
                .get(&seq)
                .is_some_and(|entry| entry.attempts >= max_attempts);
            if exhausted {
                self.bury(name, seq);
            } else if let Some(entry) = self.tasks.get_mut(&seq) {
                entry.status = Status::Ready;
                self.ready.insert(seq);
            }
        }
    }

    /// Move task `seq` (no longer in any of the status sets) to the dead letters.
    fn bury(&mut self, name: &str, seq: u64) {
        if let Some(entry) = self.tasks.remove(&seq) {
            self.dead
                .push_back(Task::new(entry.id, name, entry.payload, entry.attempts));
        }
    }

    /// When the next delayed task is due or the next reservation expires.
    fn next_timer(&self) -> Option<Instant> {
        let delayed = self.delayed.first().map(|(at, _)| *at);
        let reserved = self.reserved.first().map(|(until, _)| *until);
        delayed.into_iter().chain(reserved).min()
    }

    /// Put task `seq` in the ready set, or the delayed one when `at` is later than `now`.
    fn schedule(&mut self, seq: u64, now: Instant, at: Option<Instant>) -> Status {
        match at {
            Some(at) if at > now => {
                self.delayed.insert((at, seq));
                Status::Delayed
            }
            _ => {
                self.ready.insert(seq);
                Status::Ready
            }
        }
    }

    /// The task `reservation` holds, if the reservation is current; it leaves the reserved set.
    fn settle(&mut self, reservation: &Reservation, now: Instant) -> InfraResult<u64> {
        let stale = || stale(reservation);
        let seq = reservation
            .task
            .id
            .strip_prefix("task-")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(stale)?;
        let entry = self.tasks.get(&seq).ok_or_else(stale)?;
        match &entry.status {
            Status::Reserved { receipt, until } if *receipt == reservation.receipt => {
                if *until <= now {
                    return Err(stale());
                }
                self.reserved.remove(&(*until, seq));
                Ok(seq)
            }
            _ => Err(stale()),
        }
    }
}

/// `Conflict`: `reservation` no longer holds its task.
fn stale(reservation: &Reservation) -> InfraError {
    InfraError::conflict(
        NAME,
        format!(
            "the reservation of task {:?} is stale: it was acked, nacked, or timed out",
            reservation.task.id
        ),
    )
}

#[derive(Debug, Default)]
struct State {
    queues: HashMap<String, Queue>,
    enqueued: u64,
    deliveries: u64,
}

impl State {
    fn queue(&mut self, name: &str) -> &mut Queue {
        self.queues.entry(name.to_owned()).or_default()
    }
}

/// The `taskqueue.memory` driver: queues inside the process, lost when it exits.
///
/// Queues are created on first use. Ready tasks are reserved oldest-enqueued first (feature
/// `fifo`); `enqueue` honours a delay (feature `delay`). A reservation hides its task for the
/// visibility timeout; each delivery increments `attempts` and carries a fresh receipt. A task
/// whose last allowed delivery is nacked or times out moves to the queue's dead letters
/// (feature `dead_letter`), kept until the driver stops. `reserve` waits on a notification,
/// waking as soon as a task is enqueued, nacked, or becomes due.
///
/// Feature `dedupe`: an idempotency key names its task for as long as the task is in the queue
/// (dead letters included) and for `dedupe_window_ms` after it is acked (24 hours by default);
/// meanwhile an enqueue with the key returns that task's id and creates nothing. Keys are
/// checked and recorded under the same lock as the task, so concurrent enqueues with one key
/// create one task. Remembered keys of acked tasks cost memory until their window ends.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
/// use sandloom_embedded::{MemoryTaskQueue, MemoryTaskQueueOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let queue = MemoryTaskQueue::from_options(MemoryTaskQueueOptions::default()).unwrap();
///     queue.enqueue("mail", "hello".into(), EnqueueOptions::default()).await.unwrap();
///     let reservation = queue.reserve("mail", Duration::from_secs(1)).await.unwrap().unwrap();
///     assert_eq!(reservation.task.payload, "hello");
///     assert_eq!(reservation.task.attempts, 1);
///     queue.ack(&reservation).await.unwrap();
/// }
/// ```
#[derive(Debug)]
pub struct MemoryTaskQueue {
    visibility: Duration,
    max_attempts: u32,
    dedupe_window: Duration,
    salt: u64,
    state: Mutex<State>,
    serving: Serving,
}

fn check_queue(queue: &str) -> InfraResult<()> {
    if queue.is_empty() {
        Err(InfraError::invalid_input(
            NAME,
            "queue names must not be empty",
        ))
    } else {
        Ok(())
    }
}

impl MemoryTaskQueue {
    fn state(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock; recover anyway rather than propagate.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserve the oldest ready task of `name` now, or say when to look again.
    fn try_reserve(&self, name: &str) -> Result<Reservation, Option<Instant>> {
        let now = Instant::now();
        let mut state = self.state();
        state.deliveries += 1;
        let receipt = format!("r-{}-{:x}", state.deliveries, self.salt);
        let queue = state.queue(name);
        queue.promote(name, now, self.max_attempts);
        let Some(seq) = queue.ready.pop_first() else {
            return Err(queue.next_timer());
        };
        let until = after(now, self.visibility);
        let Some(entry) = queue.tasks.get_mut(&seq) else {
            return Err(queue.next_timer());
        };
        entry.attempts = entry.attempts.saturating_add(1);
        entry.status = Status::Reserved {
            receipt: receipt.clone(),
            until,
        };
        let task = Task::new(
            entry.id.clone(),
            name,
            entry.payload.clone(),
            entry.attempts,
        );
        queue.reserved.insert((until, seq));
        // Waiting consumers must now also wake when this reservation expires.
        queue.notify.notify_waiters();
        Ok(Reservation::new(task, receipt))
    }
}

impl TaskQueueOps for MemoryTaskQueue {
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String> {
        self.serving.check(NAME)?;
        check_queue(queue)?;
        let key = options.checked_idempotency_key()?;
        let now = Instant::now();
        let mut state = self.state();
        if let Some(key) = key {
            let q = state.queue(queue);
            q.forget_keys(now);
            if let Some(first) = q.keys.get(key) {
                return Ok(first.clone());
            }
        }
        state.enqueued += 1;
        let seq = state.enqueued;
        let id = format!("task-{seq}");
        let due = options.delay.map(|delay| after(now, delay));
        let q = state.queue(queue);
        let status = q.schedule(seq, now, due);
        let entry = Entry {
            id: id.clone(),
            payload,
            attempts: 0,
            status,
            key: key.map(str::to_owned),
        };
        if let Some(key) = key {
            q.keys.insert(key.to_owned(), id.clone());
        }
        q.tasks.insert(seq, entry);
        q.notify.notify_waiters();
        Ok(id)
    }

    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>> {
        self.serving.check(NAME)?;
        check_queue(queue)?;
        let deadline = Instant::now().checked_add(wait);
        let notify = Arc::clone(&self.state().queue(queue).notify);
        loop {
            // Registered before looking, so a change made after the look wakes this waiter.
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            self.serving.check(NAME)?;
            let next_timer = match self.try_reserve(queue) {
                Ok(reservation) => return Ok(Some(reservation)),
                Err(next_timer) => next_timer,
            };
            if deadline.is_some_and(|deadline| deadline <= Instant::now()) {
                return Ok(None);
            }
            match next_timer.into_iter().chain(deadline).min() {
                Some(wake_at) => {
                    let _ = tokio::time::timeout_at(wake_at, notified).await;
                }
                None => notified.await,
            }
        }
    }

    async fn ack(&self, reservation: &Reservation) -> InfraResult<()> {
        self.serving.check(NAME)?;
        check_queue(&reservation.task.queue)?;
        let now = Instant::now();
        let mut state = self.state();
        let queue = state
            .queues
            .get_mut(&reservation.task.queue)
            .ok_or_else(|| stale(reservation))?;
        let seq = queue.settle(reservation, now)?;
        queue.remove_acked(seq, now, self.dedupe_window);
        Ok(())
    }

    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.serving.check(NAME)?;
        let name = reservation.task.queue.as_str();
        check_queue(name)?;
        let now = Instant::now();
        let mut state = self.state();
        let queue = state
            .queues
            .get_mut(name)
            .ok_or_else(|| stale(reservation))?;
        let seq = queue.settle(reservation, now)?;
        let exhausted = queue
            .tasks
            .get(&seq)
            .is_some_and(|entry| entry.attempts >= self.max_attempts);
        if exhausted {
            queue.bury(name, seq);
            return Ok(());
        }
        let status = queue.schedule(seq, now, retry_after.map(|delay| after(now, delay)));
        if let Some(entry) = queue.tasks.get_mut(&seq) {
            entry.status = status;
        }
        queue.notify.notify_waiters();
        Ok(())
    }

    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        self.serving.check(NAME)?;
        check_queue(queue)?;
        let now = Instant::now();
        let mut state = self.state();
        let Some(q) = state.queues.get_mut(queue) else {
            return Ok(Vec::new());
        };
        q.promote(queue, now, self.max_attempts);
        Ok(q.dead.iter().take(limit).cloned().collect())
    }
}

impl Driver for MemoryTaskQueue {
    type Options = MemoryTaskQueueOptions;

    fn supported_features() -> &'static [&'static str] {
        &[DELAY, DEAD_LETTER, FIFO, DEDUPE]
    }

    fn validate(options: &MemoryTaskQueueOptions) -> Result<(), DriverError> {
        if options.visibility_timeout_ms == 0 {
            return Err(DriverError::new("must be at least 1").at_option("visibility_timeout_ms"));
        }
        if options.max_attempts == 0 {
            return Err(DriverError::new("must be at least 1").at_option("max_attempts"));
        }
        Ok(())
    }

    fn from_options(options: MemoryTaskQueueOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        Ok(Self {
            visibility: Duration::from_millis(options.visibility_timeout_ms),
            max_attempts: options.max_attempts,
            dedupe_window: Duration::from_millis(options.dedupe_window_ms),
            salt: RandomState::new().hash_one(SystemTime::now()),
            state: Mutex::new(State::default()),
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        let queues = std::mem::take(&mut self.state().queues);
        // Waiting `reserve` calls wake, see the driver stopped, and answer `Stopped`.
        for queue in queues.values() {
            queue.notify.notify_waiters();
        }
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl TaskQueueProvider for MemoryTaskQueue {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests;
