//! Waiting for backends at startup: a driver whose `start` fails with a transient error is
//! started again, after a pause that grows (bounded exponential backoff with jitter), until the
//! instance's `start_wait_ms` is spent.
//!
//! ## Which errors are transient
//!
//! The kernel cannot name driverkit's `DriverError`, so it reads the kind from the error's
//! `source()` chain:
//!
//! 1. The first [`InfraError`] in the chain decides: `Unavailable` or `Timeout` is transient,
//!    any other kind is not. This is how a driver marks a start error transient:
//!    `DriverError::new("cannot reach …").with_source(InfraError::unavailable("cache", "…"))`.
//! 2. Without one, a [`std::io::Error`] in the chain (also one a client crate holds in an
//!    `Arc<dyn Error>`) whose kind says the peer is not there yet — refused, reset, aborted, not
//!    connected, broken pipe, unexpected end of stream, host or network unreachable, timed out —
//!    is transient.
//! 3. The kernel's own start timeout (`start_timeout_ms`) is transient.
//!
//! Everything else — a panic, a `start` that blocks its thread, any other error — fails at once.
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

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::{ErrorKind, InfraError};
use tokio::time::Instant;

use crate::lifecycle::{self, Started};
use crate::registry::ErasedLifecycle;

/// The first pause between two attempts to start a driver (before jitter).
pub(crate) const INITIAL_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two attempts (before jitter).
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(2);

/// How startup tried to start one driver: part of a SANDLOOM-B022 for a failed `start`.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel, Problem, UnusableReason};
///
/// /// How many times startup called `start` of the driver it refused, if it got that far.
/// fn attempts(problem: &Problem) -> Option<u32> {
///     match problem {
///         Problem::Unusable {
///             reason: UnusableReason::StartFailed { attempts, .. } | UnusableReason::TimedOut { attempts, .. },
///             ..
///         } => Some(attempts.count),
///         _ => None,
///     }
/// }
/// assert_eq!(attempts(&Problem::NoRuntime), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartAttempts {
    /// How many times `start` was called: 1 unless it failed with a transient error and
    /// `start_wait_ms` allowed more.
    pub count: u32,
    /// From the first call to the end of the last.
    pub spent: Duration,
    /// The instance's `start_wait_ms` (zero: no waiting).
    pub wait: Duration,
    /// Whether the last failure was transient (`Unavailable`, `Timeout`, the start timeout):
    /// then startup gave up because the wait was spent; otherwise it gave up at once.
    pub transient: bool,
}

impl StartAttempts {
    /// "`start_wait_ms` is 10000", for messages.
    pub(crate) fn wait_setting(&self) -> String {
        if self.wait.is_zero() {
            "`start_wait_ms` is 0".to_owned()
        } else {
            format!("`start_wait_ms` is {}", self.wait.as_millis())
        }
    }
}

/// Whether a failed `start`'s error is transient, and of which kind (see the module docs).
pub(crate) fn transient_kind(error: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    let mut io_kind = None;
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(infra) = error.downcast_ref::<InfraError>() {
            return infra.kind().is_retryable().then_some(infra.kind());
        }
        if io_kind.is_none() {
            // Some client crates (redis) hold the I/O error in an `Arc`, whose `source()`
            // skips it: look inside.
            let io = error.downcast_ref::<std::io::Error>().or_else(|| {
                error
                    .downcast_ref::<Arc<dyn StdError + Send + Sync>>()
                    .and_then(|inner| inner.downcast_ref::<std::io::Error>())
            });
            io_kind = io.and_then(|io| io_transient(io.kind()));
        }
        next = error.source();
    }
    io_kind
}

fn io_transient(kind: std::io::ErrorKind) -> Option<ErrorKind> {
    use std::io::ErrorKind as Io;
    match kind {
        Io::ConnectionRefused
        | Io::ConnectionReset
        | Io::ConnectionAborted
        | Io::NotConnected
        | Io::BrokenPipe
        | Io::UnexpectedEof
        | Io::HostUnreachable
        | Io::NetworkUnreachable
        | Io::NetworkDown
        | Io::AddrNotAvailable => Some(ErrorKind::Unavailable),
        Io::TimedOut => Some(ErrorKind::Timeout),
        _ => None,
    }
}

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
    let mut backoff = Backoff::new();
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
        let pause = backoff.pause().min(left);
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
    use std::error::Error as StdError;
    use std::sync::Arc;
    use std::time::Duration;

    use sandloom_sdk_infra::{ErrorKind, InfraError};

    use super::{Backoff, MAX_PAUSE, transient_kind};

    /// A driver's error with a cause, as driverkit's `DriverError` is.
    #[derive(Debug)]
    struct Wrapper(&'static str, Option<Box<dyn StdError + Send + Sync>>);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Wrapper {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    fn wrapped(source: impl StdError + Send + Sync + 'static) -> Wrapper {
        Wrapper("cannot start", Some(Box::new(source)))
    }

    #[test]
    fn the_first_infra_error_in_the_chain_decides() {
        let unavailable = wrapped(InfraError::unavailable("cache", "connection refused"));
        assert_eq!(transient_kind(&unavailable), Some(ErrorKind::Unavailable));
        let timeout = wrapped(InfraError::new(ErrorKind::Timeout, "cache", "no answer"));
        assert_eq!(transient_kind(&timeout), Some(ErrorKind::Timeout));
        let invalid = wrapped(InfraError::invalid_input("cache", "bad password"));
        assert_eq!(transient_kind(&invalid), None);
        // An explicit non-transient kind wins over a connection error beneath it.
        let marked = wrapped(
            InfraError::conflict("cache", "wrong server")
                .with_source(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        );
        assert_eq!(transient_kind(&marked), None);
        assert_eq!(transient_kind(&Wrapper("plain", None)), None);
    }

    #[test]
    fn connection_errors_of_io_are_transient_and_others_are_not() {
        use std::io::{Error, ErrorKind as Io};
        for (kind, expected) in [
            (Io::ConnectionRefused, Some(ErrorKind::Unavailable)),
            (Io::ConnectionReset, Some(ErrorKind::Unavailable)),
            (Io::BrokenPipe, Some(ErrorKind::Unavailable)),
            (Io::UnexpectedEof, Some(ErrorKind::Unavailable)),
            (Io::TimedOut, Some(ErrorKind::Timeout)),
            (Io::PermissionDenied, None),
            (Io::NotFound, None),
            (Io::InvalidData, None),
        ] {
            assert_eq!(
                transient_kind(&wrapped(Error::from(kind))),
                expected,
                "{kind:?}"
            );
            // Held in an `Arc`, as the redis client holds it.
            let shared: Arc<dyn StdError + Send + Sync> = Arc::new(Error::from(kind));
            assert_eq!(
                transient_kind(&wrapped(shared)),
                expected,
                "{kind:?} in an Arc"
            );
        }
    }

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
