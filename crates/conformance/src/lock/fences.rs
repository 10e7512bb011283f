//! Lock obligations: fences, a paused holder, and the bounded blocking acquire.

use super::concurrency::race;
use super::expiry::await_free;
use super::leases::{acquire_free, expect_held, expect_release};
use super::{LONG, LockSettings, SHORT};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::Lease;
use std::time::Duration;

/// `next` must carry a fence strictly greater than `previous`'s: `what` says how it came.
fn expect_newer(previous: &Lease, next: &Lease, what: &str) -> Result<(), String> {
    ensure!(
        next.fence > previous.fence,
        "{what}: the new lease has fence {}, not greater than the earlier lease's {} \
         (fences must strictly increase with every grant of a name)",
        next.fence,
        previous.fence
    );
    Ok(())
}

pub(super) async fn fences_strictly_increase_with_every_grant<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let name = "kit-fence";
    // Grants in quick succession, with another name's grants in between: a fence from a clock
    // repeats within its tick; one kept beside the lease starts again after a release.
    let mut previous = acquire_free(lock, name, LONG).await?;
    for round in 0..20 {
        expect_release(lock, &previous, true, "its holder releases it").await?;
        let other = acquire_free(lock, "kit-fence-other", LONG).await?;
        let next = acquire_free(lock, name, LONG).await?;
        expect_newer(
            &previous,
            &next,
            &format!("grant {} after a release", round + 2),
        )?;
        expect_release(lock, &other, true, "its holder releases it").await?;
        previous = next;
    }
    // A refresh keeps the fence: the lease is the same grant.
    for ttl in [LONG, SHORT * 2, LONG] {
        let refreshed = call!("refresh", lock.refresh(&previous, ttl));
        ensure!(
            refreshed.fence == previous.fence,
            "refresh of {previous:?} answered fence {}: a refreshed lease keeps its fence",
            refreshed.fence
        );
    }
    expect_release(lock, &previous, true, "its refreshed lease is valid").await?;
    // A takeover after expiry.
    let expiring = acquire_free(lock, name, SHORT).await?;
    expect_newer(&previous, &expiring, "a grant after the refreshes")?;
    let asked = tokio::time::Instant::now();
    let taker = await_free(lock, name, SHORT, asked, s.late()).await?;
    expect_newer(&expiring, &taker, "a takeover after the lease expired")?;
    expect_release(lock, &taker, true, "the new holder releases it").await?;
    // Concurrent contenders, round after round: each round's one winner is newer.
    let mut previous = taker;
    for round in 0..4 {
        let (winners, _) = race(i, "kit-fence", None).await?;
        ensure!(
            winners.len() == 1,
            "round {round} of concurrent acquires gave {} leases, not exactly one",
            winners.len()
        );
        expect_newer(&previous, &winners[0], "the winner of concurrent acquires")?;
        expect_release(lock, &winners[0], true, "the one winner holds it").await?;
        previous = winners[0].clone();
    }
    Ok(())
}

pub(super) async fn a_paused_holder_finds_its_lease_lost_and_its_fence_stale<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let name = "kit-paused";
    let paused = acquire_free(lock, name, SHORT).await?;
    let asked = tokio::time::Instant::now();
    // While the holder is stalled past its ttl, another holder takes the lock over.
    let newer = await_free(lock, name, SHORT, asked, s.late()).await?;
    expect_newer(
        &paused,
        &newer,
        "the lease granted while its holder was paused",
    )?;
    // The holder wakes up: its lease is gone, whatever its own `expires_at` said.
    expect_kind(
        "refresh by a holder paused past its ttl",
        ErrorKind::Conflict,
        &lock.refresh(&paused, LONG).await,
    )?;
    expect_release(
        lock,
        &paused,
        false,
        "its holder was paused past its ttl and the lock was taken over",
    )
    .await?;
    // Its late write is refused by a resource that keeps the last fence it accepted; the
    // newer holder keeps the lock.
    expect_held(lock, name, "the newer holder's lease is valid").await?;
    let refreshed = call!("refresh by the newer holder", lock.refresh(&newer, LONG));
    ensure!(
        refreshed.fence == newer.fence && refreshed.fence > paused.fence,
        "the newer holder's refresh answered fence {}, its grant had {} and the paused holder {}",
        refreshed.fence,
        newer.fence,
        paused.fence
    );
    expect_release(lock, &newer, true, "the newer holder releases it").await
}

