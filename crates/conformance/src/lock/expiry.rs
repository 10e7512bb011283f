//! Lock obligations: a lease expires when its ttl says, from the moment it says, and not before.

use super::leases::{acquire_free, expect_held, expect_refresh_conflict, expect_release};
use super::{LONG, LockSettings, SHORT};
use crate::harness::Instance;
use crate::{call, ensure};
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::lock::{Lease, Lock};
use std::time::{Duration, SystemTime};

pub(super) async fn an_expired_lease_can_be_taken_over<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    let asked = tokio::time::Instant::now();
    let old = acquire_free(lock, "kit-expiring", SHORT).await?;
    // Not early: still held at half its ttl (when the machine got there in time to tell).
    tokio::time::sleep_until(asked + SHORT / 2).await;
    let early = call!(
        "acquire at half the ttl",
        lock.acquire("kit-expiring", LONG)
    );
    ensure!(
        early.is_none() || asked.elapsed() >= SHORT,
        "a lease with a 300 ms ttl ended {:?} after it was acquired: another acquire got {early:?}",
        asked.elapsed()
    );
    tokio::time::sleep_until(asked + SHORT).await;
    // Not late: free within the declared tolerance of its end.
    let deadline = asked + SHORT + late;
    let new = loop {
        let tried = tokio::time::Instant::now();
        let lease = call!("acquire after expiry", lock.acquire("kit-expiring", LONG));
        if let Some(lease) = lease {
            break lease;
        }
        ensure!(
            tried < deadline,
            "a lease with a 300 ms ttl still held its lock {:?} after it was acquired: more than \
             the declared tolerance ({late:?}) past its end",
            tried - asked
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    ensure!(
        new.name == "kit-expiring" && new.token != old.token,
        "the new holder got {new:?}, the old one had {old:?}: the name must match, tokens differ"
    );
    expect_release(lock, &old, false, "its lease expired and was taken over").await?;
    expect_refresh_conflict(lock, &old, "its lease expired and was taken over").await?;
    expect_held(lock, "kit-expiring", "the new holder's lease is valid").await?;
    expect_release(lock, &new, true, "the new holder releases its lease").await
}

pub(super) async fn an_expired_lease_can_neither_be_released_nor_refreshed<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let to_release = acquire_free(lock, "kit-expired-release", SHORT).await?;
    let to_refresh = acquire_free(lock, "kit-expired-refresh", SHORT).await?;
    // Lease values whose own `expires_at` is still far ahead, for leases that end as soon as
    // the ones above: a 30 s lease refreshed down to 300 ms, and a value made up with the token
    // of a real 300 ms lease. The lock's own expiry decides, never the caller's copy of it.
    // Each kind twice: one value to release (`true`), one to refresh.
    let mut stale = Vec::new();
    for (name, release) in [
        ("kit-expired-shortened-release", true),
        ("kit-expired-shortened-refresh", false),
    ] {
        let long = acquire_free(lock, name, LONG).await?;
        call!(
            format!("refresh of a 30 s lease on {name:?} down to {SHORT:?}"),
            lock.refresh(&long, SHORT)
        );
        let what = "a 30 s lease value, whose lease was refreshed down to 300 ms";
        stale.push((long, what, release));
    }
    for (name, release) in [
        ("kit-expired-forged-release", true),
        ("kit-expired-forged-refresh", false),
    ] {
        let short = acquire_free(lock, name, SHORT).await?;
        let forged = Lease::new(
            name,
            short.token,
            short.fence,
            SystemTime::now() + Duration::from_hours(1),
        );
        let what = "a 300 ms lease's token in a value claiming an hour";
        stale.push((forged, what, release));
    }
    // Nobody takes them over, so their expiry cannot be observed by polling: wait it out
    // generously (their ttl was counted from before these calls returned).
    tokio::time::sleep(SHORT + Duration::from_millis(700)).await;
    expect_release(lock, &to_release, false, "its lease had expired").await?;
    expect_refresh_conflict(lock, &to_refresh, "its lease had expired").await?;
    for (lease, what, release) in &stale {
        let why = format!("its lease had expired: {what}");
        if *release {
            expect_release(lock, lease, false, &why).await?;
        } else {
            expect_refresh_conflict(lock, lease, &why).await?;
        }
    }
    acquire_free(lock, "kit-expired-release", LONG)
        .await
        .map_err(|e| format!("after its lease expired: {e}"))?;
    for (lease, _, _) in &stale {
        acquire_free(lock, &lease.name, LONG)
            .await
            .map_err(|e| format!("after its lease expired and a stale value was refused: {e}"))?;
    }
    acquire_free(lock, "kit-expired-refresh", LONG)
        .await
        .map_err(|e| format!("after a refused refresh of its expired lease: {e}"))
        .map(drop)
}

