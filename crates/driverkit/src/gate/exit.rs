//! How an operation ends when its instance drains, told apart from the driver's own answers.
//!
//! The gate answers `Stopped` in three cases of its own, and marks each answer with a
//! [`GateExit`] (the `InfraError`'s source), so that code in front of the gate can tell them
//! from a `Stopped` the driver gave:
//!
//! - [`Refused`](GateExit::Refused): the instance was draining when the call came; the driver
//!   never saw it.
//! - [`Cut`](GateExit::Cut): an operation declared `#[waits = "…"]` was still waiting when the
//!   drain began; its future was dropped while suspended. What that means for each operation is
//!   the text of its declaration (shown in its docs).
//! - [`Abandoned`](GateExit::Abandoned): the drain's budget ended and the driver had not
//!   answered; the operation may or may not have taken effect.
//!
//! The first two may run again, as they were, on another instance (what a route in front of
//! swapped instances does on a reload); the third must not be run again blindly.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use sandloom_sdk_infra::{ErrorKind, InfraError, InfraResult};
use tokio::sync::futures::Notified;

use super::GateState;

/// Why the gate, not the driver, ended an operation with `Stopped`. Not public API: the hook for
/// what the macros generate in front of a gate (a reload's route).
///
/// ```
/// use sandloom_driverkit::__private::GateExit;
/// use sandloom_driverkit::sdk::InfraError;
///
/// // A `Stopped` the driver gave carries no mark: a route must not retry it elsewhere.
/// assert_eq!(GateExit::of(&InfraError::stopped("cache")), None);
/// assert!(GateExit::Cut.may_run_elsewhere());
/// assert!(!GateExit::Abandoned.may_run_elsewhere());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateExit {
    /// Refused on entry: the instance was draining. The driver never saw the call.
    Refused,
    /// Cut while waiting: an operation declared `#[waits]` was suspended when the drain began,
    /// and its future was dropped.
    Cut,
    /// Abandoned: the drain's budget ended before the driver answered. Its outcome is unknown.
    Abandoned,
}

impl GateExit {
    /// The mark the gate left on `error`, if the gate (not the driver) ended the operation.
    pub fn of(error: &InfraError) -> Option<Self> {
        if error.kind() != ErrorKind::Stopped {
            return None;
        }
        std::error::Error::source(error)?
            .downcast_ref::<Self>()
            .copied()
    }

    /// Whether the operation may run again, as it was, on another instance: true when the
    /// driver never saw it or it was cut while waiting, false when its outcome is unknown.
    pub fn may_run_elsewhere(self) -> bool {
        matches!(self, Self::Refused | Self::Cut)
    }

    /// The `Stopped` answer of `capability` carrying this mark.
    pub(crate) fn error(self, capability: &'static str) -> InfraError {
        let message = match self {
            Self::Refused => "the driver has been stopped (the instance is draining)",
            Self::Cut => {
                "the driver has been stopped (the instance began to drain while the operation waited)"
            }
            Self::Abandoned => {
                "the driver has been stopped (the instance's stop timeout ended before the driver \
                 answered; the operation may or may not have taken effect)"
            }
        };
        InfraError::new(ErrorKind::Stopped, capability, message).with_source(self)
    }
}

/// Whether `answer` is a `Stopped` the gate gave to an operation that may run again elsewhere
/// (refused, or cut while waiting). Not public API: the route's generated code calls it.
#[doc(hidden)]
#[inline]
pub fn may_run_elsewhere<V>(answer: &InfraResult<V>) -> bool {
    match answer {
        Ok(_) => false,
        Err(error) => GateExit::of(error).is_some_and(GateExit::may_run_elsewhere),
    }
}

impl fmt::Display for GateExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Refused => "refused: the instance is draining",
            Self::Cut => "cut while waiting: the instance began to drain",
            Self::Abandoned => "abandoned: the drain's budget ended",
        })
    }
}

impl std::error::Error for GateExit {}

/// One poll of a gated operation: the driver's `future` first (what is ready is answered, even
/// while draining); still pending, it registers `waiter` to be woken by the drain, and ends the
/// operation itself when the drain's budget is spent, or, when the operation `waits`, as soon
/// as the drain has begun. Not public API: the gate's generated code calls it.
#[doc(hidden)]
#[inline]
pub fn poll_gated<'a, V>(
    state: &'a GateState,
    waits: bool,
    mut future: Pin<&mut impl Future<Output = InfraResult<V>>>,
    mut waiter: Pin<&mut Option<Notified<'a>>>,
    cx: &mut Context<'_>,
) -> Poll<InfraResult<V>> {
    loop {
        if let Poll::Ready(answer) = future.as_mut().poll(cx) {
            return Poll::Ready(answer);
        }
        // Suspended: the operation waits for its driver. Made before the flags are read, so
        // that a drain they do not show yet wakes it (see `Drain::waiter`).
        if waiter.is_none() {
            waiter.set(Some(state.drain().waiter()));
        }
        if state.drain().abandoned() {
            return Poll::Ready(Err(GateExit::Abandoned.error(state.capability())));
        }
        if waits && state.drain().draining() {
            return Poll::Ready(Err(GateExit::Cut.error(state.capability())));
        }
        let Some(wake) = waiter.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        if wake.poll(cx).is_pending() {
            return Poll::Pending;
        }
        // The drain woke it: look again (the driver too: it may have an answer by now), with a
        // fresh waiter for the next wake.
        waiter.set(None);
    }
}