pub(super) async fn acquire_wait_respects_its_timeout<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    // A free lock: at once.
    let asked = tokio::time::Instant::now();
    let holder = call!(
        "acquire_wait of a free lock",
        lock.acquire_wait("kit-wait", LONG, LONG)
    );
    let Some(holder) = holder else {
        return Err("acquire_wait of a free lock with a 30 s timeout answered None".to_owned());
    };
    ensure!(
        holder.name == "kit-wait" && asked.elapsed() <= late,
        "acquire_wait of a free lock answered {holder:?} after {:?}: a lease of the lock, within \
         the declared tolerance ({late:?})",
        asked.elapsed()
    );
    // A held lock: `None` once the timeout has passed, neither before nor long after.
    for timeout in [Duration::ZERO, SHORT, SHORT * 2] {
        let asked = tokio::time::Instant::now();
        let got = call!(
            format!("acquire_wait of a held lock for {timeout:?}"),
            lock.acquire_wait("kit-wait", LONG, timeout)
        );
        let took = asked.elapsed();
        ensure!(
            got.is_none(),
            "acquire_wait of a held lock answered {got:?}: its holder's lease is valid"
        );
        ensure!(
            took >= timeout && took <= timeout + late,
            "acquire_wait of a held lock with a {timeout:?} timeout answered None after {took:?}: \
             not between the timeout and the declared tolerance ({late:?}) past it"
        );
    }
    expect_kind(
        "acquire_wait with a zero ttl",
        ErrorKind::InvalidInput,
        &lock
            .acquire_wait("kit-wait-zero", Duration::ZERO, SHORT)
            .await,
    )?;
    expect_kind(
        "acquire_wait of an empty name",
        ErrorKind::InvalidInput,
        &lock.acquire_wait("", LONG, SHORT).await,
    )?;
    expect_held(lock, "kit-wait", "waiters that timed out change nothing").await?;
    expect_release(lock, &holder, true, "waiters that timed out change nothing").await
}

pub(super) async fn acquire_wait_wakes_when_the_lock_is_released_or_expires<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    const WAITERS: usize = 4;
    let lock = &*i.driver;
    let late = s.late();
    let wait = Duration::from_millis(1500);
    // Released: one of the waiters wakes and gets it at once; the others wait on, the lock
    // being held again, and time out.
    let holder = acquire_free(lock, "kit-wake", LONG).await?;
    let mut waiters = Vec::new();
    for _ in 0..WAITERS {
        let lock = i.shared();
        waiters.push(tokio::spawn(async move {
            let got = lock.acquire_wait("kit-wake", LONG, wait).await;
            (got, tokio::time::Instant::now())
        }));
    }
    tokio::time::sleep(SHORT).await;
    let released_at = tokio::time::Instant::now();
    expect_release(lock, &holder, true, "waiters do not take a held lock").await?;
    let mut winners = Vec::new();
    for waiter in waiters {
        let (got, at) = waiter
            .await
            .map_err(|e| format!("a waiter panicked: {e}"))?;
        let got = got.map_err(|e| format!("acquire_wait failed: {e}"))?;
        if let Some(lease) = got {
            winners.push((lease, at - released_at));
        }
    }
    ensure!(
        winners.len() == 1,
        "{WAITERS} waiters on a released lock got {} leases, not exactly one",
        winners.len()
    );
    let (winner, after) = &winners[0];
    ensure!(
        *after <= late,
        "a waiter got the released lock {after:?} after the release: it must wake when the lock \
         is released, within the declared tolerance ({late:?}), not poll or wait out its timeout"
    );
    expect_newer(&holder, winner, "the lease a waiter got")?;
    expect_release(lock, winner, true, "the waiter holds it").await?;
    // Expired: a waiter gets the lock when its holder's lease ends.
    let ttl = Duration::from_millis(600);
    let asked = tokio::time::Instant::now();
    let expiring = acquire_free(lock, "kit-wake-expiry", ttl).await?;
    let got = call!(
        "acquire_wait of a lock whose lease ends",
        lock.acquire_wait("kit-wake-expiry", LONG, Duration::from_secs(5))
    );
    let took = asked.elapsed();
    let Some(taker) = got else {
        return Err(format!(
            "acquire_wait with a 5 s timeout answered None after {took:?}, though the holder's \
             lease of {ttl:?} ended"
        ));
    };
    ensure!(
        took + late >= ttl && took <= ttl + late,
        "a waiter got a lock whose lease of {ttl:?} ended after {took:?}: not within the \
         declared tolerance ({late:?}) of its end"
    );
    expect_newer(
        &expiring,
        &taker,
        "the lease a waiter got when the lease ended",
    )?;
    expect_release(lock, &taker, true, "the waiter holds it").await
}
