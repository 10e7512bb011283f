//! The task queue kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation, both
//! declaring every feature and declaring none.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sandloom_conformance::Kit;
use sandloom_conformance::KitRequest;
use sandloom_conformance::taskqueue::{OBLIGATIONS, TaskQueueConformance};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{
    DEAD_LETTER, DEDUPE, DELAY, EnqueueOptions, FIFO, NAME, Reservation, Task, TaskQueueOps,
    TaskQueueProvider,
};
use sandloom_driverkit::{Driver, DriverError, Version};
use tokio::sync::Notify;

/// One way to be wrong, each named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    AckKeepsTask,
    TruncatesAtNul,
    PanicsOnEmptyPayload,
    IdFromPayload,
    IgnoresWait,
    SleepsThroughWait,
    NoVisibility,
    ReusesReceipt,
    DropsNackedTasks,
    IgnoresRetryAfter,
    NeverRedelivers,
    RedeliversEarly,
    AcceptsStaleReceipts,
    AcceptsExpiredReceipts,
    AcksSpentReceipts,
    AcceptsNackedReceipt,
    IgnoresDelay,
    DelayWithoutDeclaring,
    NoRetryLimit,
    DeadLettersTooEarly,
    TimeoutsNeverExhaust,
    DeadLettersMissing,
    DeadLettersNewestFirst,
    DeadLettersWithoutDeclaring,
    HandsTaskToTwo,
    LosesConcurrentEnqueues,
    LifoWhileFifo,
    SharedQueue,
    IgnoresKey,
    KeyWithoutDeclaring,
    DedupesAcrossQueues,
    ComparesKeyPrefix,
    CopiesUnderConcurrency,
    ForgetsKeyOnAck,
    /// Remembers the key of an acked task for ever, past its dedupe window.
    NeverForgetsKeys,
    AcceptsBadKeys,
    AcceptsEmptyQueueName,
    WorksAfterStop,
    StopLeavesReserveWaiting,
    StopEndsReserveWithNone,
    /// Waits twice as long as asked on an empty queue.
    OversleepsWait,
    /// Gives up on an empty queue at half its wait.
    GivesUpEarly,
    /// Does not wake for an enqueue: looks again once a second.
    WakesByPolling,
    /// Hides a reserved task for three times the visibility timeout.
    VisibilityTooLong,
    /// Postpones a nacked task for twice its `retry_after`.
    RetryAfterTooLong,
    /// Delays a task twice as long as asked.
    DelayTooLong,
    /// Shows its password in the error of an empty queue name.
    SecretInErrors,
    /// Rounds a `reserve`'s wait up to whole seconds (1 µs and 300 ms wait 1 s).
    RoundsWaitUpToSeconds,
    /// Rounds delays and `retry_after` to the nearest whole second (300 ms is no delay, 1.5 s
    /// is 2 s).
    RoundsDelaysToSeconds,
    /// Refuses a delay or `retry_after` beyond 30 days with `InvalidInput`.
    RefusesLongDurations,
    /// Keeps durations as `i32` seconds: 100 years wraps below zero, which it takes as now.
    OverflowsOnHugeDurations,
    /// A wait of more than ten years is taken as no wait at all.
    MaxWaitMeansNoWait,
    /// Counts a nack's `retry_after` from the reservation, not from the nack.
    RetryCountedFromReserve,
    /// Wakes at once for enqueues and nacks, but looks for tasks that became due (delay,
    /// `retry_after`, visibility timeout) only once a second.
    PollsDueTasksEachSecond,
    /// Checks a receipt, lets others run, then settles: racing acks and nacks of one receipt
    /// can all succeed.
    SettlesTwiceUnderConcurrency,
    /// Queue names are compared without case.
    FoldsQueueCase,
    /// Trailing spaces of queue names are dropped.
    TrimsQueueNames,
    /// Queue names are normalized to NFC (here: `e` and a combining acute accent become `é`).
    NormalizesQueueNames,
    /// `dead_letters` with limit 0 lists them all.
    DeadLettersLimitZeroMeansAll,
    /// A `reserve` waiting when `stop` is called notices only a second later.
    StopEndsReserveLate,
    /// A `reserve` with a zero wait answers `None` without looking.
    ZeroWaitFindsNothing,
    /// Rounds a zero delay or `retry_after` up to its resolution of a second, as it does a
    /// nonzero one shorter than that.
    ZeroDurationsTakeASecond,
    /// `reserve` looks only at the oldest task of the queue: one nacked for later, or reserved,
    /// holds back every ready task behind it.
    HeadOfLineBlocks,
    /// The last allowed delivery nacked with a `retry_after` waits that long like any retry,
    /// and is dead-lettered only when it would be delivered again.
    DeadLettersOnlyWhenDue,
    /// Ends queue names at their first NUL character (a C-string backend).
    TruncatesQueueNamesAtNul,
    /// Percent-decodes queue names (as a queue addressed in a URL path might).
    PercentDecodesQueueNames,
    /// Trims trailing spaces and dots off idempotency keys.
    TrimsIdempotencyKeys,
    /// Cuts queue names longer than 128 bytes to their first 128 (on a character boundary).
    TruncatesQueueNamesPastTheLimit,
    /// Cuts payloads larger than 1 MiB to their first MiB.
    TruncatesPayloadsPastTheLimit,
    /// Drops a task nobody reserved 2 s after it became ready (a message ttl of its own).
    ReadyTasksExpire,
    /// Holds no delay or `retry_after` longer than 2 s (a cap of its own).
    CapsPostponementsAtTwoSeconds,
    /// Drops a dead letter 2 s after it was buried.
    DeadLettersExpire,
}