/// 400 days: beyond `u32` milliseconds.
pub(super) const DAYS_400: Duration = Duration::from_hours(400 * 24);
/// 100 years: beyond `i32` seconds, and what `Duration::MAX` must at least give. (The kit
/// asks for a century, not `Duration::MAX`: the contract holds that as long as the backend
/// can, but a kit that required it would fail drivers for an overflow no caller meets.)
pub(super) const CENTURY: Duration = Duration::from_hours(100 * 365 * 24);

/// `lease` (just answered for `ttl`, asked between `before` and `after`) must report an expiry
/// `ttl` after the call, give or take `late`; for a ttl longer than 100 years, at least 100 years.
pub(super) fn expect_expiry(
    what: &str,
    lease: &Lease,
    ttl: Duration,
    (before, after): (SystemTime, SystemTime),
    late: Duration,
) -> Result<(), String> {
    if ttl > CENTURY {
        let floor = after.checked_add(CENTURY);
        ensure!(
            floor.is_some_and(|floor| lease.expires_at >= floor),
            "{what} with a {ttl:?} ttl answered a lease expiring at {:?}: a ttl longer than the \
             backend holds is held as long as it can, never less than 100 years",
            lease.expires_at
        );
        return Ok(());
    }
    let low = (before + ttl).checked_sub(late).unwrap_or(before);
    let high = after + ttl + late;
    ensure!(
        lease.expires_at >= low && lease.expires_at <= high,
        "{what} with a {ttl:?} ttl answered a lease expiring at {:?}, not {ttl:?} after the call \
         (between {before:?} and {after:?}) give or take the declared tolerance of {late:?}",
        lease.expires_at
    );
    Ok(())
}

