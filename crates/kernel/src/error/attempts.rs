//! How startup tried to start one driver, which a refused `start` reports.
//!
//! A file of its own below [`super::reason`], which words it, and [`crate::wait`], which counts
//! the attempts: neither needs the other for it.

use std::time::Duration;

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