/// The longest queue name and the largest payload the contract has every driver hold.
const QUEUE_NAME_LIMIT: usize = 128;
const PAYLOAD_LIMIT: usize = 1024 * 1024;
/// How long `ReadyTasksExpire` and `DeadLettersExpire` keep what they drop.
const SILENT_TTL: Duration = Duration::from_secs(2);

/// Longest a duration is held: a hundred years, as the contract asks at least.
const FOREVER: Duration = Duration::from_hours(100 * 366 * 24);

/// The password the broken driver leaks; the kit is told it is secret.
const SECRET: &str = "hunter2";

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reference")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Options {
    flaw: Flaw,
    /// Declare no feature: no delay, no dead letters, no keys, and LIFO order (allowed without
    /// `fifo`).
    minimal: bool,
    visibility_timeout: Duration,
    max_attempts: u32,
}

#[derive(Debug, Clone)]
struct Entry {
    id: String,
    queue: String,
    payload: Bytes,
    attempts: u32,
    /// Reserved: when the reservation expires. Otherwise: when the task becomes ready.
    visible_at: Instant,
    /// The current reservation's receipt, while reserved.
    receipt: Option<String>,
    /// Its idempotency key, as remembered in `State::keys`.
    key: Option<(String, String)>,
}

#[derive(Debug, Default)]
struct State {
    /// Queue key → its tasks in enqueue order.
    queues: HashMap<String, Vec<Entry>>,
    dead: HashMap<String, Vec<Task>>,
    /// (queue key, idempotency key) → the id of the task it names; kept after ack (a window
    /// longer than any test).
    keys: HashMap<(String, String), String>,
    /// Keys whose task was acked, and when: forgotten [`DEDUPE_WINDOW`] later.
    acked_keys: HashMap<(String, String), Instant>,
    enqueued: u64,
    deliveries: u64,
    /// When each dead letter was buried, by task id (`DeadLettersExpire`).
    buried: HashMap<String, Instant>,
}

struct Reference {
    options: Options,
    features: Vec<&'static str>,
    state: Mutex<State>,
    notify: Notify,
    stopped: AtomicBool,
}

/// How often a waiting `reserve` looks again for tasks that became due.
const POLL: Duration = Duration::from_millis(5);

fn stale(reservation: &Reservation) -> InfraError {
    InfraError::conflict(
        NAME,
        format!("stale reservation of {:?}", reservation.task.id),
    )
}

