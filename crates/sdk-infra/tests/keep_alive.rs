//! The lease keep-alive against a scripted lock, on Tokio's paused clock: every renewal, hang
//! and answer lands at an exact instant, so the fail-closed bounds are checked exactly.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::lock::{KeepAlive, Lease, LeaseLost, LeaseStatus, Lock, LockOps};
use sandloom_sdk_infra::{ErrorKind, InfraError, InfraResult};
use tokio::time::Instant;

const TTL: Duration = Duration::from_millis(300);
/// How long after a confirmed request was sent the keep-alive counts its lease held.
const HELD: Duration = Duration::from_millis(270);

/// What the scripted lock's `refresh` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refresh {
    Renew,
    /// Answers `Conflict`.
    Lost,
    /// Answers `Unavailable`.
    Fail,
    /// Answers `Stopped`.
    Stopped,
    /// Renews, and answers after this long.
    AnswerAfter(Duration),
    /// Answers a lease with another fence.
    OtherFence,
}

struct Scripted {
    refresh: Mutex<Refresh>,
    refreshes: AtomicU32,
    released: AtomicU32,
}

impl Scripted {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            refresh: Mutex::new(Refresh::Renew),
            refreshes: AtomicU32::new(0),
            released: AtomicU32::new(0),
        })
    }

    fn set(&self, refresh: Refresh) {
        *self.refresh.lock().unwrap() = refresh;
    }

    fn refreshes(&self) -> u32 {
        self.refreshes.load(Ordering::SeqCst)
    }
}

impl LockOps for Scripted {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        Ok(Some(Lease::new(name, "t", 7, SystemTime::now() + ttl)))
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        _: Duration,
    ) -> InfraResult<Option<Lease>> {
        LockOps::acquire(self, name, ttl).await
    }

    async fn release(&self, _: &Lease) -> InfraResult<bool> {
        self.released.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        let mode = *self.refresh.lock().unwrap();
        match mode {
            Refresh::Renew => Ok(lease.refreshed(SystemTime::now() + ttl)),
            Refresh::Lost => Err(lease.lost()),
            Refresh::Fail => Err(InfraError::unavailable("lock", "connection refused")),
            Refresh::Stopped => Err(InfraError::stopped("lock")),
            Refresh::AnswerAfter(delay) => {
                tokio::time::sleep(delay).await;
                Ok(lease.refreshed(SystemTime::now() + ttl))
            }
            Refresh::OtherFence => Ok(Lease::new(
                lease.name.clone(),
                lease.token.clone(),
                lease.fence + 1,
                SystemTime::now() + ttl,
            )),
        }
    }
}

async fn keep(lock: &Arc<Scripted>) -> (KeepAlive, Instant) {
    let started = Instant::now();
    let keep_alive = KeepAlive::acquire(Arc::clone(lock) as Arc<dyn Lock>, "job", TTL)
        .await
        .unwrap()
        .expect("the scripted lock grants every acquire");
    (keep_alive, started)
}

#[tokio::test(start_paused = true)]
async fn renews_at_a_third_of_the_ttl_and_stays_held() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    assert_eq!(keep_alive.fence(), 7);
    tokio::time::sleep(TTL * 10 + Duration::from_millis(1)).await;
    assert!(keep_alive.is_held(), "{:?}", keep_alive.status());
    // One renewal every 100 ms.
    assert_eq!(lock.refreshes(), 30);
    assert!(matches!(keep_alive.status(), LeaseStatus::Held { .. }));
}

#[tokio::test(start_paused = true)]
async fn a_conflict_is_lost_at_once() {
    let lock = Scripted::new();
    let (keep_alive, started) = keep(&lock).await;
    lock.set(Refresh::Lost);
    let lost = keep_alive.lost().await;
    assert!(matches!(lost, LeaseLost::Conflict(ref e) if e.kind() == ErrorKind::Conflict));
    // At the first renewal, not at the lease's end.
    assert_eq!(started.elapsed(), TTL / 3);
    assert!(!keep_alive.is_held());
    tokio::time::sleep(TTL * 3).await;
    assert_eq!(lock.refreshes(), 1, "no renewal after a loss");
}

#[tokio::test(start_paused = true)]
async fn a_renewal_that_hangs_is_lost_at_the_confirmed_end_and_a_late_answer_changes_nothing() {
    let lock = Scripted::new();
    let (keep_alive, started) = keep(&lock).await;
    let watch = keep_alive.watch();
    // The second renewal (sent at 200 ms) is answered a whole ttl late.
    tokio::time::sleep(TTL / 2).await;
    lock.set(Refresh::AnswerAfter(TTL));
    let lost = watch.lost().await;
    // Confirmed at 100 ms (sent then): held until 100 + 270 ms, not a moment longer.
    assert_eq!(started.elapsed(), TTL / 3 + HELD);
    assert!(
        matches!(lost, LeaseLost::Unconfirmed { last_error: Some(ref e) } if e.kind() == ErrorKind::Timeout),
        "{lost:?}"
    );
    lock.set(Refresh::Renew);
    tokio::time::sleep(TTL * 3).await;
    assert!(!keep_alive.is_held() && !watch.is_held());
}

