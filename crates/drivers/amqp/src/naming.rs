//! Which RabbitMQ queues hold a task queue, and how delays map to delay queues.

use std::time::Duration;

use lapin::types::ShortString;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::NAME;

/// RabbitMQ's limit on queue names, in bytes.
const MAX_QUEUE_NAME: usize = 255;
/// The longest part a derived name adds to the prefix and the task queue's name:
/// `delay.` + a bucket of up to 10 digits + `.`.
const LONGEST_KIND: usize = "delay.".len() + 10 + 1;
/// The longest time a copy of a task waits in a delay queue: a delay queue's `x-expires` (twice
/// its bucket) must stay within RabbitMQ's 32-bit limit. A longer delay takes several such
/// hops (see [`message::DUE_HEADER`](crate::message::DUE_HEADER)).
pub(crate) const MAX_DELAY: Duration = Duration::from_hours(500);
/// The longest delay or `retry_after` the driver holds: a hundred years, the contract's least
/// for "as long as possible"; longer ones (`Duration::MAX`) are held this long.
pub(crate) const FOREVER_MS: u64 = 100 * 366 * 24 * 3600 * 1000;
/// Below this, a delay queue is kept at least this long after its last use, so that a queue
/// whose bucket is short is not created and deleted over and over.
const MIN_DELAY_QUEUE_LINGER_MS: u64 = 60_000;

/// The RabbitMQ queues of one task queue. The kind comes right after the prefix and the task
/// queue's name last, so no two task queues can share a RabbitMQ queue (`a` and `a.dead` give
/// `q.a`, `dead.a`, `q.a.dead`, `dead.a.dead`).
#[derive(Debug, Clone)]
pub(crate) struct QueueNames {
    /// The task queue's name, as the application wrote it.
    pub(crate) queue: String,
    /// Ready tasks: `<prefix>q.<queue>`.
    pub(crate) ready: ShortString,
    /// Dead letters: `<prefix>dead.<queue>`.
    pub(crate) dead: ShortString,
    prefix: String,
}

impl QueueNames {
    /// The names for task queue `queue`; `InvalidInput` for an empty or too long name.
    pub(crate) fn new(prefix: &str, queue: &str) -> InfraResult<Self> {
        if queue.is_empty() {
            return Err(InfraError::invalid_input(
                NAME,
                "queue names must not be empty",
            ));
        }
        let room = MAX_QUEUE_NAME.saturating_sub(prefix.len() + LONGEST_KIND);
        if queue.len() > room {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "queue name of {} bytes is too long: with the prefix {prefix:?} at most {room} bytes fit RabbitMQ's 255-byte queue names",
                    queue.len()
                ),
            ));
        }
        let short = |name: String| {
            ShortString::try_new(name)
                .map_err(|err| InfraError::invalid_input(NAME, format!("queue name: {err}")))
        };
        Ok(Self {
            queue: queue.to_owned(),
            ready: short(format!("{prefix}q.{queue}"))?,
            dead: short(format!("{prefix}dead.{queue}"))?,
            prefix: prefix.to_owned(),
        })
    }

    /// The delay queue of `bucket_ms`: `<prefix>delay.<bucket_ms>.<queue>`.
    pub(crate) fn delay(&self, bucket_ms: u64) -> InfraResult<ShortString> {
        ShortString::try_new(format!("{}delay.{bucket_ms}.{}", self.prefix, self.queue))
            .map_err(|err| InfraError::invalid_input(NAME, format!("queue name: {err}")))
    }
}

/// `delay` in whole milliseconds, rounded up (a task must never come early), held at
/// [`FOREVER_MS`]: any length is accepted.
pub(crate) fn delay_ms(delay: Duration) -> u64 {
    let whole = delay.as_millis();
    let rounded = if delay.subsec_nanos().is_multiple_of(1_000_000) {
        whole
    } else {
        whole + 1
    };
    u64::try_from(rounded).map_or(FOREVER_MS, |ms| ms.min(FOREVER_MS))
}