impl Reference {
    fn flaw(&self) -> Flaw {
        self.options.flaw
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check(&self, queue: &str) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) && self.flaw() != Flaw::WorksAfterStop {
            return Err(InfraError::stopped(NAME));
        }
        if queue.is_empty() && self.flaw() != Flaw::AcceptsEmptyQueueName {
            if self.flaw() == Flaw::SecretInErrors {
                return Err(InfraError::invalid_input(
                    NAME,
                    format!("empty queue name (server amqp://kit:{SECRET}@127.0.0.1)"),
                ));
            }
            return Err(InfraError::invalid_input(NAME, "empty queue name"));
        }
        Ok(())
    }

    fn key(&self, queue: &str) -> String {
        match self.flaw() {
            Flaw::SharedQueue => String::new(),
            Flaw::FoldsQueueCase => queue.to_lowercase(),
            Flaw::TrimsQueueNames => queue.trim_end().to_owned(),
            Flaw::NormalizesQueueNames => queue.replace("e\u{301}", "\u{e9}"),
            Flaw::PercentDecodesQueueNames => queue.replace("%6F", "o"),
            Flaw::TruncatesQueueNamesAtNul => {
                queue.split('\0').next().unwrap_or_default().to_owned()
            }
            Flaw::TruncatesQueueNamesPastTheLimit if queue.len() > QUEUE_NAME_LIMIT => {
                let end = (0..=QUEUE_NAME_LIMIT)
                    .rev()
                    .find(|end| queue.is_char_boundary(*end))
                    .unwrap_or_default();
                queue[..end].to_owned()
            }
            _ => queue.to_owned(),
        }
    }

    /// `now + duration`, held at [`FOREVER`] when longer (or, with a flaw, not).
    fn after(&self, now: Instant, duration: Duration) -> Instant {
        if self.flaw() == Flaw::OverflowsOnHugeDurations {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let seconds = (duration.as_secs() as i32).max(0) as u64;
            return now + Duration::from_secs(seconds);
        }
        now + duration.min(FOREVER)
    }

    /// A delay or `retry_after` as the driver takes it.
    fn postpone(&self, duration: Duration) -> InfraResult<Duration> {
        match self.flaw() {
            Flaw::RefusesLongDurations if duration > Duration::from_hours(30 * 24) => Err(
                InfraError::invalid_input(NAME, "delays are at most 30 days"),
            ),
            Flaw::ZeroDurationsTakeASecond if duration.is_zero() => Ok(Duration::from_secs(1)),
            Flaw::CapsPostponementsAtTwoSeconds => Ok(duration.min(SILENT_TTL)),
            Flaw::RoundsDelaysToSeconds => Ok(Duration::from_secs(
                duration.as_secs() + u64::from(duration.subsec_millis() >= 500),
            )),
            _ => Ok(duration),
        }
    }

    /// Where an idempotency key of `queue` is remembered.
    /// The id `slot` still names: its task is in the queue, or was acked less than
    /// [`DEDUPE_WINDOW`] ago (for ever with `NeverForgetsKeys`).
    fn remembered(
        &self,
        state: &mut MutexGuard<'_, State>,
        slot: &(String, String),
    ) -> Option<String> {
        let expired = state
            .acked_keys
            .get(slot)
            .is_some_and(|acked| acked.elapsed() >= DEDUPE_WINDOW);
        if expired && self.flaw() != Flaw::NeverForgetsKeys {
            state.acked_keys.remove(slot);
            state.keys.remove(slot);
        }
        state.keys.get(slot).cloned()
    }

    fn key_slot(&self, queue: &str, key: &str) -> (String, String) {
        let queue = match self.flaw() {
            Flaw::DedupesAcrossQueues => String::new(),
            _ => self.key(queue),
        };
        let key = match self.flaw() {
            Flaw::ComparesKeyPrefix => key.chars().take(8).collect(),
            Flaw::TrimsIdempotencyKeys => key.trim_end_matches([' ', '.']).to_owned(),
            _ => key.to_owned(),
        };
        (queue, key)
    }

    /// The key of `options` checked: `Unsupported` without the feature, `InvalidInput` when it
    /// breaks the rules.
    fn idempotency_key<'a>(&self, options: &'a EnqueueOptions) -> InfraResult<Option<&'a str>> {
        if options.idempotency_key.is_none() || self.flaw() == Flaw::IgnoresKey {
            return Ok(None);
        }
        if !self.features.contains(&DEDUPE) && self.flaw() != Flaw::KeyWithoutDeclaring {
            return Err(InfraError::unsupported(
                NAME,
                "enqueue with an idempotency key",
                DEDUPE,
            ));
        }
        match self.flaw() {
            Flaw::AcceptsBadKeys => Ok(options.idempotency_key.as_deref()),
            _ => options.checked_idempotency_key(),
        }
    }

    fn lifo(&self) -> bool {
        self.options.minimal || self.flaw() == Flaw::LifoWhileFifo
    }

    fn visibility(&self) -> Duration {
        match self.flaw() {
            Flaw::RedeliversEarly => self.options.visibility_timeout / 10,
            Flaw::VisibilityTooLong => self.options.visibility_timeout * 3,
            _ => self.options.visibility_timeout,
        }
    }

    /// Deliveries after which a nacked or timed-out task is dead.
    fn limit(&self) -> u32 {
        match self.flaw() {
            Flaw::NoRetryLimit => u32::MAX,
            Flaw::DeadLettersTooEarly => self.options.max_attempts.saturating_sub(1).max(1),
            _ => self.options.max_attempts,
        }
    }

    fn bury(&self, state: &mut State, key: &str, entry: Entry) {
        if self.flaw() == Flaw::DeadLettersMissing {
            return;
        }
        state.buried.insert(entry.id.clone(), Instant::now());
        state
            .dead
            .entry(key.to_owned())
            .or_default()
            .push(Task::new(
                entry.id,
                entry.queue,
                entry.payload,
                entry.attempts,
            ));
    }

    /// Expired reservations become ready again, or dead when exhausted.
    fn sweep(&self, state: &mut State, key: &str, now: Instant) {
        let State {
            queues,
            dead,
            buried,
            ..
        } = &mut *state;
        if self.flaw() == Flaw::ReadyTasksExpire
            && let Some(entries) = queues.get_mut(key)
        {
            entries.retain(|e| !(e.attempts == 0 && e.visible_at + SILENT_TTL <= now));
        }
        if self.flaw() == Flaw::DeadLettersExpire
            && let Some(tasks) = dead.get_mut(key)
        {
            tasks.retain(|task| buried.get(&task.id).is_none_or(|at| *at + SILENT_TTL > now));
        }
        if self.flaw() == Flaw::NeverRedelivers {
            return;
        }
        let limit = match self.flaw() {
            Flaw::TimeoutsNeverExhaust => u32::MAX,
            _ => self.limit(),
        };
        let mut dead = Vec::new();
        if let Some(entries) = state.queues.get_mut(key) {
            entries.retain_mut(|entry| {
                if entry.receipt.is_none() || entry.visible_at > now {
                    return true;
                }
                if entry.attempts >= limit {
                    dead.push(entry.clone());
                    return false;
                }
                entry.receipt = None;
                true
            });
        }
        for entry in dead {
            self.bury(state, key, entry);
        }
    }

    /// The index of the next ready task of `key`.
    fn pick(&self, state: &mut State, key: &str, now: Instant) -> Option<usize> {
        self.sweep(state, key, now);
        let entries = state.queues.get(key)?;
        let ready = |entry: &Entry| entry.receipt.is_none() && entry.visible_at <= now;
        if self.flaw() == Flaw::HeadOfLineBlocks {
            let head = if self.lifo() {
                entries.len().checked_sub(1)?
            } else {
                0
            };
            return entries.get(head).filter(|entry| ready(entry)).map(|_| head);
        }
        if self.lifo() {
            entries.iter().rposition(ready)
        } else {
            entries.iter().position(ready)
        }
    }

    fn mark(&self, state: &mut State, key: &str, index: usize, now: Instant) -> Reservation {
        state.deliveries += 1;
        let deliveries = state.deliveries;
        let entry = &mut state.queues.get_mut(key).unwrap()[index];
        let receipt = match self.flaw() {
            Flaw::ReusesReceipt => entry.id.clone(),
            _ => format!("r-{deliveries}"),
        };
        entry.attempts += 1;
        entry.receipt = Some(receipt.clone());
        entry.visible_at = match self.flaw() {
            Flaw::NoVisibility => now,
            _ => now + self.visibility(),
        };
        let task = Task::new(
            entry.id.clone(),
            entry.queue.clone(),
            entry.payload.clone(),
            entry.attempts,
        );
        Reservation::new(task, receipt)
    }

    async fn take(&self, queue: &str) -> Option<Reservation> {
        let key = self.key(queue);
        if self.flaw() == Flaw::HandsTaskToTwo {
            // Looks, lets others run, then marks: two consumers can pick the same task.
            let id = {
                let mut state = self.state();
                let index = self.pick(&mut state, &key, Instant::now())?;
                state.queues[&key][index].id.clone()
            };
            tokio::task::yield_now().await;
            let mut state = self.state();
            let index = state.queues.get(&key)?.iter().position(|e| e.id == id)?;
            return Some(self.mark(&mut state, &key, index, Instant::now()));
        }
        let mut state = self.state();
        let now = Instant::now();
        let index = self.pick(&mut state, &key, now)?;
        Some(self.mark(&mut state, &key, index, now))
    }

    /// The index of the task `reservation` holds, if it is current.
    fn current(&self, state: &State, key: &str, reservation: &Reservation) -> InfraResult<usize> {
        let entries = state.queues.get(key).ok_or_else(|| stale(reservation))?;
        let index = entries
            .iter()
            .position(|e| e.id == reservation.task.id)
            .ok_or_else(|| stale(reservation))?;
        let entry = &entries[index];
        let current = entry.receipt.as_deref() == Some(reservation.receipt.as_str())
            && (Instant::now() < entry.visible_at || self.flaw() == Flaw::AcceptsExpiredReceipts);
        // Nacked, waiting for its retry: the nack's receipt taken for the current one.
        let nacked_receipt = self.flaw() == Flaw::AcceptsNackedReceipt
            && entry.receipt.is_none()
            && entry.attempts == reservation.task.attempts;
        if current || nacked_receipt || self.flaw() == Flaw::AcceptsStaleReceipts {
            Ok(index)
        } else {
            Err(stale(reservation))
        }
    }
}