/// Wait until the lock `name`, whose lease of `ttl` began at `asked` or just after, is free:
/// within `late` of its end. Answers the new lease, for the caller to release.
pub(super) async fn await_free(
    lock: &dyn Lock,
    name: &str,
    ttl: Duration,
    asked: tokio::time::Instant,
    late: Duration,
) -> Result<Lease, String> {
    let deadline = asked + ttl + late;
    loop {
        let tried = tokio::time::Instant::now();
        if let Some(lease) = call!(
            format!("acquire({name:?}) after its lease's end"),
            lock.acquire(name, LONG)
        ) {
            return Ok(lease);
        }
        ensure!(
            tried < deadline,
            "a lease of {ttl:?} on {name:?} still held its lock {:?} after it began: more than \
             the declared tolerance ({late:?}) past its end (was it rounded up?)",
            tried - asked
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Hold the lock `name` (leased for `ttl` at `asked` or just after) to its lifetime: held until
/// `ttl - late` where that is positive, free by `ttl + late`.
pub(super) async fn expect_lease_lifetime(
    lock: &dyn Lock,
    name: &str,
    ttl: Duration,
    asked: tokio::time::Instant,
    late: Duration,
) -> Result<(), String> {
    if let Some(early) = ttl.checked_sub(late).filter(|early| !early.is_zero()) {
        tokio::time::sleep_until(asked + early).await;
        let taken = call!(format!("acquire({name:?})"), lock.acquire(name, LONG));
        ensure!(
            taken.is_none() || asked.elapsed() >= ttl,
            "a lease of {ttl:?} on {name:?} ended {:?} after it began: more than the declared \
             tolerance ({late:?}) early (was it rounded down?); another acquire got {taken:?}",
            asked.elapsed()
        );
    }
    let taker = await_free(lock, name, ttl, asked, late).await?;
    expect_release(lock, &taker, true, "the new holder releases its lease").await
}

pub(super) async fn lease_ttl_extremes_are_accepted<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    // Shorter than any backend's resolution: rounded up to it, never refused or made endless.
    let asked = tokio::time::Instant::now();
    acquire_free(lock, "kit-1us", Duration::from_micros(1)).await?;
    let taker = await_free(lock, "kit-1us", Duration::from_micros(1), asked, late).await?;
    expect_release(lock, &taker, true, "the new holder releases its lease").await?;
    // Longer than many backends hold: as long as they can, at least 100 years.
    for (name, ttl) in [("kit-400d", DAYS_400), ("kit-100y", CENTURY)] {
        let before = SystemTime::now();
        let lease = acquire_free(lock, name, ttl).await?;
        expect_expiry("acquire", &lease, ttl, (before, SystemTime::now()), late)?;
        expect_held(lock, name, &format!("its lease of {ttl:?} is valid")).await?;
        expect_release(lock, &lease, true, "its long lease is valid").await?;
    }
    // `refresh` to each.
    for (name, ttl) in [
        ("kit-refresh-400d", DAYS_400),
        ("kit-refresh-100y", CENTURY),
    ] {
        let lease = acquire_free(lock, name, LONG).await?;
        let before = SystemTime::now();
        let refreshed = call!(
            format!("refresh of {lease:?} to {ttl:?}"),
            lock.refresh(&lease, ttl)
        );
        expect_expiry(
            "refresh",
            &refreshed,
            ttl,
            (before, SystemTime::now()),
            late,
        )?;
        expect_held(lock, name, &format!("its lease was refreshed to {ttl:?}")).await?;
        expect_release(lock, &refreshed, true, "its refreshed lease is valid").await?;
    }
    let lease = acquire_free(lock, "kit-refresh-1us", LONG).await?;
    let asked = tokio::time::Instant::now();
    call!(
        "refresh to 1 µs",
        lock.refresh(&lease, Duration::from_micros(1))
    );
    let taker = await_free(
        lock,
        "kit-refresh-1us",
        Duration::from_micros(1),
        asked,
        late,
    )
    .await?;
    expect_release(lock, &taker, true, "the new holder releases its lease").await
}

pub(super) async fn sub_second_leases_are_exact<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    for ttl in [Duration::from_millis(150), Duration::from_millis(1500)] {
        let name = format!("kit-exact-{}ms", ttl.as_millis());
        let asked = tokio::time::Instant::now();
        acquire_free(lock, &name, ttl).await?;
        expect_lease_lifetime(lock, &name, ttl, asked, late).await?;
        // Refreshed to it from a long lease.
        let name = format!("kit-exact-refresh-{}ms", ttl.as_millis());
        let lease = acquire_free(lock, &name, LONG).await?;
        let asked = tokio::time::Instant::now();
        call!(format!("refresh to {ttl:?}"), lock.refresh(&lease, ttl));
        expect_lease_lifetime(lock, &name, ttl, asked, late).await?;
    }
    Ok(())
}

pub(super) async fn refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    let shorter = Duration::from_millis(600);
    let lease = acquire_free(lock, "kit-shorten", LONG).await?;
    let asked = tokio::time::Instant::now();
    let before = SystemTime::now();
    let refreshed = call!(
        "refresh of a 30 s lease to 600 ms",
        lock.refresh(&lease, shorter)
    );
    expect_expiry(
        "refresh of a 30 s lease",
        &refreshed,
        shorter,
        (before, SystemTime::now()),
        late,
    )?;
    ensure!(
        refreshed.token == lease.token && refreshed.name == lease.name,
        "refresh of {lease:?} answered {refreshed:?}: a refreshed lease keeps its name and token"
    );
    // A refresh sets the expiry to `ttl` from now, shorter than what was left too.
    expect_lease_lifetime(lock, "kit-shorten", shorter, asked, late).await?;
    // The lease value from before a refresh still refreshes and releases it.
    let original = acquire_free(lock, "kit-keep-token", LONG).await?;
    let renewed = call!("refresh", lock.refresh(&original, LONG));
    ensure!(
        renewed.token == original.token,
        "refresh of {original:?} answered {renewed:?}: a refreshed lease keeps its token"
    );
    let again = call!(
        "refresh of the lease value from before a refresh",
        lock.refresh(&original, LONG)
    );
    ensure!(
        again.token == original.token,
        "a second refresh of {original:?} answered {again:?}"
    );
    expect_held(lock, "kit-keep-token", "its lease was refreshed twice").await?;
    expect_release(
        lock,
        &original,
        true,
        "the lease value from before its refreshes names the same holder",
    )
    .await?;
    acquire_free(lock, "kit-keep-token", LONG)
        .await
        .map_err(|e| format!("after the holder released it: {e}"))
        .map(drop)
}
