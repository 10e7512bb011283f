//! The keep-alive's renewal task and the state it shares with the holder's handles.
//!
//! Every judgment is made against the *confirmed end*: the instant, on this process's
//! monotonic clock, measured from before the confirming request was sent, less a margin. A
//! loss is final: a later answer never makes a lost lease held again.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::status::{LeaseLost, LeaseStatus};
use super::{Lease, Lock, NAME};
use crate::{ErrorKind, InfraError, InfraResult};

/// A renewal is sent when this fraction of the ttl has passed since the last confirmed one.
const RENEW_DIVISOR: u32 = 3;
/// The lease counts as held until `sent + ttl - ttl / MARGIN_DIVISOR`: the margin covers a
/// store clock that runs a little fast, and the time the holder's work takes to see the loss.
const MARGIN_DIVISOR: u32 = 10;
/// A renewal that failed and may succeed again is retried after this fraction of the ttl.
const RETRY_DIVISOR: u32 = 10;
/// No renewal or retry is sent more often than this, however short the ttl.
const MIN_PERIOD: Duration = Duration::from_millis(1);
/// What "as long as possible" means for a ttl the monotonic clock cannot add.
const FAR: Duration = Duration::from_hours(30 * 365 * 24);

/// What the renewal task shares with the keep-alive and its watches.
#[derive(Debug, Clone)]
pub(super) struct State {
    pub(super) lease: Lease,
    pub(super) status: LeaseStatus,
}

/// The status now: a confirmation whose `until` has passed reads as lost. The clock is read
/// while the watch is borrowed, so a renewal confirmed later cannot make a lease read as lost
/// be held again (`confirm` checks under the same lock).
pub(super) fn current(receiver: &watch::Receiver<State>) -> (Lease, LeaseStatus) {
    let state = receiver.borrow();
    let now = Instant::now().into_std();
    let status = match state.status.until() {
        Some(until) if now >= until => LeaseStatus::Lost(LeaseLost::Unconfirmed {
            last_error: match &state.status {
                LeaseStatus::Uncertain { error, .. } => Some(Arc::clone(error)),
                _ => None,
            },
        }),
        _ => state.status.clone(),
    };
    (state.lease.clone(), status)
}

/// Wait for the loss, however it comes: told by the renewal task, or the confirmed end passing.
pub(super) async fn wait_lost(mut receiver: watch::Receiver<State>) -> LeaseLost {
    loop {
        let (_, status) = current(&receiver);
        let until = match status {
            LeaseStatus::Lost(lost) => return lost,
            LeaseStatus::Held { until } | LeaseStatus::Uncertain { until, .. } => until,
        };
        let ended = tokio::time::sleep_until(Instant::from_std(until));
        if let Either::First(Err(_)) = first(receiver.changed(), ended).await {
            // Both the keep-alive and its task are gone; `Drop` marked the loss.
            return match current(&receiver).1 {
                LeaseStatus::Lost(lost) => lost,
                _ => LeaseLost::Dropped,
            };
        }
    }
}

/// Mark the lease lost for good, unless it already is (the first loss is the one reported).
pub(super) fn mark_lost(sender: &watch::Sender<State>, lost: LeaseLost) {
    sender.send_if_modified(|state| {
        if matches!(state.status, LeaseStatus::Lost(_)) {
            return false;
        }
        state.status = LeaseStatus::Lost(lost);
        true
    });
}

/// The Tokio runtime to renew on, or why there is none.
pub(super) fn runtime() -> InfraResult<tokio::runtime::Handle> {
    tokio::runtime::Handle::try_current().map_err(|_| {
        InfraError::new(
            ErrorKind::Unsupported,
            NAME,
            "the lease keep-alive renews on a Tokio task: use it inside a Tokio runtime \
             (the application's, where its modules run)",
        )
    })
}

/// The confirmed end of a lease whose grant or refresh was sent at `sent`.
pub(super) fn held_until(sent: Instant, ttl: Duration) -> Instant {
    let held = ttl.saturating_sub(ttl / MARGIN_DIVISOR);
    sent.checked_add(held)
        .or_else(|| sent.checked_add(FAR))
        .unwrap_or(sent)
}

/// Record a renewal sent at `sent` and confirmed with `lease`, unless the lease is already
/// lost, or its confirmed end passed before this confirmation (fail closed: a late answer does
/// not bring a lost lease back). Whether the lease is still held.
fn confirm(sender: &watch::Sender<State>, lease: Lease, until: Instant) -> bool {
    let mut held = false;
    sender.send_if_modified(|state| {
        let now = Instant::now().into_std();
        match state.status.until() {
            Some(previous) if now < previous => {
                state.lease = lease;
                state.status = LeaseStatus::Held {
                    until: until.into_std(),
                };
                held = true;
            }
            Some(_) => {
                let last_error = match &state.status {
                    LeaseStatus::Uncertain { error, .. } => Some(Arc::clone(error)),
                    _ => None,
                };
                state.status = LeaseStatus::Lost(LeaseLost::Unconfirmed { last_error });
            }
            None => return false,
        }
        true
    });
    held
}