impl TaskQueueOps for Reference {
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String> {
        self.check(queue)?;
        assert!(
            !(payload.is_empty() && self.flaw() == Flaw::PanicsOnEmptyPayload),
            "empty payload"
        );
        if options.delay.is_some()
            && !self.features.contains(&DELAY)
            && self.flaw() != Flaw::DelayWithoutDeclaring
        {
            return Err(InfraError::unsupported(NAME, "enqueue with a delay", DELAY));
        }
        let payload = match self.flaw() {
            Flaw::TruncatesAtNul => {
                let end = payload
                    .iter()
                    .position(|b| *b == 0)
                    .unwrap_or(payload.len());
                payload.slice(..end)
            }
            Flaw::TruncatesPayloadsPastTheLimit => {
                payload.slice(..payload.len().min(PAYLOAD_LIMIT))
            }
            _ => payload,
        };
        let now = Instant::now();
        let delay = options.delay.map(|d| self.postpone(d)).transpose()?;
        let visible_at = match delay {
            Some(delay) if self.flaw() == Flaw::DelayTooLong => self.after(now, delay * 2),
            Some(delay) if self.flaw() != Flaw::IgnoresDelay => self.after(now, delay),
            _ => now,
        };
        let key = self.key(queue);
        let slot = self
            .idempotency_key(&options)?
            .map(|k| self.key_slot(queue, k));
        if let Some(slot) = &slot {
            let known = self.remembered(&mut self.state(), slot);
            if let Some(first) = known {
                return Ok(first);
            }
            if self.flaw() == Flaw::CopiesUnderConcurrency {
                // Looks, lets others run, then records: concurrent enqueues each create a task.
                tokio::task::yield_now().await;
            }
        }
        let id = {
            let mut state = self.state();
            if let Some(slot) = &slot
                && self.flaw() != Flaw::CopiesUnderConcurrency
                && let Some(first) = self.remembered(&mut state, slot)
            {
                return Ok(first);
            }
            state.enqueued += 1;
            let id = match self.flaw() {
                Flaw::IdFromPayload => format!("t-{}-{:?}", payload.len(), payload.first()),
                _ => format!("t-{}", state.enqueued),
            };
            if let Some(slot) = &slot {
                state.keys.insert(slot.clone(), id.clone());
            }
            id
        };
        let entry = Entry {
            id: id.clone(),
            queue: queue.to_owned(),
            payload,
            attempts: 0,
            visible_at,
            receipt: None,
            key: slot,
        };
        if self.flaw() == Flaw::LosesConcurrentEnqueues {
            // Read, let others run, write back: concurrent enqueues overwrite each other.
            let mut copy = self.state().queues.get(&key).cloned().unwrap_or_default();
            tokio::task::yield_now().await;
            copy.push(entry);
            self.state().queues.insert(key, copy);
        } else {
            self.state().queues.entry(key).or_default().push(entry);
        }
        self.notify.notify_waiters();
        Ok(id)
    }

    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>> {
        self.check(queue)?;
        match self.flaw() {
            Flaw::ZeroWaitFindsNothing if wait.is_zero() => return Ok(None),
            Flaw::IgnoresWait => return Ok(self.take(queue).await),
            Flaw::SleepsThroughWait => {
                if let Some(reservation) = self.take(queue).await {
                    return Ok(Some(reservation));
                }
                tokio::time::sleep(wait).await;
                self.check(queue)?;
                return Ok(self.take(queue).await);
            }
            _ => {}
        }
        let wait = match self.flaw() {
            Flaw::OversleepsWait => wait.saturating_mul(2),
            Flaw::GivesUpEarly => wait / 2,
            Flaw::RoundsWaitUpToSeconds => {
                Duration::from_secs(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
            }
            Flaw::MaxWaitMeansNoWait if wait > Duration::from_hours(10 * 365 * 24) => {
                Duration::ZERO
            }
            _ => wait,
        };
        let deadline = self.after(Instant::now(), wait);
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.stopped.load(Ordering::Acquire) {
                match self.flaw() {
                    Flaw::StopEndsReserveLate => {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        self.check(queue)?;
                    }
                    // Only checked on entry: a waiting reserve sleeps on through `stop`.
                    Flaw::StopLeavesReserveWaiting => {}
                    Flaw::StopEndsReserveWithNone => return Ok(None),
                    _ => self.check(queue)?,
                }
            }
            if let Some(reservation) = self.take(queue).await {
                return Ok(Some(reservation));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            if self.flaw() == Flaw::WakesByPolling {
                tokio::time::sleep((deadline - now).min(Duration::from_secs(1))).await;
                continue;
            }
            let poll = match self.flaw() {
                Flaw::PollsDueTasksEachSecond => Duration::from_secs(1),
                _ => POLL,
            };
            let _ = tokio::time::timeout((deadline - now).min(poll), notified).await;
        }
    }

    async fn ack(&self, reservation: &Reservation) -> InfraResult<()> {
        self.check(&reservation.task.queue)?;
        let key = self.key(&reservation.task.queue);
        if self.flaw() == Flaw::SettlesTwiceUnderConcurrency {
            self.current(&self.state(), &key, reservation)?;
            tokio::time::sleep(Duration::from_millis(1)).await;
            if let Some(entries) = self.state().queues.get_mut(&key) {
                entries.retain(|e| e.id != reservation.task.id);
            }
            return Ok(());
        }
        let mut state = self.state();
        let gone = !state
            .queues
            .get(&key)
            .is_some_and(|entries| entries.iter().any(|e| e.id == reservation.task.id));
        if gone && self.flaw() == Flaw::AcksSpentReceipts {
            return Ok(());
        }
        let index = self.current(&state, &key, reservation)?;
        if self.flaw() != Flaw::AckKeepsTask {
            let entry = state.queues.get_mut(&key).unwrap().remove(index);
            if let Some(slot) = entry.key {
                if self.flaw() == Flaw::ForgetsKeyOnAck {
                    state.keys.remove(&slot);
                } else {
                    state.acked_keys.insert(slot, Instant::now());
                }
            }
        }
        Ok(())
    }

    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.check(&reservation.task.queue)?;
        let key = self.key(&reservation.task.queue);
        let retry_after = retry_after.map(|d| self.postpone(d)).transpose()?;
        if self.flaw() == Flaw::SettlesTwiceUnderConcurrency {
            self.current(&self.state(), &key, reservation)?;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        {
            let mut state = self.state();
            let index = match self.flaw() {
                Flaw::SettlesTwiceUnderConcurrency => state
                    .queues
                    .get(&key)
                    .and_then(|entries| entries.iter().position(|e| e.id == reservation.task.id))
                    .ok_or_else(|| stale(reservation))?,
                _ => self.current(&state, &key, reservation)?,
            };
            let entries = state.queues.get_mut(&key).unwrap();
            if self.flaw() == Flaw::DropsNackedTasks {
                entries.remove(index);
                return Ok(());
            }
            let parks = self.flaw() == Flaw::DeadLettersOnlyWhenDue && retry_after.is_some();
            if entries[index].attempts >= self.limit() && !parks {
                let entry = entries.remove(index);
                self.bury(&mut state, &key, entry);
                return Ok(());
            }
            let now = Instant::now();
            let entry = &mut entries[index];
            // Counting from the reservation: its lease ends a visibility timeout after it.
            let from = match self.flaw() {
                Flaw::RetryCountedFromReserve => entry
                    .visible_at
                    .checked_sub(self.visibility())
                    .unwrap_or(now),
                _ => now,
            };
            entry.receipt = None;
            entry.visible_at = match retry_after {
                Some(delay) if self.flaw() == Flaw::RetryAfterTooLong => {
                    self.after(from, delay.saturating_mul(2))
                }
                Some(delay) if self.flaw() != Flaw::IgnoresRetryAfter => self.after(from, delay),
                _ => now,
            };
        }
        self.notify.notify_waiters();
        Ok(())
    }

    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        if !self.features.contains(&DEAD_LETTER) && self.flaw() != Flaw::DeadLettersWithoutDeclaring
        {
            return Err(InfraError::unsupported(NAME, "dead_letters", DEAD_LETTER));
        }
        self.check(queue)?;
        let key = self.key(queue);
        let mut state = self.state();
        self.sweep(&mut state, &key, Instant::now());
        let mut dead = state.dead.get(&key).cloned().unwrap_or_default();
        if self.flaw() == Flaw::DeadLettersNewestFirst {
            dead.reverse();
        }
        if limit > 0 || self.flaw() != Flaw::DeadLettersLimitZeroMeansAll {
            dead.truncate(limit);
        }
        Ok(dead)
    }
}

