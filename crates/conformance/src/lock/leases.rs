//! Lock obligations: a lease is granted, held, released and refreshed by its holder only.

use super::{LONG, LockSettings, SHORT};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::{Lease, Lock};
use std::time::{Duration, SystemTime};

/// Acquire a free lock: it must answer a lease naming it.
pub(super) async fn acquire_free(
    lock: &dyn Lock,
    name: &str,
    ttl: Duration,
) -> Result<Lease, String> {
    let lease = call!(
        format!("acquire({name:?}, {ttl:?})"),
        lock.acquire(name, ttl)
    );
    let Some(lease) = lease else {
        return Err(format!(
            "acquire({name:?}, {ttl:?}) of a free lock answered None"
        ));
    };
    ensure!(
        lease.name == name,
        "acquire({name:?}) answered a lease naming {:?}",
        lease.name
    );
    ensure!(
        !lease.token.trim().is_empty(),
        "acquire({name:?}) answered a lease with the blank token {:?}",
        lease.token
    );
    Ok(lease)
}

/// The lock `name` must be held by someone: `acquire` answers `None`.
pub(super) async fn expect_held(lock: &dyn Lock, name: &str, why: &str) -> Result<(), String> {
    let lease = call!(format!("acquire({name:?})"), lock.acquire(name, LONG));
    ensure!(
        lease.is_none(),
        "acquire({name:?}) answered a lease ({lease:?}), but the lock must still be held: {why}"
    );
    Ok(())
}

/// `release` of `lease` must answer `expected`.
pub(super) async fn expect_release(
    lock: &dyn Lock,
    lease: &Lease,
    expected: bool,
    why: &str,
) -> Result<(), String> {
    let released = call!(format!("release of {lease:?}"), lock.release(lease));
    ensure!(
        released == expected,
        "release of {lease:?} answered {released}, not {expected}: {why}"
    );
    Ok(())
}

/// `refresh` of `lease` must answer `Conflict`.
pub(super) async fn expect_refresh_conflict(
    lock: &dyn Lock,
    lease: &Lease,
    why: &str,
) -> Result<(), String> {
    expect_kind(
        &format!("refresh of {lease:?} ({why})"),
        ErrorKind::Conflict,
        &lock.refresh(lease, LONG).await,
    )
}

pub(super) async fn acquire_grants_a_lease_naming_the_lock<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let late = s.late();
    let before = SystemTime::now();
    let lease = acquire_free(&*i.driver, "kit-job", LONG).await?;
    let after = SystemTime::now();
    ensure!(
        lease.expires_at > after,
        "acquire with a 30 s ttl answered a lease expiring at {:?}, not in the future (now {after:?})",
        lease.expires_at
    );
    ensure!(
        lease.expires_at >= before + LONG - late && lease.expires_at <= after + LONG + late,
        "acquire with a 30 s ttl answered a lease expiring at {:?}, not 30 s after the call \
         (between {before:?} and {after:?}) give or take the declared tolerance of {late:?}",
        lease.expires_at
    );
    Ok(())
}

pub(super) async fn a_held_lock_cannot_be_acquired<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let lease = acquire_free(lock, "kit-held", LONG).await?;
    expect_held(lock, "kit-held", "a second acquire while held").await?;
    expect_held(lock, "kit-held", "a third acquire while held").await?;
    expect_release(
        lock,
        &lease,
        true,
        "the first holder must keep the lock when others are refused",
    )
    .await
}

pub(super) async fn release_by_the_holder_frees_the_lock<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let first = acquire_free(lock, "kit-release", LONG).await?;
    expect_release(lock, &first, true, "the holder releases a valid lease").await?;
    let second = acquire_free(lock, "kit-release", LONG)
        .await
        .map_err(|e| format!("after release: {e}"))?;
    ensure!(
        second.token != first.token,
        "two successive holders of a lock got the same token {:?}",
        first.token
    );
    expect_release(lock, &second, true, "the holder releases a valid lease").await?;
    expect_release(lock, &second, false, "the lease was already released").await?;
    expect_refresh_conflict(lock, &second, "the lease was released").await?;
    acquire_free(lock, "kit-release", LONG)
        .await
        .map_err(|e| format!("after a second release and a refused refresh: {e}"))
        .map(drop)
}

