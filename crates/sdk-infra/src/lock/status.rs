//! What a [`KeepAlive`](super::KeepAlive) tells its holder: where the lease stands, and why it
//! was lost.

use std::fmt;
use std::sync::Arc;

use crate::InfraError;

/// Where a [`KeepAlive`](super::KeepAlive)'s lease stands, as its holder should act on it.
///
/// `Held` and `Uncertain` carry `until`: the instant of this process's monotonic clock up to
/// which the store has confirmed the lease. It is measured from *before* the confirming request
/// was sent, less a margin, so the store's own expiry is never earlier. Once `until` has passed
/// without a newer confirmation, the lease is [`Lost`](LeaseStatus::Lost), even if no task has
/// run since: [`KeepAlive::status`](super::KeepAlive::status) and [`LeaseWatch::status`](super::LeaseWatch::status) compare with the clock
/// themselves.
///
/// ```
/// use sandloom_sdk_infra::lock::{LeaseLost, LeaseStatus};
///
/// fn may_write(status: &LeaseStatus) -> bool {
///     match status {
///         LeaseStatus::Held { .. } => true,
///         // Still confirmed, but a renewal failed: finish the current step, start no new one.
///         LeaseStatus::Uncertain { .. } => false,
///         LeaseStatus::Lost(_) => false,
///         _ => false,
///     }
/// }
/// assert!(!may_write(&LeaseStatus::Lost(LeaseLost::Released)));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LeaseStatus {
    /// The last renewal was confirmed; the lease is held until `until`.
    Held {
        /// The confirmed end of the lease on this process's monotonic clock.
        until: std::time::Instant,
    },
    /// The last renewal failed with an error that may pass, or has not been answered in its
    /// time; the keep-alive keeps trying. The lease is still held until `until`, then lost.
    Uncertain {
        /// The confirmed end of the lease on this process's monotonic clock.
        until: std::time::Instant,
        /// Why the renewal is uncertain.
        error: Arc<InfraError>,
    },
    /// The lease is lost for good: stop the work it protects.
    Lost(LeaseLost),
}

impl LeaseStatus {
    /// Whether the lease is held (`Held` or `Uncertain`).
    ///
    /// ```
    /// use sandloom_sdk_infra::lock::{LeaseLost, LeaseStatus};
    /// assert!(!LeaseStatus::Lost(LeaseLost::Dropped).is_held());
    /// ```
    #[must_use]
    pub fn is_held(&self) -> bool {
        !matches!(self, Self::Lost(_))
    }

    pub(super) fn until(&self) -> Option<std::time::Instant> {
        match self {
            Self::Held { until } | Self::Uncertain { until, .. } => Some(*until),
            Self::Lost(_) => None,
        }
    }
}

/// Why a [`KeepAlive`](super::KeepAlive)'s lease was lost.
///
/// ```
/// use sandloom_sdk_infra::lock::LeaseLost;
///
/// let lost = LeaseLost::Unconfirmed { last_error: None };
/// assert!(lost.to_string().contains("no renewal was confirmed before the lease's expiry"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LeaseLost {
    /// The store answered that the lease is no longer this holder's: it expired, was released,
    /// or another holder has the lock.
    Conflict(Arc<InfraError>),
    /// No renewal was confirmed before the lease's expiry as this process measures it: the
    /// store did not answer in time, or answered errors. The store may still hold the lease,
    /// and may even confirm the renewal later; the holder must stop anyway (fail closed).
    Unconfirmed {
        /// The last error a renewal answered, if any did.
        last_error: Option<Arc<InfraError>>,
    },
    /// A renewal failed in a way retrying cannot mend (the driver was stopped, or answered
    /// for another grant).
    Failed(Arc<InfraError>),
    /// The holder released the lock with [`KeepAlive::release`](super::KeepAlive::release).
    Released,
    /// The [`KeepAlive`](super::KeepAlive) was dropped: nothing renews the lease, which ends with its ttl.
    Dropped,
}

impl fmt::Display for LeaseLost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict(error) => write!(f, "the lease is no longer this holder's: {error}"),
            Self::Unconfirmed { last_error: None } => f.write_str(
                "no renewal was confirmed before the lease's expiry: the store did not answer in time",
            ),
            Self::Unconfirmed {
                last_error: Some(error),
            } => write!(
                f,
                "no renewal was confirmed before the lease's expiry; the last renewal failed: {error}"
            ),
            Self::Failed(error) => write!(f, "renewing the lease failed for good: {error}"),
            Self::Released => f.write_str("the holder released the lease"),
            Self::Dropped => {
                f.write_str("the keep-alive was dropped: the lease is no longer renewed")
            }
        }
    }
}

impl std::error::Error for LeaseLost {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Conflict(error)
            | Self::Failed(error)
            | Self::Unconfirmed {
                last_error: Some(error),
            } => Some(&**error),
            _ => None,
        }
    }
}
