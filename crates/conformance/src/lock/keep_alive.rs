//! Lock obligations: the holder's keep-alive ([`KeepAlive`]) on the driver fails closed.
//!
//! The keep-alive trusts the driver's `refresh` for two things: that a confirmed refresh holds
//! the lease `ttl` from when the store handled it (so never less than `ttl` from when the
//! request was sent), and that a lease no longer its holder's answers `Conflict`. A driver
//! that breaks either lets another holder in while the keep-alive still reports the lease
//! held: these obligations look for exactly that moment, with a wrapper around the driver that
//! makes renewals hang or fail when the obligation says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::leases::{acquire_free, expect_held, expect_release};
use super::{LONG, LockSettings, SHORT};
use crate::harness::Instance;
use crate::{call, ensure};
use sandloom_driverkit::lock::{LockCapability, LockProvider};
use sandloom_sdk_infra::lock::{KeepAlive, Lease, LeaseLost, LeaseStatus, Lock, LockOps};
use sandloom_sdk_infra::{InfraError, InfraResult};
use tokio::time::Instant;

/// How often a contender tries to take the lock the keep-alive holds.
const POLL: Duration = Duration::from_millis(10);

/// Take `name` with a keep-alive of `ttl` on `lock`.
async fn keep(lock: Arc<dyn Lock>, name: &str, ttl: Duration) -> Result<KeepAlive, String> {
    let keep_alive = call!(
        format!("KeepAlive::acquire({name:?}, {ttl:?})"),
        KeepAlive::acquire(lock, name, ttl)
    );
    keep_alive.ok_or_else(|| format!("KeepAlive::acquire({name:?}) of a free lock answered None"))
}

/// When the keep-alive reported its lease lost, and why: a task waiting on its watch.
fn when_lost(keep_alive: &KeepAlive) -> tokio::task::JoinHandle<(LeaseLost, Instant)> {
    let watch = keep_alive.watch();
    tokio::spawn(async move {
        let why = watch.lost().await;
        (why, Instant::now())
    })
}

