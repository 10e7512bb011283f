//! Waiting for backends at startup: a driver whose `start` fails with a transient error is
//! started again, after a pause that grows (bounded exponential backoff with jitter), until the
//! instance's `start_wait_ms` is spent.
//!
//! Which errors are transient is [`crate::transient`]'s to say.
//!
//! ## Backoff
//!
//! The first pause is about [`INITIAL_PAUSE`]; each next one doubles, up to [`MAX_PAUSE`]. Each
//! pause is "equal jitter": half the step plus a random part of the other half, so instances that
//! wait for the same backend do not retry in step. The randomness is a xorshift generator seeded
//! from the clock and a counter: no cryptographic quality is needed or claimed. The last pause is
//! cut to what is left of the wait, so the last attempt begins by the deadline; each attempt is
//! still bounded by the start timeout, so waiting for one driver takes at most
//! `start_wait_ms + start_timeout_ms` (plus one `stop_timeout_ms` for a `start` that blocks).
//!
//! ## Between attempts
//!
//! `start` is called again on the same driver; `stop` is not called in between. The driver
//! contract makes `stop` final (a stopped driver answers `Stopped` and does not start again), so
//! a failed `start` must itself release what it acquired and leave the driver startable. When
//! the wait is over, the driver is stopped once, with every other driver already started, in
//! reverse order.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::ErrorKind;
use tokio::time::Instant;

use crate::error::StartAttempts;
use crate::lifecycle::{self, Started};
use crate::registry::ErasedLifecycle;

/// The first pause between two attempts to start a driver (before jitter).
pub(crate) const INITIAL_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two attempts (before jitter).
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Pauses between attempts: exponential from [`INITIAL_PAUSE`] to [`MAX_PAUSE`], equal jitter.
pub(crate) struct Backoff {
    step: Duration,
    state: u64,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let clock = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        Self {
            step: INITIAL_PAUSE,
            // Never zero: xorshift would stay at zero.
            state: (clock ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
        }
    }

    /// The next pause: half the step plus a random part of the other half; the step doubles.
    pub(crate) fn pause(&mut self) -> Duration {
        let step = self.step;
        self.step = (step * 2).min(MAX_PAUSE);
        let half = step / 2;
        let spread = u64::try_from(half.as_micros()).unwrap_or(u64::MAX);
        half + Duration::from_micros(self.next_random() % spread.saturating_add(1))
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64 (Marsaglia): fast, small, good enough for jitter.
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }
}

/// Which driver is being started, for logs.
pub(crate) struct Starting<'a> {
    pub(crate) capability: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) driver: &'a str,
}

/// Start `lifecycle`, and while it fails with a transient error, start it again after a pause,
/// until `wait` is spent. Each attempt runs under `timeout` (and `stop_timeout` for a `start`
/// that blocks its thread), as [`lifecycle::start`]. Returns how the last attempt ended.
pub(crate) async fn start(
    lifecycle: &Arc<dyn ErasedLifecycle>,
    who: &Starting<'_>,
    (timeout, stop_timeout): (Duration, Duration),
    wait: Duration,
) -> (Started, StartAttempts) {
    let began = Instant::now();
    let deadline = began.checked_add(wait);
    // Made by the first retry: most starts succeed at once, and seeding it reads the clock.
    let mut backoff: Option<Backoff> = None;
    let mut count: u32 = 0;
    loop {
        count = count.saturating_add(1);
        let started = lifecycle::start(lifecycle, timeout, stop_timeout).await;
        let kind = match &started {
            Started::Failed {
                transient: Some(kind),
                ..
            } => Some(*kind),
            Started::TimedOut => Some(ErrorKind::Timeout),
            _ => None,
        };
        let attempts = StartAttempts {
            count,
            spent: began.elapsed(),
            wait,
            transient: kind.is_some(),
        };
        let Some(kind) = kind else {
            if matches!(started, Started::Done) && count > 1 {
                tracing::info!(
                    target: "sandloom",
                    capability = who.capability,
                    instance = who.instance,
                    driver = who.driver,
                    attempts = count,
                    waited_ms = millis(attempts.spent),
                    "started after waiting for the backend"
                );
            }
            return (started, attempts);
        };
        let left = deadline.map_or(Duration::MAX, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        if left.is_zero() {
            return (started, attempts);
        }
        let pause = backoff.get_or_insert_with(Backoff::new).pause().min(left);
        let error = match &started {
            Started::Failed { message, .. } => message.clone(),
            _ => format!("start did not finish within {} ms", timeout.as_millis()),
        };
        tracing::warn!(
            target: "sandloom",
            capability = who.capability,
            instance = who.instance,
            driver = who.driver,
            attempt = count,
            kind = kind.as_str(),
            error = %error,
            retry_in_ms = millis(pause),
            waited_ms = millis(attempts.spent),
            start_wait_ms = millis(wait),
            "start failed with a transient error; starting again"
        );
        tokio::time::sleep(pause).await;
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Backoff, MAX_PAUSE};

    #[test]
    fn pauses_grow_to_the_cap_and_stay_within_equal_jitter() {
        let mut backoff = Backoff::new();
        let mut step = Duration::from_millis(100);
        for _ in 0..12 {
            let pause = backoff.pause();
            assert!(
                pause >= step / 2 && pause <= step,
                "{pause:?} for step {step:?}"
            );
            step = (step * 2).min(MAX_PAUSE);
        }
        // Two generators made at once do not move in step.
        let (mut a, mut b) = (Backoff::new(), Backoff::new());
        let same = (0..8).filter(|_| a.pause() == b.pause()).count();
        assert!(same < 8);
    }
}
