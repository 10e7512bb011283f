//! Lock obligations on the edges of its inputs and on what the contract promises will not
//! happen: names at and past the length every driver holds, and leases that neither end before
//! their ttl nor count a refresh from anywhere but the refresh.
//!
//! Each input of the contract, by partition, and the obligation that holds a driver to it:
//!
//! | input | empty | one | typical | at the limit | past the limit | look-alike forms |
//! |---|---|---|---|---|---|---|
//! | name | `empty_name_or_zero_ttl_is_invalid_input` | `names_at_and_past_the_limit` | every obligation | `names_at_and_past_the_limit` (1,024 bytes, ASCII and 2-byte letters) | the same (one character more: its own lock or `InvalidInput`) | `distinct_names_are_independent` (case, spaces, trailing dot and slash, `%6F`, prefix, suffix, NFC/NFD); NUL: `names_at_and_past_the_limit` (its own lock or `InvalidInput`) |
//! | ttl | `empty_name_or_zero_ttl_is_invalid_input` (zero) | `lease_ttl_extremes_are_accepted` (1 µs) | `sub_second_leases_are_exact` | `lease_ttl_extremes_are_accepted` (100 years) | no limit: the contract holds longer as long as it can | none apply |
//! | ttl of `refresh` | `empty_name_or_zero_ttl_is_invalid_input` | `lease_ttl_extremes_are_accepted` | `refresh_extends_the_lease`, `refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token` | `lease_ttl_extremes_are_accepted` | as `acquire` | none apply |
//! | lease (`release`, `refresh`) | a lease on `""`: `empty_name_or_zero_ttl_is_invalid_input` | — | `release_by_the_holder_frees_the_lock` | — | — | stale, foreign, expired values: `a_foreign_or_stale_token_can_neither_release_nor_refresh`, `an_expired_lease_can_neither_be_released_nor_refreshed` |
//! | timeout of `acquire_wait` | `acquire_wait_respects_its_timeout` (zero) | `acquire_wait_timeouts_at_the_extremes` (1 µs) | `acquire_wait_respects_its_timeout` (300, 600 ms) | `acquire_wait_timeouts_at_the_extremes` (400 days, 100 years) | no limit: waited as long as the driver can | none apply |
//! | the time a lease lasts | — | — | — | — | — | `leases_last_their_whole_ttl_counted_from_the_last_grant` (no silent cap, no refresh counted from the acquire) |

use std::time::{Duration, SystemTime};

use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::{Lease, Lock};

use super::expiry::{CENTURY, DAYS_400, await_free, expect_expiry};
use super::leases::{acquire_free, expect_held, expect_release};
use super::{LONG, LockSettings, SHORT};
use crate::harness::Instance;
use crate::{call, ensure};

/// The longest name every driver holds, in bytes (the contract's limit).
const NAME_LIMIT: usize = 1024;

/// `prefix` filled up to exactly `bytes` bytes with `unit`, after as many `x` as it takes to
/// make the rest a whole number of `unit`s (so the name ends in `unit`).
fn filled(prefix: &str, unit: &str, bytes: usize) -> String {
    let room = bytes - prefix.len();
    let pad = "x".repeat(room % unit.len());
    format!("{prefix}{pad}{}", unit.repeat(room / unit.len()))
}

/// A short description of a long name, for messages.
fn shown(name: &str) -> String {
    let head: String = name.chars().take(12).collect();
    format!("{head:?}… ({} bytes)", name.len())
}