/// Mark the renewal uncertain, keeping the confirmed end.
fn uncertain(sender: &watch::Sender<State>, error: &Arc<InfraError>) {
    sender.send_if_modified(|state| match state.status.until() {
        Some(until) => {
            state.status = LeaseStatus::Uncertain {
                until,
                error: Arc::clone(error),
            };
            true
        }
        None => false,
    });
}

/// The renewal task: refresh at a third of the ttl, judge every answer against the confirmed
/// end, and stop at the first loss.
pub(super) async fn renew(
    lock: Arc<dyn Lock>,
    sender: Arc<watch::Sender<State>>,
    mut lease: Lease,
    ttl: Duration,
    sent: Instant,
) {
    let period = (ttl / RENEW_DIVISOR).max(MIN_PERIOD);
    let retry = (ttl / RETRY_DIVISOR).max(MIN_PERIOD);
    let mut until = held_until(sent, ttl);
    let mut next = sent.checked_add(period).unwrap_or(until);
    let mut last_error: Option<Arc<InfraError>> = None;
    loop {
        tokio::time::sleep_until(next.min(until)).await;
        let sent = Instant::now();
        if sent >= until {
            mark_lost(&sender, LeaseLost::Unconfirmed { last_error });
            return;
        }
        let overdue = sent.checked_add(period).unwrap_or(until);
        // The refresh future borrows `lease`: it ends with this block.
        let answer = {
            let mut refresh = std::pin::pin!(lock.refresh(&lease, ttl));
            if overdue < until {
                match first(&mut refresh, tokio::time::sleep_until(overdue)).await {
                    Either::First(answer) => Some(answer),
                    Either::Second(()) => {
                        // No answer by the time the next renewal was due: tell the holder, and
                        // wait on until the confirmed end.
                        let error = Arc::new(InfraError::new(
                            ErrorKind::Timeout,
                            NAME,
                            format!(
                                "the renewal of the lease on {:?} has not been answered in {period:?}",
                                lease.name
                            ),
                        ));
                        uncertain(&sender, &error);
                        last_error = Some(error);
                        first(&mut refresh, tokio::time::sleep_until(until))
                            .await
                            .first()
                    }
                }
            } else {
                first(&mut refresh, tokio::time::sleep_until(until))
                    .await
                    .first()
            }
        };
        match answer {
            None => {
                mark_lost(&sender, LeaseLost::Unconfirmed { last_error });
                return;
            }
            Some(Ok(renewed)) => {
                if renewed.name != lease.name
                    || renewed.token != lease.token
                    || renewed.fence != lease.fence
                {
                    let error = InfraError::new(
                        ErrorKind::Backend,
                        NAME,
                        format!(
                            "the refresh of the lease on {:?} (fence {}) answered another grant \
                             (on {:?}, fence {}, {} token): a refresh keeps the name, the token \
                             and the fence; the driver breaks the lock contract",
                            lease.name,
                            lease.fence,
                            renewed.name,
                            renewed.fence,
                            if renewed.token == lease.token {
                                "the same"
                            } else {
                                "another"
                            }
                        ),
                    );
                    mark_lost(&sender, LeaseLost::Failed(Arc::new(error)));
                    return;
                }
                let renewed_until = held_until(sent, ttl);
                if !confirm(&sender, renewed.clone(), renewed_until) {
                    return;
                }
                lease = renewed;
                until = renewed_until;
                last_error = None;
                next = sent.checked_add(period).unwrap_or(until);
            }
            Some(Err(error)) => {
                let kind = error.kind();
                let error = Arc::new(error);
                if kind == ErrorKind::Conflict {
                    mark_lost(&sender, LeaseLost::Conflict(error));
                    return;
                }
                if !(kind.is_retryable() || kind == ErrorKind::Backend) {
                    mark_lost(&sender, LeaseLost::Failed(error));
                    return;
                }
                uncertain(&sender, &error);
                last_error = Some(error);
                next = Instant::now() + retry;
            }
        }
    }
}

/// Which of two futures finished first.
pub(super) enum Either<A, B> {
    First(A),
    Second(B),
}

impl<A, B> Either<A, B> {
    fn first(self) -> Option<A> {
        match self {
            Self::First(value) => Some(value),
            Self::Second(_) => None,
        }
    }
}

/// Race two futures, `a` polled first (a `select!` without the `macros` feature of Tokio).
pub(super) async fn first<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = std::pin::pin!(a);
    let mut b = std::pin::pin!(b);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::First(value));
        }
        b.as_mut().poll(cx).map(Either::Second)
    })
    .await
}