/// The delay queue a delay of `delay_ms` (at least 1) goes to: the delay rounded up to a step of
/// an eighth of its highest power of two, so delays within 12.5 % of each other share a queue.
///
/// RabbitMQ expires messages only at the head of a queue: in one queue, a message with a long
/// TTL holds back shorter ones behind it. Within a bucket every TTL is at most the bucket and at
/// least 7/8 of it, so a message is held back by at most an eighth of its delay, while a day of
/// delays needs at most about 200 buckets.
pub(crate) fn bucket(delay_ms: u64) -> u64 {
    let delay_ms = delay_ms.max(1);
    let highest_power_of_two = 1_u64 << delay_ms.ilog2();
    let step = (highest_power_of_two / 8).max(1);
    delay_ms.div_ceil(step) * step
}

/// How long a delay queue of `bucket_ms` may stay unused before RabbitMQ deletes it
/// (`x-expires`): its bucket plus a margin of at least a minute. The driver redeclares a delay
/// queue (which renews the lease) when it publishes to it more than half the margin after the
/// last declaration, so a queue never expires with a message in it.
pub(crate) fn delay_queue_expiry(bucket_ms: u64) -> (u64, Duration) {
    let margin = bucket_ms.max(MIN_DELAY_QUEUE_LINGER_MS);
    (bucket_ms + margin, Duration::from_millis(margin / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_collide_across_task_queues() {
        let a = QueueNames::new("p.", "a").unwrap();
        let a_dead = QueueNames::new("p.", "a.dead").unwrap();
        let all = [
            a.ready.as_str(),
            a.dead.as_str(),
            a_dead.ready.as_str(),
            a_dead.dead.as_str(),
        ];
        assert_eq!(all, ["p.q.a", "p.dead.a", "p.q.a.dead", "p.dead.a.dead"]);
        assert_eq!(a.delay(1024).unwrap().as_str(), "p.delay.1024.a");
    }

    #[test]
    fn refuses_empty_and_too_long_names() {
        assert!(QueueNames::new("p.", "").is_err());
        let longest = "x".repeat(255 - 2 - LONGEST_KIND);
        let names = QueueNames::new("p.", &longest).unwrap();
        assert!(names.delay(u64::from(u32::MAX)).unwrap().as_str().len() <= 255);
        assert!(QueueNames::new("p.", &format!("{longest}x")).is_err());
    }

    #[test]
    fn buckets_round_up_by_at_most_an_eighth() {
        assert_eq!(bucket(1), 1);
        assert_eq!(bucket(5), 5);
        assert_eq!(bucket(1000), 1024);
        assert_eq!(bucket(1024), 1024);
        assert_eq!(bucket(1025), 1152);
        for delay in [3_u64, 17, 999, 1001, 65_537, 86_400_000, 1_800_000_000] {
            let b = bucket(delay);
            assert!(b >= delay && b - delay <= delay / 8 + 1, "{delay} -> {b}");
        }
        let (expires, _) = delay_queue_expiry(bucket(1_800_000_000));
        assert!(u32::try_from(expires).is_ok());
    }

    #[test]
    fn delays_round_up_to_milliseconds() {
        assert_eq!(delay_ms(Duration::from_micros(1500)), 2);
        assert_eq!(delay_ms(Duration::from_micros(1)), 1);
        assert_eq!(delay_ms(Duration::from_secs(1)), 1000);
        // Beyond one delay queue's reach, and beyond a hundred years: accepted, held.
        let days_400 = Duration::from_hours(400 * 24);
        assert_eq!(delay_ms(days_400), 400 * 86_400 * 1000);
        assert_eq!(delay_ms(Duration::MAX), FOREVER_MS);
        assert!(Duration::from_millis(FOREVER_MS) >= Duration::from_hours(100 * 365 * 24));
    }
}