impl Driver for Reference {
    type Options = Options;

    fn supported_features() -> &'static [&'static str] {
        &[DELAY, DEAD_LETTER, FIFO, DEDUPE]
    }

    fn features_for(options: &Options) -> Vec<&'static str> {
        if options.minimal {
            return Vec::new();
        }
        let mut features = vec![DELAY, DEAD_LETTER, FIFO, DEDUPE];
        features.retain(|feature| match options.flaw {
            Flaw::DelayWithoutDeclaring => *feature != DELAY,
            Flaw::DeadLettersWithoutDeclaring => *feature != DEAD_LETTER,
            Flaw::KeyWithoutDeclaring => *feature != DEDUPE,
            _ => true,
        });
        features
    }

    fn from_options(options: Options) -> Result<Self, DriverError> {
        Ok(Self {
            features: Self::features_for(&options),
            options,
            state: Mutex::new(State::default()),
            notify: Notify::new(),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        self.notify.notify_waiters();
        Ok(())
    }
}

impl TaskQueueProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

/// The reference's dedupe window, declared to the kit.
const DEDUPE_WINDOW: Duration = Duration::from_millis(300);

fn kit(flaw: Flaw, minimal: bool) -> TaskQueueConformance<Reference> {
    TaskQueueConformance::new(move |request: &KitRequest| Options {
        flaw,
        minimal,
        visibility_timeout: request.visibility_timeout,
        max_attempts: request.max_attempts,
    })
    .secrets([SECRET])
    .dedupe_window(DEDUPE_WINDOW)
}

/// Every obligation of `kit`, each on its own thread (the obligations mostly wait); the
/// failures.
fn check_all_at_once(kit: &TaskQueueConformance<Reference>) -> Vec<String> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = OBLIGATIONS
            .iter()
            .map(|name| scope.spawn(move || kit.check(name)))
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().unwrap().err())
            .map(|failure| failure.to_string())
            .collect()
    })
}