pub(super) async fn names_at_and_past_the_limit<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let one = acquire_free(lock, "k", LONG).await?;
    expect_held(lock, "k", "a one-byte name is a lock like any other").await?;
    expect_release(lock, &one, true, "its holder releases it").await?;
    // Names at the limit, in ASCII and in 2-byte letters, beside their own prefixes one
    // character shorter: each its own lock.
    let ascii = filled("kit-limit-", "k", NAME_LIMIT);
    let letters = filled("kit-limit-", "é", NAME_LIMIT);
    let names = [
        ascii.clone(),
        letters.clone(),
        ascii[..ascii.len() - 1].to_owned(),
        letters[..letters.len() - "é".len()].to_owned(),
    ];
    let mut leases = Vec::new();
    for name in &names {
        let lease = call!(
            format!("acquire({})", shown(name)),
            lock.acquire(name, LONG)
        );
        let Some(lease) = lease else {
            return Err(format!(
                "acquire({}) answered None beside its own prefix one character shorter: every \
                 driver holds names of up to {NAME_LIMIT} bytes, each its own lock",
                shown(name)
            ));
        };
        ensure!(
            lease.name == *name,
            "acquire({}) answered a lease naming {}",
            shown(name),
            shown(&lease.name)
        );
        leases.push(lease);
    }
    // Past the limit: a lock of its own (granted while the lock at the limit it starts with is
    // held) or `InvalidInput`; never the lock at the limit, cut to fit.
    for (at_limit, unit) in [&ascii, &letters].into_iter().zip(["k", "é"]) {
        let name = format!("{at_limit}{unit}");
        leases.extend(own_lock_or_refused(lock, &name, at_limit).await?);
    }
    // A NUL character: the same, never cut at the NUL onto the (held) lock before it.
    leases.push(acquire_free(lock, "kit-nul", LONG).await?);
    leases.extend(own_lock_or_refused(lock, "kit-nul\0after", "kit-nul").await?);
    for lease in &leases {
        expect_release(lock, lease, true, "each name is a lock of its own").await?;
    }
    Ok(())
}

/// `acquire(name)` while the lock `held` (what `name` starts with) is held: a lease of its own,
/// or `InvalidInput`; `None` means the driver cut `name` to `held`.
async fn own_lock_or_refused(
    lock: &dyn Lock,
    name: &str,
    held: &str,
) -> Result<Option<Lease>, String> {
    match lock.acquire(name, LONG).await {
        Ok(Some(lease)) => {
            ensure!(
                lease.name == name,
                "acquire({}) answered a lease naming {}",
                shown(name),
                shown(&lease.name)
            );
            Ok(Some(lease))
        }
        Ok(None) => Err(format!(
            "acquire({}) answered None while only the lock {} is held: a driver holds a name \
             whole or refuses it with InvalidInput, never cuts it to another lock's name",
            shown(name),
            shown(held)
        )),
        Err(error) if error.kind() == ErrorKind::InvalidInput => Ok(None),
        Err(error) => Err(format!(
            "acquire({}) failed with {}: a driver holds a name or refuses it with \
             InvalidInput: {error}",
            shown(name),
            error.kind()
        )),
    }
}

/// How long `leases_last_their_whole_ttl_counted_from_the_last_grant` keeps its long lease
/// under watch: longer than every short lease the kit uses elsewhere (1.5 s) plus half as much
/// again, so a silent cap that would pass them all (2 s, say) ends within it.
const WINDOW: Duration = Duration::from_secs(3);

pub(super) async fn leases_last_their_whole_ttl_counted_from_the_last_grant<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    let started = tokio::time::Instant::now();
    // A 30 s lease, and one refreshed to 30 s: both held through the whole window.
    let long = acquire_free(lock, "kit-window-long", LONG).await?;
    let short = acquire_free(lock, "kit-window-refreshed-long", Duration::from_secs(1)).await?;
    let refreshed_long = call!("refresh to 30 s", lock.refresh(&short, LONG));
    // A refresh made `wait` into a lease of `ttl`, to `ttl`, ends `ttl` after the refresh: held
    // at least until the lease counted from the acquire would have ended (plus the tolerance
    // and a margin), and free within the tolerance of `wait + ttl`.
    let margin = Duration::from_millis(300);
    let wait = 2 * late + margin + Duration::from_millis(400);
    let ttl = wait + late + Duration::from_secs(1);
    let acquired = tokio::time::Instant::now();
    let lease = acquire_free(lock, "kit-window-from-now", ttl).await?;
    tokio::time::sleep_until(acquired + wait).await;
    let before = SystemTime::now();
    let refreshed_at = tokio::time::Instant::now();
    let refreshed = match lock.refresh(&lease, ttl).await {
        Ok(refreshed) => refreshed,
        Err(error) => {
            return Err(format!(
                "refresh of a {ttl:?} lease {:?} after its acquire failed: {error}",
                acquired.elapsed()
            ));
        }
    };
    expect_expiry(
        &format!("refresh {:?} into the lease", refreshed_at - acquired),
        &refreshed,
        ttl,
        (before, SystemTime::now()),
        late,
    )?;
    tokio::time::sleep_until(acquired + ttl + late + margin).await;
    expect_held(
        lock,
        "kit-window-from-now",
        &format!(
            "it was refreshed to {ttl:?} {:?} after its acquire: a refresh counts from now, \
             not from the acquire",
            refreshed_at - acquired
        ),
    )
    .await?;
    let taker = await_free(lock, "kit-window-from-now", ttl, refreshed_at, late).await?;
    expect_release(lock, &taker, true, "the new holder releases its lease").await?;
    // The long leases, after the window: no lease ends before its ttl.
    tokio::time::sleep_until(started + WINDOW + late).await;
    for name in ["kit-window-long", "kit-window-refreshed-long"] {
        expect_held(
            lock,
            name,
            &format!(
                "its lease of 30 s was granted {:?} ago: a lease lasts its ttl, never capped \
                 to a default of the driver's",
                started.elapsed()
            ),
        )
        .await?;
    }
    expect_release(lock, &long, true, "its 30 s lease is valid").await?;
    expect_release(lock, &refreshed_long, true, "its 30 s lease is valid").await
}