#[tokio::test(start_paused = true)]
async fn an_overdue_renewal_is_uncertain_before_it_is_lost() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    let mut watch = keep_alive.watch();
    lock.set(Refresh::AnswerAfter(Duration::from_secs(10)));
    let mut seen = Vec::new();
    loop {
        match watch.changed().await {
            LeaseStatus::Lost(_) => break,
            status => seen.push(status),
        }
    }
    assert!(
        seen.iter()
            .any(|s| matches!(s, LeaseStatus::Uncertain { error, .. } if error.kind() == ErrorKind::Timeout)),
        "{seen:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn passing_errors_are_uncertain_and_retried_until_a_renewal_is_confirmed() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    lock.set(Refresh::Fail);
    tokio::time::sleep(TTL / 3 + Duration::from_millis(1)).await;
    assert!(
        matches!(keep_alive.status(), LeaseStatus::Uncertain { ref error, .. } if error.kind() == ErrorKind::Unavailable),
        "{:?}",
        keep_alive.status()
    );
    // Retried every 30 ms: two more failures, then a confirmed renewal.
    tokio::time::sleep(Duration::from_millis(70)).await;
    assert_eq!(lock.refreshes(), 3);
    lock.set(Refresh::Renew);
    tokio::time::sleep(TTL * 5).await;
    assert!(matches!(keep_alive.status(), LeaseStatus::Held { .. }));
}

#[tokio::test(start_paused = true)]
async fn errors_until_the_end_lose_the_lease_then() {
    let lock = Scripted::new();
    let (keep_alive, started) = keep(&lock).await;
    lock.set(Refresh::Fail);
    let lost = keep_alive.lost().await;
    assert_eq!(started.elapsed(), HELD);
    assert!(
        matches!(lost, LeaseLost::Unconfirmed { last_error: Some(ref e) } if e.kind() == ErrorKind::Unavailable),
        "{lost:?}"
    );
    assert!(lost.to_string().contains("connection refused"), "{lost}");
}

#[tokio::test(start_paused = true)]
async fn a_stopped_driver_loses_the_lease_at_once() {
    let lock = Scripted::new();
    let (keep_alive, started) = keep(&lock).await;
    lock.set(Refresh::Stopped);
    assert!(
        matches!(keep_alive.lost().await, LeaseLost::Failed(ref e) if e.kind() == ErrorKind::Stopped)
    );
    assert_eq!(started.elapsed(), TTL / 3);
}

#[tokio::test(start_paused = true)]
async fn a_renewal_answering_another_grant_loses_the_lease() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    lock.set(Refresh::OtherFence);
    let lost = keep_alive.lost().await;
    assert!(matches!(lost, LeaseLost::Failed(ref e) if e.kind() == ErrorKind::Backend));
    assert!(
        lost.to_string().contains("answered another grant"),
        "{lost}"
    );
    assert_eq!(keep_alive.fence(), 7, "the confirmed lease is kept");
}

#[tokio::test(start_paused = true)]
async fn dropping_stops_renewal_and_tells_the_watches() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    let watch = keep_alive.watch();
    tokio::time::sleep(TTL / 2).await;
    drop(keep_alive);
    assert!(matches!(watch.lost().await, LeaseLost::Dropped));
    let renewed = lock.refreshes();
    tokio::time::sleep(TTL * 3).await;
    assert_eq!(
        lock.refreshes(),
        renewed,
        "a dropped keep-alive renews nothing"
    );
    assert_eq!(lock.released.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn release_tells_the_watches_and_frees_the_lock() {
    let lock = Scripted::new();
    let (keep_alive, _) = keep(&lock).await;
    let watch = keep_alive.watch();
    assert!(keep_alive.release().await.unwrap());
    assert!(matches!(
        watch.status(),
        LeaseStatus::Lost(LeaseLost::Released)
    ));
    assert_eq!(lock.released.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn adopt_refreshes_first_and_refuses_a_lost_lease() {
    let lock = Scripted::new();
    let lease = Lease::new("job", "t", 3, SystemTime::now() + TTL);
    let keep_alive = KeepAlive::adopt(Arc::clone(&lock) as Arc<dyn Lock>, &lease, TTL)
        .await
        .unwrap();
    assert_eq!((lock.refreshes(), keep_alive.fence()), (1, 3));
    lock.set(Refresh::Lost);
    let refused = KeepAlive::adopt(Arc::clone(&lock) as Arc<dyn Lock>, &lease, TTL).await;
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::Conflict);
}

#[test]
fn outside_a_tokio_runtime_nothing_is_acquired() {
    let lock = Scripted::new();
    let acquire = KeepAlive::acquire(Arc::clone(&lock) as Arc<dyn Lock>, "job", TTL);
    // Polled by a runtime-less executor: the keep-alive refuses before acquiring.
    let outcome = futures_lite_block_on(acquire);
    let error = outcome.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(
        error.to_string().contains("inside a Tokio runtime"),
        "{error}"
    );
}

/// Poll a future to completion on this thread, without Tokio.
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::yield_now();
    }
}