pub(super) async fn a_foreign_or_stale_token_can_neither_release_nor_refresh<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    // A previous holder's token.
    let stale = acquire_free(lock, "kit-stale", LONG).await?;
    expect_release(lock, &stale, true, "the holder releases a valid lease").await?;
    let holder = acquire_free(lock, "kit-stale", LONG).await?;
    expect_release(lock, &stale, false, "the token is a previous holder's").await?;
    expect_refresh_conflict(lock, &stale, "the token is a previous holder's").await?;
    expect_held(lock, "kit-stale", "a stale token must not free it").await?;
    // Another lock's token, presented for this lock.
    let other = acquire_free(lock, "kit-other", LONG).await?;
    let foreign = Lease::new(
        "kit-stale",
        other.token.clone(),
        other.fence,
        holder.expires_at,
    );
    expect_release(lock, &foreign, false, "the token is another lock's").await?;
    expect_refresh_conflict(lock, &foreign, "the token is another lock's").await?;
    expect_held(lock, "kit-stale", "a foreign token must not free it").await?;
    expect_held(lock, "kit-other", "its token was used on another lock").await?;
    // This lock's token, presented for another lock.
    let swapped = Lease::new(
        "kit-other",
        holder.token.clone(),
        holder.fence,
        other.expires_at,
    );
    expect_release(lock, &swapped, false, "the token is another lock's").await?;
    expect_held(lock, "kit-other", "a foreign token must not free it").await?;
    // A lock nobody holds.
    let unheld = Lease::new(
        "kit-never-held",
        holder.token.clone(),
        holder.fence,
        holder.expires_at,
    );
    expect_release(lock, &unheld, false, "nobody holds that lock").await?;
    expect_refresh_conflict(lock, &unheld, "nobody holds that lock").await?;
    expect_release(lock, &holder, true, "the holder keeps its lock").await?;
    expect_release(lock, &other, true, "the holder keeps its lock").await
}

/// The lease `refused_acquires_leave_the_lease_as_it_was` holds while others try.
pub(super) const HOLD: Duration = Duration::from_millis(1500);

pub(super) async fn refused_acquires_leave_the_lease_as_it_was<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let name = "kit-lasting";
    let late = s.late();
    let asked = tokio::time::Instant::now();
    let holder = acquire_free(lock, name, HOLD).await?;
    let refused = call!(
        format!("acquire({name:?}, {SHORT:?}) of a held lock"),
        lock.acquire(name, SHORT)
    );
    ensure!(
        refused.is_none(),
        "acquire of a held lock answered a lease: {refused:?}"
    );
    tokio::time::sleep(SHORT * 2).await;
    // `expect_held` tries again with a 30 s ttl: refused too, it must not lengthen the lease.
    expect_held(
        lock,
        name,
        "a refused acquire with a shorter ttl must not shorten the holder's lease of 1.5 s",
    )
    .await?;
    let deadline = asked + HOLD + late;
    let taker = loop {
        let tried = tokio::time::Instant::now();
        if let Some(lease) = call!("acquire after the lease's end", lock.acquire(name, LONG)) {
            break lease;
        }
        ensure!(
            tried < deadline,
            "a lease of {HOLD:?} still held its lock {:?} after it was acquired, more than the \
             declared tolerance ({late:?}) past its end: refused acquires with a 30 s ttl must \
             not lengthen it",
            tried - asked
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    expect_release(lock, &holder, false, "its lease ended and was taken over").await?;
    expect_release(lock, &taker, true, "the new holder releases its lease").await
}

pub(super) async fn refresh_extends_the_lease<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    let ttl = Duration::from_millis(400);
    // A machine too slow to refresh within 400 ms may see `Conflict`: try again, a few times.
    for attempt in 0..3 {
        let name = format!("kit-refresh-{attempt}");
        let started = tokio::time::Instant::now();
        let lease = acquire_free(lock, &name, ttl).await?;
        let before = SystemTime::now();
        let refreshed = match lock.refresh(&lease, LONG).await {
            Ok(refreshed) => refreshed,
            Err(error) if error.kind() == ErrorKind::Conflict && started.elapsed() >= ttl => {
                continue;
            }
            Err(error) => return Err(format!("refresh of {lease:?} failed: {error}")),
        };
        let now = SystemTime::now();
        ensure!(
            refreshed.name == name,
            "refresh of a lease on {name:?} answered a lease naming {:?}",
            refreshed.name
        );
        ensure!(
            refreshed.expires_at > lease.expires_at
                && refreshed.expires_at >= before + LONG - late
                && refreshed.expires_at <= now + LONG + late,
            "refresh to 30 s of a lease expiring at {:?} answered one expiring at {:?}, not 30 s \
             after the call (between {before:?} and {now:?}) give or take the declared tolerance \
             of {late:?}",
            lease.expires_at,
            refreshed.expires_at
        );
        tokio::time::sleep(2 * ttl).await;
        expect_held(lock, &name, "its lease was refreshed to 30 s").await?;
        return expect_release(lock, &refreshed, true, "its refreshed lease is valid").await;
    }
    Err("refresh of a fresh 400 ms lease answered Conflict three times".to_owned())
}