pub(super) async fn acquire_wait_timeouts_at_the_extremes<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    // One microsecond: no sooner than asked, and within the tolerance.
    let brief = acquire_free(lock, "kit-wait-1us", LONG).await?;
    let asked = tokio::time::Instant::now();
    let got = call!(
        "acquire_wait of a held lock for 1 µs",
        lock.acquire_wait("kit-wait-1us", LONG, Duration::from_micros(1))
    );
    ensure!(
        got.is_none() && asked.elapsed() <= late,
        "acquire_wait of a held lock with a 1 µs timeout answered {got:?} after {:?}: None, \
         within the declared tolerance ({late:?})",
        asked.elapsed()
    );
    expect_release(
        lock,
        &brief,
        true,
        "a waiter that timed out changes nothing",
    )
    .await?;
    // 400 days and 100 years: waiting still when the lock is released (not a timeout read as
    // zero, nor an overflow), and woken for the release within the tolerance.
    let mut holders = Vec::new();
    let mut waiters = Vec::new();
    for (name, timeout) in [("kit-wait-400d", DAYS_400), ("kit-wait-100y", CENTURY)] {
        holders.push(acquire_free(lock, name, LONG).await?);
        let shared = i.shared();
        waiters.push((
            name,
            timeout,
            tokio::spawn(async move {
                let got = shared.acquire_wait(name, LONG, timeout).await;
                (got, tokio::time::Instant::now())
            }),
        ));
    }
    tokio::time::sleep(SHORT).await;
    for (name, timeout, waiter) in &waiters {
        ensure!(
            !waiter.is_finished(),
            "acquire_wait of the held lock {name:?} with a {timeout:?} timeout was over after \
             {SHORT:?}: a timeout longer than the backend can wait is waited as long as it can"
        );
    }
    let released_at = tokio::time::Instant::now();
    for holder in &holders {
        expect_release(lock, holder, true, "waiters do not take a held lock").await?;
    }
    for (name, timeout, waiter) in waiters {
        let (got, at) = waiter
            .await
            .map_err(|e| format!("the waiter on {name:?} panicked or was cancelled: {e}"))?;
        let got =
            got.map_err(|e| format!("acquire_wait of {name:?} for {timeout:?} failed: {e}"))?;
        let Some(lease) = got else {
            return Err(format!(
                "acquire_wait of {name:?} with a {timeout:?} timeout answered None after the \
                 lock was released"
            ));
        };
        ensure!(
            at.saturating_duration_since(released_at) <= late,
            "acquire_wait of {name:?} with a {timeout:?} timeout got the lock {:?} after its \
             release: more than the declared tolerance ({late:?})",
            at.saturating_duration_since(released_at)
        );
        expect_release(lock, &lease, true, "the waiter's lease is valid").await?;
    }
    Ok(())
}