#[test]
fn the_reference_driver_passes_every_obligation() {
    let failures = check_all_at_once(&kit(Flaw::None, false));
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_reference_driver_declaring_no_feature_passes_every_obligation() {
    let failures = check_all_at_once(&kit(Flaw::None, true));
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Each broken driver and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::AckKeepsTask, "enqueue_reserve_ack_round_trips"),
    (Flaw::TruncatesAtNul, "payloads_round_trip_exactly"),
    (Flaw::PanicsOnEmptyPayload, "payloads_round_trip_exactly"),
    (Flaw::IdFromPayload, "task_ids_are_unique"),
    (
        Flaw::IgnoresWait,
        "reserve_on_an_empty_queue_waits_then_answers_none",
    ),
    (
        Flaw::IgnoresWait,
        "reserve_wakes_for_a_task_enqueued_while_waiting",
    ),
    (
        Flaw::SleepsThroughWait,
        "reserve_wakes_for_a_task_enqueued_while_waiting",
    ),
    (
        Flaw::NoVisibility,
        "reserved_task_is_invisible_to_other_consumers",
    ),
    (
        Flaw::HandsTaskToTwo,
        "reserved_task_is_invisible_to_other_consumers",
    ),
    (Flaw::ReusesReceipt, "nack_redelivers_with_a_new_receipt"),
    (Flaw::DropsNackedTasks, "nack_redelivers_with_a_new_receipt"),
    (
        Flaw::IgnoresRetryAfter,
        "nack_retry_after_postpones_redelivery",
    ),
    (
        Flaw::NeverRedelivers,
        "unacked_task_is_redelivered_after_visibility_timeout",
    ),
    (
        Flaw::RedeliversEarly,
        "unacked_task_is_redelivered_after_visibility_timeout",
    ),
    (
        Flaw::AcceptsStaleReceipts,
        "stale_receipt_is_conflict_and_changes_nothing",
    ),
    (
        Flaw::AcceptsExpiredReceipts,
        "stale_receipt_is_conflict_and_changes_nothing",
    ),
    (
        Flaw::AcksSpentReceipts,
        "a_second_ack_is_conflict_and_changes_nothing",
    ),
    (
        Flaw::AcceptsNackedReceipt,
        "a_nacked_receipt_is_spent_at_once",
    ),
    (Flaw::IgnoresDelay, "delay_is_respected"),
    (Flaw::DelayWithoutDeclaring, "delay_is_respected"),
    (Flaw::NoRetryLimit, "retry_limit_stops_redelivery"),
    (Flaw::DeadLettersTooEarly, "retry_limit_stops_redelivery"),
    (Flaw::TimeoutsNeverExhaust, "retry_limit_stops_redelivery"),
    (
        Flaw::DeadLettersMissing,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::DeadLettersNewestFirst,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::DeadLettersOnlyWhenDue,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::DeadLettersWithoutDeclaring,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::HandsTaskToTwo,
        "concurrent_consumers_lose_nothing_and_never_share_a_task",
    ),
    (
        Flaw::LosesConcurrentEnqueues,
        "concurrent_consumers_lose_nothing_and_never_share_a_task",
    ),
    (Flaw::LifoWhileFifo, "fifo_order_where_declared"),
    (
        Flaw::IgnoresKey,
        "dedupe_returns_the_first_id_and_creates_nothing",
    ),
    (
        Flaw::KeyWithoutDeclaring,
        "dedupe_returns_the_first_id_and_creates_nothing",
    ),
    (Flaw::DedupesAcrossQueues, "dedupe_is_per_queue_and_per_key"),
    (Flaw::ComparesKeyPrefix, "dedupe_is_per_queue_and_per_key"),
    (
        Flaw::CopiesUnderConcurrency,
        "dedupe_holds_under_concurrent_enqueues",
    ),
    (
        Flaw::ForgetsKeyOnAck,
        "dedupe_remembers_the_key_after_ack_and_as_a_dead_letter",
    ),
    (Flaw::AcceptsBadKeys, "dedupe_key_rules_are_invalid_input"),
    (
        Flaw::NeverForgetsKeys,
        "dedupe_forgets_the_key_after_its_window",
    ),
    (Flaw::SharedQueue, "queues_are_isolated"),
    (
        Flaw::AcceptsEmptyQueueName,
        "empty_queue_name_is_invalid_input",
    ),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::StopLeavesReserveWaiting,
        "stop_ends_a_waiting_reserve_with_stopped",
    ),
    (
        Flaw::StopEndsReserveWithNone,
        "stop_ends_a_waiting_reserve_with_stopped",
    ),
    (
        Flaw::OversleepsWait,
        "reserve_on_an_empty_queue_waits_then_answers_none",
    ),
    (
        Flaw::GivesUpEarly,
        "reserve_on_an_empty_queue_waits_then_answers_none",
    ),
    (
        Flaw::WakesByPolling,
        "reserve_wakes_for_a_task_enqueued_while_waiting",
    ),
    (
        Flaw::VisibilityTooLong,
        "unacked_task_is_redelivered_after_visibility_timeout",
    ),
    (
        Flaw::RetryAfterTooLong,
        "nack_retry_after_postpones_redelivery",
    ),
    (Flaw::DelayTooLong, "delay_is_respected"),
    (Flaw::SecretInErrors, "secrets_never_show"),
    (
        Flaw::RoundsWaitUpToSeconds,
        "reserve_waits_exactly_as_long_as_asked",
    ),
    (
        Flaw::RoundsDelaysToSeconds,
        "delays_and_retries_below_and_between_seconds_are_exact",
    ),
    (
        Flaw::RefusesLongDurations,
        "extreme_durations_are_accepted_and_held",
    ),
    (
        Flaw::OverflowsOnHugeDurations,
        "extreme_durations_are_accepted_and_held",
    ),
    (
        Flaw::MaxWaitMeansNoWait,
        "extreme_durations_are_accepted_and_held",
    ),
    (
        Flaw::RetryCountedFromReserve,
        "retry_after_counts_from_the_nack",
    ),
    (
        Flaw::PollsDueTasksEachSecond,
        "a_waiting_reserve_wakes_when_a_task_becomes_ready",
    ),
    (
        Flaw::SettlesTwiceUnderConcurrency,
        "concurrent_settles_of_one_receipt_have_one_winner",
    ),
    (Flaw::FoldsQueueCase, "queues_are_isolated"),
    (Flaw::TrimsQueueNames, "queues_are_isolated"),
    (Flaw::NormalizesQueueNames, "queues_are_isolated"),
    (
        Flaw::FoldsQueueCase,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::DeadLettersLimitZeroMeansAll,
        "dead_letters_list_exhausted_tasks_oldest_first",
    ),
    (
        Flaw::StopEndsReserveLate,
        "stop_ends_a_waiting_reserve_with_stopped",
    ),
    (Flaw::ZeroWaitFindsNothing, "zero_durations_mean_now"),
    (Flaw::ZeroDurationsTakeASecond, "zero_durations_mean_now"),
    (
        Flaw::HeadOfLineBlocks,
        "a_postponed_task_does_not_block_its_queue",
    ),
    (
        Flaw::TruncatesQueueNamesPastTheLimit,
        "queue_names_and_payloads_at_and_past_their_limits",
    ),
    (
        Flaw::TruncatesPayloadsPastTheLimit,
        "queue_names_and_payloads_at_and_past_their_limits",
    ),
    (
        Flaw::ReadyTasksExpire,
        "tasks_and_dead_letters_stay_until_taken",
    ),
    (Flaw::PercentDecodesQueueNames, "queues_are_isolated"),
    (
        Flaw::TruncatesQueueNamesAtNul,
        "queue_names_and_payloads_at_and_past_their_limits",
    ),
    (
        Flaw::CapsPostponementsAtTwoSeconds,
        "tasks_and_dead_letters_stay_until_taken",
    ),
    (
        Flaw::TrimsIdempotencyKeys,
        "dedupe_is_per_queue_and_per_key",
    ),
    (
        Flaw::DeadLettersExpire,
        "tasks_and_dead_letters_stay_until_taken",
    ),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, |flaw| kit(flaw, false));
}