pub(super) async fn keep_alive_holds_a_lease_past_several_ttls<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = i.served_arc::<LockCapability>();
    let name = "kit-keep-alive";
    let keep_alive = keep(Arc::clone(&lock), name, SHORT).await?;
    let granted = keep_alive.lease();
    let watch = keep_alive.watch();
    // Four ttls: every renewal must be confirmed, and hold the lock against a contender.
    let began = Instant::now();
    while began.elapsed() < SHORT * 4 {
        let status = keep_alive.status();
        ensure!(
            matches!(status, LeaseStatus::Held { .. }),
            "a keep-alive of a {SHORT:?} lease renewed every {:?} reported {status:?} after \
             {:?}: the driver's refresh must confirm a valid lease",
            SHORT / 3,
            began.elapsed()
        );
        if let Some(taken) = call!(
            "acquire by a contender while the keep-alive renews",
            lock.acquire(name, LONG)
        ) {
            return Err(format!(
                "a contender got {taken:?} {:?} into a keep-alive of a {SHORT:?} lease that \
                 reported {:?}: the driver's refresh did not hold the lease for its ttl",
                began.elapsed(),
                keep_alive.status()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let renewed = keep_alive.lease();
    ensure!(
        renewed.token == granted.token && renewed.fence == granted.fence,
        "the renewed lease {renewed:?} is not the grant {granted:?}: refresh keeps the token and \
         the fence"
    );
    // Release through the keep-alive: watches are told, and the lock is free at once.
    ensure!(
        call!("KeepAlive::release", keep_alive.release()),
        "KeepAlive::release of a lease it kept alive answered false"
    );
    ensure!(
        matches!(watch.status(), LeaseStatus::Lost(LeaseLost::Released)),
        "after KeepAlive::release, its watch reported {:?}",
        watch.status()
    );
    let next = acquire_free(&*lock, name, LONG).await?;
    ensure!(
        next.fence > granted.fence,
        "the grant after a kept-alive lease was released has fence {}, not greater than its {}",
        next.fence,
        granted.fence
    );
    expect_release(&*lock, &next, true, "its holder releases it").await
}

pub(super) async fn keep_alive_reports_a_lease_taken_over_as_lost<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = i.served_arc::<LockCapability>();
    let name = "kit-keep-alive-taken";
    let keep_alive = keep(Arc::clone(&lock), name, SHORT).await?;
    let lost = when_lost(&keep_alive);
    // The lease ends under the keep-alive (as a holder's lease does when it expires while the
    // store is cut off), and another holder takes the lock.
    let copy = keep_alive.lease();
    expect_release(&*lock, &copy, true, "the kept-alive lease is valid").await?;
    let newer = acquire_free(&*lock, name, LONG).await?;
    let taken = Instant::now();
    // The next renewal, a third of the ttl later, must be refused: lost at once, not at expiry.
    let bound = SHORT / 3 + s.late();
    let Ok(joined) = tokio::time::timeout(bound, lost).await else {
        return Err(format!(
            "{bound:?} after another holder took the lock ({newer:?}), the keep-alive still \
             reported {:?}: the driver's refresh of a lease no longer held must answer Conflict",
            keep_alive.status()
        ));
    };
    let (why, _) = joined.map_err(|e| format!("the keep-alive's watch task failed: {e}"))?;
    ensure!(
        matches!(why, LeaseLost::Conflict(_)),
        "the keep-alive of a lease taken over reported {why:?} ({why}) {:?} after the takeover; \
         the refresh of a lease no longer held must answer Conflict",
        taken.elapsed()
    );
    ensure!(
        !keep_alive.is_held(),
        "the keep-alive reported the loss, then {:?}",
        keep_alive.status()
    );
    // The newer holder keeps the lock: the old keep-alive's release frees nothing.
    ensure!(
        !call!("KeepAlive::release of a lost lease", keep_alive.release()),
        "KeepAlive::release of a lease taken over answered true"
    );
    expect_held(&*lock, name, "the newer holder's lease is valid").await?;
    expect_release(&*lock, &newer, true, "the newer holder releases it").await
}

pub(super) async fn keep_alive_fails_closed_when_renewal_hangs_or_fails<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let inner = i.served_arc::<LockCapability>();
    let faulty = Arc::new(Faulty {
        inner: Arc::clone(&inner),
        hang: AtomicU32::new(0),
        fail: AtomicU32::new(0),
    });
    a_failed_renewal_is_retried(&faulty, &inner).await?;
    hung_renewals_fail_closed(&faulty, &inner, s.late()).await
}

async fn a_failed_renewal_is_retried(
    faulty: &Arc<Faulty>,
    inner: &Arc<dyn Lock>,
) -> Result<(), String> {
    // A renewal that fails once is retried before the lease's end, and reported meanwhile.
    let ttl = SHORT * 2;
    let name = "kit-keep-alive-failing";
    let keep_alive = keep(Arc::clone(faulty) as Arc<dyn Lock>, name, ttl).await?;
    let mut watch = keep_alive.watch();
    faulty.fail.store(1, Ordering::SeqCst);
    // A renewal in flight may be confirmed first; the failed one comes within a ttl.
    let failing = Instant::now();
    loop {
        let Ok(status) = tokio::time::timeout(ttl, watch.changed()).await else {
            return Err(format!(
                "a renewal failed with Unavailable {:?} ago, and the keep-alive still reports \
                 {:?}, not Uncertain",
                failing.elapsed(),
                keep_alive.status()
            ));
        };
        match status {
            LeaseStatus::Uncertain { .. } => break,
            LeaseStatus::Held { .. } => {}
            other => {
                return Err(format!(
                    "after one renewal failed with Unavailable, the keep-alive reported \
                     {other:?}: it must retry before the lease's end"
                ));
            }
        }
    }
    tokio::time::sleep(ttl * 2).await;
    ensure!(
        matches!(keep_alive.status(), LeaseStatus::Held { .. }),
        "a keep-alive whose renewal failed once reported {:?} two ttls later: its retry must \
         renew the lease",
        keep_alive.status()
    );
    expect_held(&**inner, name, "the keep-alive renews it").await?;
    ensure!(
        call!("KeepAlive::release", keep_alive.release()),
        "KeepAlive::release of a lease it kept alive answered false"
    );
    Ok(())
}

async fn hung_renewals_fail_closed(
    faulty: &Arc<Faulty>,
    inner: &Arc<dyn Lock>,
    late: Duration,
) -> Result<(), String> {
    // Renewals that hang: the store renews, the answer comes a whole ttl late.
    let name = "kit-keep-alive-hanging";
    let keep_alive = keep(Arc::clone(faulty) as Arc<dyn Lock>, name, SHORT).await?;
    let grant = keep_alive.lease();
    let lost = when_lost(&keep_alive);
    tokio::time::sleep(SHORT / 2).await;
    ensure!(
        keep_alive.is_held(),
        "a keep-alive of a {SHORT:?} lease reported {:?} half a ttl in",
        keep_alive.status()
    );
    faulty.hang.store(u32::MAX, Ordering::SeqCst);
    let hung = Instant::now();
    // A contender takes the lock as soon as the store frees it; by then the keep-alive must
    // have reported the lease lost.
    let newer = loop {
        if let Some(newer) = call!(
            "acquire by a contender while the renewals hang",
            inner.acquire(name, LONG)
        ) {
            break newer;
        }
        ensure!(
            hung.elapsed() < SHORT * 2 + late,
            "{:?} after the renewals began to hang, the lock was still held: the lease must end \
             a ttl ({SHORT:?}) after the last renewal the store handled, within the declared \
             tolerance ({late:?})",
            hung.elapsed()
        );
        tokio::time::sleep(POLL).await;
    };
    let status = keep_alive.status();
    ensure!(
        !status.is_held(),
        "a contender got {newer:?} {:?} after the renewals began to hang, while the keep-alive \
         still reported {status:?}: the driver's refresh held the lease less than its ttl",
        hung.elapsed()
    );
    let (why, at) = lost
        .await
        .map_err(|e| format!("the keep-alive's watch task failed: {e}"))?;
    ensure!(
        matches!(why, LeaseLost::Unconfirmed { .. }) && at - hung <= SHORT + late,
        "the keep-alive of a {SHORT:?} lease whose renewals hang reported {why:?} {:?} after \
         they began: lost, unconfirmed, within a ttl and the declared tolerance ({late:?})",
        at - hung
    );
    ensure!(
        newer.fence > grant.fence,
        "the contender's fence {} is not greater than the lost lease's {}",
        newer.fence,
        grant.fence
    );
    // The late answers arrive: the lease stays lost, and the contender keeps the lock.
    tokio::time::sleep(SHORT * 2).await;
    ensure!(
        !keep_alive.is_held(),
        "after a renewal's late answer, the keep-alive reported {:?}: a lost lease stays lost",
        keep_alive.status()
    );
    drop(keep_alive);
    expect_held(&**inner, name, "the contender's lease is valid").await?;
    expect_release(&**inner, &newer, true, "the contender releases it").await
}

/// The driver, with renewals that fail or hang on command.
struct Faulty {
    inner: Arc<dyn Lock>,
    /// Refreshes still to hang: handled by the store at once, answered a ttl late.
    hang: AtomicU32,
    /// Refreshes still to fail with `Unavailable`, without reaching the store.
    fail: AtomicU32,
}

/// Take one from `counter` when it is not zero.
fn take(counter: &AtomicU32) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl LockOps for Faulty {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        self.inner.acquire(name, ttl).await
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        self.inner.acquire_wait(name, ttl, timeout).await
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        self.inner.release(lease).await
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        if take(&self.fail) {
            return Err(InfraError::unavailable(
                "lock",
                "the kit cut this renewal off",
            ));
        }
        let answer = self.inner.refresh(lease, ttl).await;
        if take(&self.hang) {
            tokio::time::sleep(ttl).await;
        }
        answer
    }
}
