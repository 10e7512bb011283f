//! How long to wait before each retry.

use std::time::Duration;

/// Bounded retries with exponential backoff and jitter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    pub(crate) max_retries: u32,
    pub(crate) base_delay: Duration,
    pub(crate) max_delay: Duration,
}

/// What to do after a failed attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Wait this long, then try again.
    RetryAfter(Duration),
    /// Retries are used up.
    GiveUp,
    /// The endpoint asked for a pause (`Retry-After`) longer than `retry_max_delay_ms`.
    TooLong(Duration),
}

impl RetryPolicy {
    /// After the failed attempt number `attempt` (1 for the first), with the endpoint's
    /// `Retry-After`, if any.
    pub(crate) fn next(&self, attempt: u32, retry_after: Option<Duration>) -> Next {
        if attempt > self.max_retries {
            return Next::GiveUp;
        }
        match retry_after {
            Some(asked) if asked > self.max_delay => Next::TooLong(asked),
            Some(asked) => Next::RetryAfter(asked),
            None => Next::RetryAfter(self.backoff(attempt)),
        }
    }

    /// `base × 2^(attempt-1)`, capped at the maximum, of which the upper half is random
    /// ("equal jitter"): senders that failed together do not retry together, and every wait
    /// is at least half the nominal one.
    fn backoff(&self, attempt: u32) -> Duration {
        let doubling = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let nominal = self.base_delay.saturating_mul(doubling).min(self.max_delay);
        let half = nominal / 2;
        let jitter_nanos = fastrand::u64(0..=duration_nanos(nominal.saturating_sub(half)));
        half + Duration::from_nanos(jitter_nanos)
    }
}

fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The delay of a `Retry-After` header in its delta-seconds form (the HTTP-date form is rare
/// for webhooks; it is ignored and the backoff applies).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: RetryPolicy = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(300),
    };

    #[test]
    fn delays_double_up_to_the_cap_with_jitter_in_the_upper_half() {
        for _ in 0..100 {
            let bounds = [(1, 50, 100), (2, 100, 200), (3, 150, 300)];
            for (attempt, low, high) in bounds {
                let Next::RetryAfter(delay) = POLICY.next(attempt, None) else {
                    panic!("attempt {attempt} must be retried");
                };
                assert!(
                    delay >= Duration::from_millis(low) && delay <= Duration::from_millis(high),
                    "attempt {attempt}: {delay:?}"
                );
            }
        }
        assert_eq!(POLICY.next(4, None), Next::GiveUp);
        let huge = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_mins(10),
            max_delay: Duration::from_mins(10),
        };
        assert!(matches!(huge.next(10, None), Next::RetryAfter(d) if d <= Duration::from_mins(10)));
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        assert_eq!(
            POLICY.next(1, Some(Duration::ZERO)),
            Next::RetryAfter(Duration::ZERO)
        );
        assert_eq!(
            POLICY.next(1, Some(Duration::from_mins(1))),
            Next::TooLong(Duration::from_mins(1))
        );
        assert_eq!(POLICY.next(4, Some(Duration::ZERO)), Next::GiveUp);
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