#[test]
fn a_panicking_driver_is_a_failed_obligation_not_a_crash() {
    let failure = kit(Flaw::PanicsOnEmptyPayload, false)
        .check("payloads_round_trip_exactly")
        .unwrap_err();
    assert!(
        failure.message.contains("panicked: empty payload"),
        "{failure}"
    );
}

#[test]
fn an_unknown_obligation_is_a_failure() {
    let failure = kit(Flaw::None, false).check("no_such_thing").unwrap_err();
    assert!(failure.message.contains("no such obligation"), "{failure}");
}

#[test]
fn an_oversleeping_reserve_is_caught_within_the_declared_tolerance_only() {
    let failure = kit(Flaw::RetryAfterTooLong, false)
        .check("nack_retry_after_postpones_redelivery")
        .unwrap_err();
    assert!(failure.message.contains("declared tolerance"), "{failure}");
    // A second late is within the maximum tolerance: the setting is what the obligation holds to.
    let widened = kit(Flaw::RetryAfterTooLong, false).tolerance(Duration::from_millis(1500));
    assert_eq!(
        widened.check("nack_retry_after_postpones_redelivery"),
        Ok(())
    );
    let refused = kit(Flaw::None, false)
        .tolerance(Duration::from_secs(30))
        .check("nack_retry_after_postpones_redelivery")
        .unwrap_err();
    assert!(refused.message.contains("above the maximum"), "{refused}");
}

#[test]
fn every_flaw_is_tried() {
    // A flaw added to the enum but not to `CASES` would prove nothing.
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    let not_flaws = ["None"];
    let untried = flaws::untried(include_str!("kit_taskqueue.rs"), &tried, &not_flaws);
    assert!(untried.is_empty(), "flaws no test tries: {untried:?}");
}
