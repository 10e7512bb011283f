//! The experimental `lock` kit: [`LockConformance`].
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`lock_conformance!`](crate::lock_conformance)
//! instead.
//!
//! ```
//! use sandloom_driverkit::conformance::lock::LockConformance;
//! use sandloom_driverkit::NoOptions;
//! # use std::time::{Duration, SystemTime};
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::lock::{Lease, Lock, LockProvider};
//! # use sandloom_driverkit::sdk::InfraResult;
//! # /// Grants every lease: a stand-in for a driver under test.
//! # pub struct PushoverLock;
//! # #[async_trait]
//! # impl Lock for PushoverLock {
//! #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
//! #         Ok(Some(Lease::new(name, "token", SystemTime::now() + ttl)))
//! #     }
//! #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
//! #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
//! #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), SystemTime::now() + ttl))
//! #     }
//! # }
//! # impl Driver for PushoverLock {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
//! # }
//! # impl LockProvider for PushoverLock {
//! #     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
//! # }
//!
//! // `PushoverLock` (hidden) grants every `acquire`, even of a held lock.
//! let kit = LockConformance::<PushoverLock>::new(|_request| NoOptions {});
//! assert!(kit.check("acquire_grants_a_lease_naming_the_lock").is_ok());
//! let failure = kit.check("a_held_lock_cannot_be_acquired").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::{Lease, Lock};

use super::harness::{Instance, Kit, Tolerance};
use super::{KitRequest, call, ensure, expect_kind};
use crate::lock::LockProvider;

/// A lease no obligation expects to run out.
const LONG: Duration = Duration::from_secs(30);
/// A lease an obligation waits out.
const SHORT: Duration = Duration::from_millis(300);

/// The conformance kit of the experimental `lock` contract. See [`OBLIGATIONS`] for what it
/// holds a driver to; run it with [`lock_conformance!`](crate::lock_conformance).
///
/// ```
/// # use sandloom_driverkit::conformance::lock::LockConformance;
/// # fn kit<T: sandloom_driverkit::lock::LockProvider>(options: T::Options)
/// # where T::Options: Clone + Send + Sync {
/// let kit = LockConformance::<T>::new(move |_request| options.clone());
/// for failure in kit.check_all() {
///     eprintln!("{failure}");
/// }
/// # }
/// ```
pub type LockConformance<T> = Kit<T, LockSettings>;

/// What the `lock` kit's obligations are given besides the instance: the declared timing
/// [`Tolerance`] (how far a lease's reported `expires_at` may be off, and how late a lease may end), set with the kit's
/// [`tolerance`](LockConformance::tolerance) method.
///
/// ```
/// use sandloom_driverkit::conformance::lock::LockSettings;
/// use sandloom_driverkit::conformance::Tolerance;
/// assert_eq!(LockSettings::default().tolerance(), Tolerance::DEFAULT);
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LockSettings {
    tolerance: Tolerance,
}

impl LockSettings {
    /// The declared timing tolerance.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::lock::LockSettings;
    /// let tolerance = LockSettings::default().tolerance().get();
    /// assert!(tolerance < std::time::Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// The tolerance as a duration, for the obligations' bounds.
    pub(crate) fn late(&self) -> std::time::Duration {
        self.tolerance.get()
    }
}

impl<T: LockProvider> Kit<T, LockSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::lock::LockConformance;
    /// use sandloom_driverkit::conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::time::{Duration, SystemTime};
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::lock::{Lease, Lock, LockProvider};
    /// # use sandloom_driverkit::sdk::InfraResult;
    /// # /// Grants every lease: a stand-in for a driver under test.
    /// # pub struct PushoverLock;
    /// # #[async_trait]
    /// # impl Lock for PushoverLock {
    /// #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
    /// #         Ok(Some(Lease::new(name, "token", SystemTime::now() + ttl)))
    /// #     }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
    /// #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
    /// #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), SystemTime::now() + ttl))
    /// #     }
    /// # }
    /// # impl Driver for PushoverLock {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
    /// # }
    /// # impl LockProvider for PushoverLock {
    /// #     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
    /// # }
    ///
    /// let kit = LockConformance::<PushoverLock>::new(|request: &KitRequest| {
    ///     // Called once per obligation, for a fresh instance with its own scratch space.
    ///     assert!(request.scratch_dir.is_dir());
    ///     assert!(!request.namespace.is_empty());
    ///     NoOptions {}
    /// });
    /// assert!(kit.check("acquire_grants_a_lease_naming_the_lock").is_ok());
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<crate::lock::LockCapability>(
            obligations::<T>(),
            options,
            LockSettings::default(),
        )
    }

    /// Widen the timing tolerance for a driver on a server (default [`Tolerance::DEFAULT`],
    /// at most [`Tolerance::MAX`]: above it, every obligation fails saying so). The
    /// tolerance is how far a lease's reported `expires_at` may be off, and how late a lease may end.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_driverkit::conformance::lock::LockConformance;
    /// # fn kit<T: sandloom_driverkit::lock::LockProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // For a lock on a server whose leases end up to half a second late:
    /// let kit = LockConformance::<T>::new(move |_request| options.clone())
    ///     .tolerance(Duration::from_millis(500));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `lock_conformance!(MyDriver, |request| …, .tolerance(Duration::from_millis(500)));`.
    #[must_use]
    pub fn tolerance(self, late: std::time::Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }
}

crate::define_kit! {
    /// Run the whole experimental `lock` kit from a driver crate's tests: one `#[test]` per
    /// obligation, in a module `lock_conformance`. A leading `name:` puts that module inside a
    /// module `name`, so one file can run the kit several times.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] turn on the
    /// // `conformance` feature of sandloom-driverkit.
    /// use sandloom_driverkit::NoOptions;
    /// # use std::time::{Duration, SystemTime};
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::lock::{Lease, Lock, LockProvider};
    /// # use sandloom_driverkit::sdk::InfraResult;
    /// # /// Grants every lease: a stand-in for a driver under test.
    /// # pub struct PushoverLock;
    /// # #[async_trait]
    /// # impl Lock for PushoverLock {
    /// #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
    /// #         Ok(Some(Lease::new(name, "token", SystemTime::now() + ttl)))
    /// #     }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
    /// #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
    /// #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), SystemTime::now() + ttl))
    /// #     }
    /// # }
    /// # impl Driver for PushoverLock {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
    /// # }
    /// # impl LockProvider for PushoverLock {
    /// #     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
    /// # }
    /// # pub type MyLock = PushoverLock;
    ///
    /// sandloom_driverkit::lock_conformance!(MyLock, |_request| NoOptions {});
    /// // Again in a module `second_run` (another configuration of the same driver, say):
    /// sandloom_driverkit::lock_conformance!(second_run: MyLock, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro lock_conformance;
    kit crate::conformance::lock::LockConformance::new;
    provider LockProvider;
    settings LockSettings;
    /// Every obligation of the (experimental) lock contract, in the order the kit runs them.
    ///
    /// Short leases last 300–400 ms; the kit waits up to 5 s for an expired one to become free.
    ///
    /// - `acquire_grants_a_lease_naming_the_lock`: `acquire` answers a lease with the lock's name,
    ///   a non-blank token and an expiry `ttl` after the call, give or take the declared tolerance.
    /// - `a_held_lock_cannot_be_acquired`: while a lease is valid, `acquire` answers `None`, and the
    ///   holder keeps the lock.
    /// - `release_by_the_holder_frees_the_lock`: `release` answers `true`, the lock can be acquired
    ///   again with another token; releasing or refreshing the released lease answers `false` or
    ///   `Conflict`.
    /// - `a_foreign_or_stale_token_can_neither_release_nor_refresh`: a previous holder's token,
    ///   another lock's token, or a lease on a lock nobody holds releases nothing (`false`) and
    ///   refreshes nothing (`Conflict`); the holders keep their locks.
    /// - `an_expired_lease_can_be_taken_over`: a lease of 300 ms still holds its lock at half its
    ///   ttl, and its lock can be acquired within the declared tolerance after its end; the old
    ///   holder's `release` answers `false`, its `refresh` answers `Conflict`, and neither frees
    ///   the lock of the new holder.
    /// - `an_expired_lease_can_neither_be_released_nor_refreshed`: with no new holder, an expired
    ///   lease's `release` answers `false` and its `refresh` `Conflict`; the lock stays free. So
    ///   do lease values whose own `expires_at` is still far ahead: a 30 s lease's value after
    ///   it was refreshed down to 300 ms and ended, and a value claiming an hour made with an
    ///   ended 300 ms lease's token (the lock's expiry decides, not the caller's copy).
    /// - `refused_acquires_leave_the_lease_as_it_was`: while a lease of 1.5 s is held, a refused
    ///   `acquire` with a 300 ms ttl does not shorten it (the lock is still held 600 ms in), and
    ///   refused ones with a 30 s ttl do not lengthen it (the lock is free within the declared
    ///   tolerance of its end).
    /// - `refresh_extends_the_lease`: `refresh` answers a lease of the same lock expiring later,
    ///   the new `ttl` after the call give or take the declared tolerance, and the lock stays held
    ///   past the original expiry.
    /// - `concurrent_acquirers_get_exactly_one_lease`: 16 tasks on several threads, each racing 4
    ///   acquires of one lock, get exactly one lease; again after it is released.
    /// - `empty_name_or_zero_ttl_is_invalid_input`: `acquire`, `release` and `refresh` of an empty
    ///   name, and `acquire` or `refresh` with a zero ttl, answer `InvalidInput` and change nothing.
    /// - `distinct_names_are_independent`: locks whose names differ in case, by a suffix or a
    ///   prefix, by a trailing or leading space, in non-ASCII letters, as NFC vs NFD, or are 200
    ///   characters long are held and released independently.
    /// - `many_locks_are_held_at_once`: 1,500 locks acquired one after another, with short leases
    ///   ending among them, are all still held afterwards (refused to another `acquire`) and each
    ///   is released by its own lease.
    /// - `lease_ttl_extremes_are_accepted`: a 1 µs lease is granted and its lock is free within
    ///   the declared tolerance; 400-day and 100-year leases are granted, expire that long from
    ///   now, and hold their locks; `refresh` to each of the three likewise.
    /// - `sub_second_leases_are_exact`: leases of 150 ms and 1.5 s, acquired or refreshed to,
    ///   hold their lock until the ttl less the declared tolerance (where positive) and end by
    ///   the ttl plus it: neither rounded down nor up to whole seconds.
    /// - `refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token`: `refresh` of a 30 s lease
    ///   to 600 ms shortens it (expiry reported and lock freed 600 ms from the call, give or
    ///   take the declared tolerance); a refreshed lease keeps its token, and the lease value
    ///   from before the refresh still refreshes and releases it.
    /// - `concurrent_contenders_leave_one_holder`: 16 tasks × 4 acquires of an expired lock get
    ///   exactly one lease; acquires racing the holder's `release` get at most one, and the
    ///   lock is then held by it or free; racing an expired holder's `release` (which answers
    ///   `false`), exactly one, which keeps the lock; 16 concurrent refreshes of one valid lease
    ///   all succeed with its token and leave it the one holder.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `acquire`, `release` and
    ///   `refresh` answer `Stopped`.
    /// - `secrets_never_show`: with secrets declared
    ///   ([`Kit::secrets`](crate::conformance::Kit::secrets)), none shows in the options' `Debug`,
    ///   the driver's `Debug`, or the `Display` or `Debug` of the errors of the contract's
    ///   operations given an empty key or name (`InvalidInput`), after `stop` (`Stopped`), and of
    ///   an instance pointed at an unreachable address (its `start`, or its operations); nothing to
    ///   check without declared secrets.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::lock::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 18);
    /// assert_eq!(OBLIGATIONS[0], "acquire_grants_a_lease_naming_the_lock");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
    /// ```
    obligations [
        acquire_grants_a_lease_naming_the_lock,
        a_held_lock_cannot_be_acquired,
        release_by_the_holder_frees_the_lock,
        a_foreign_or_stale_token_can_neither_release_nor_refresh,
        an_expired_lease_can_be_taken_over,
        an_expired_lease_can_neither_be_released_nor_refreshed,
        refused_acquires_leave_the_lease_as_it_was,
        refresh_extends_the_lease,
        concurrent_acquirers_get_exactly_one_lease,
        empty_name_or_zero_ttl_is_invalid_input,
        distinct_names_are_independent,
        many_locks_are_held_at_once,
        lease_ttl_extremes_are_accepted,
        sub_second_leases_are_exact,
        refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token,
        concurrent_contenders_leave_one_holder,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}

/// Acquire a free lock: it must answer a lease naming it.
async fn acquire_free(lock: &dyn Lock, name: &str, ttl: Duration) -> Result<Lease, String> {
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
async fn expect_held(lock: &dyn Lock, name: &str, why: &str) -> Result<(), String> {
    let lease = call!(format!("acquire({name:?})"), lock.acquire(name, LONG));
    ensure!(
        lease.is_none(),
        "acquire({name:?}) answered a lease ({lease:?}), but the lock must still be held: {why}"
    );
    Ok(())
}

/// `release` of `lease` must answer `expected`.
async fn expect_release(
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
async fn expect_refresh_conflict(lock: &dyn Lock, lease: &Lease, why: &str) -> Result<(), String> {
    expect_kind(
        &format!("refresh of {lease:?} ({why})"),
        ErrorKind::Conflict,
        &lock.refresh(lease, LONG).await,
    )
}

async fn acquire_grants_a_lease_naming_the_lock<T: LockProvider>(
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

async fn a_held_lock_cannot_be_acquired<T: LockProvider>(
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

async fn release_by_the_holder_frees_the_lock<T: LockProvider>(
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

async fn a_foreign_or_stale_token_can_neither_release_nor_refresh<T: LockProvider>(
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
    let foreign = Lease::new("kit-stale", other.token.clone(), holder.expires_at);
    expect_release(lock, &foreign, false, "the token is another lock's").await?;
    expect_refresh_conflict(lock, &foreign, "the token is another lock's").await?;
    expect_held(lock, "kit-stale", "a foreign token must not free it").await?;
    expect_held(lock, "kit-other", "its token was used on another lock").await?;
    // This lock's token, presented for another lock.
    let swapped = Lease::new("kit-other", holder.token.clone(), other.expires_at);
    expect_release(lock, &swapped, false, "the token is another lock's").await?;
    expect_held(lock, "kit-other", "a foreign token must not free it").await?;
    // A lock nobody holds.
    let unheld = Lease::new("kit-never-held", holder.token.clone(), holder.expires_at);
    expect_release(lock, &unheld, false, "nobody holds that lock").await?;
    expect_refresh_conflict(lock, &unheld, "nobody holds that lock").await?;
    expect_release(lock, &holder, true, "the holder keeps its lock").await?;
    expect_release(lock, &other, true, "the holder keeps its lock").await
}

async fn an_expired_lease_can_be_taken_over<T: LockProvider>(
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

async fn an_expired_lease_can_neither_be_released_nor_refreshed<T: LockProvider>(
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

/// The lease `refused_acquires_leave_the_lease_as_it_was` holds while others try.
const HOLD: Duration = Duration::from_millis(1500);

async fn refused_acquires_leave_the_lease_as_it_was<T: LockProvider>(
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

async fn refresh_extends_the_lease<T: LockProvider>(
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

async fn concurrent_acquirers_get_exactly_one_lease<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    const TASKS: usize = 16;
    const RACING: usize = 4;
    for round in 0..2 {
        let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let lock = i.shared();
            let barrier = Arc::clone(&barrier);
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                // Several acquires in flight within one task too: a driver that checks, then
                // sets, hands the lock to all of them.
                let acquires = (0..RACING).map(|_| lock.acquire("kit-contended", LONG));
                futures_util::future::try_join_all(acquires)
                    .await
                    .map_err(|e| format!("acquire failed: {e}"))
            }));
        }
        let mut winners = Vec::new();
        for task in tasks {
            let leases = task.await.map_err(|e| format!("a task panicked: {e}"))??;
            winners.extend(leases.into_iter().flatten());
        }
        ensure!(
            winners.len() == 1,
            "{} concurrent acquires of a {} lock gave {} leases, not exactly one",
            TASKS * RACING,
            if round == 0 { "free" } else { "released" },
            winners.len()
        );
        expect_release(&*i.driver, &winners[0], true, "the one winner holds it").await?;
    }
    Ok(())
}

async fn empty_name_or_zero_ttl_is_invalid_input<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    expect_kind(
        "acquire(\"\")",
        ErrorKind::InvalidInput,
        &lock.acquire("", LONG).await,
    )?;
    expect_kind(
        "acquire with a zero ttl",
        ErrorKind::InvalidInput,
        &lock.acquire("kit-zero", Duration::ZERO).await,
    )?;
    let lease = acquire_free(lock, "kit-zero", LONG)
        .await
        .map_err(|e| format!("after a refused zero-ttl acquire: {e}"))?;
    expect_kind(
        "refresh with a zero ttl",
        ErrorKind::InvalidInput,
        &lock.refresh(&lease, Duration::ZERO).await,
    )?;
    expect_held(
        lock,
        "kit-zero",
        "a refused zero-ttl refresh must not end it",
    )
    .await?;
    let nameless = Lease::new("", lease.token.clone(), lease.expires_at);
    expect_kind(
        "release of a lease on \"\"",
        ErrorKind::InvalidInput,
        &lock.release(&nameless).await,
    )?;
    expect_kind(
        "refresh of a lease on \"\"",
        ErrorKind::InvalidInput,
        &lock.refresh(&nameless, LONG).await,
    )?;
    expect_release(lock, &lease, true, "refused calls must not touch it").await
}

/// How many locks `many_locks_are_held_at_once` holds: more than a table that sweeps or evicts
/// every thousand entries keeps.
const MANY: usize = 1500;

async fn many_locks_are_held_at_once<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let mut leases = Vec::with_capacity(MANY);
    for n in 0..MANY {
        leases.push(acquire_free(lock, &format!("kit-many-{n}"), LONG).await?);
        if n % 100 == 0 {
            // Short leases among the long ones: a sweep of the ended ones must spare the rest.
            acquire_free(lock, &format!("kit-brief-{n}"), Duration::from_millis(1)).await?;
        }
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    for n in (0..MANY).step_by(7).chain([MANY - 1]) {
        expect_held(
            lock,
            &format!("kit-many-{n}"),
            &format!("one of {MANY} locks held at once (the {n}th acquired)"),
        )
        .await?;
    }
    for lease in &leases {
        expect_release(
            lock,
            lease,
            true,
            "one of many locks, released by its holder",
        )
        .await?;
    }
    Ok(())
}

async fn distinct_names_are_independent<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let long = format!("kit-{}", "n".repeat(196));
    let names = [
        "kit-job",
        "kit-Job",
        "kit-job-2",
        "kit-jo",
        "kit-job ",
        " kit-job",
        "x-kit-job",
        "kit-jöb",
        "kit-jo\u{308}b", // ö as o + combining diaeresis (NFD)
        "kit-工作",
        long.as_str(),
    ];
    let mut leases = Vec::new();
    for name in names {
        leases.push(
            acquire_free(lock, name, LONG)
                .await
                .map_err(|e| format!("{e} (other names are held, not this one)"))?,
        );
    }
    for name in names {
        expect_held(lock, name, "its own lease is valid").await?;
    }
    expect_release(lock, &leases[0], true, "its holder releases it").await?;
    acquire_free(lock, names[0], LONG)
        .await
        .map_err(|e| format!("after release: {e}"))?;
    for name in &names[1..] {
        expect_held(lock, name, "only another lock was released").await?;
    }
    for lease in &leases[1..] {
        expect_release(lock, lease, true, "its holder releases it").await?;
    }
    Ok(())
}

/// 400 days: beyond `u32` milliseconds.
const DAYS_400: Duration = Duration::from_hours(400 * 24);
/// 100 years: beyond `i32` seconds, and what `Duration::MAX` must at least give. (The kit
/// asks for a century, not `Duration::MAX`: the contract holds that as long as the backend
/// can, but a kit that required it would fail drivers for an overflow no caller meets.)
const CENTURY: Duration = Duration::from_hours(100 * 365 * 24);

/// `lease` (just answered for `ttl`, asked between `before` and `after`) must report an expiry
/// `ttl` after the call, give or take `late`; for a ttl longer than 100 years, at least 100 years.
fn expect_expiry(
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
async fn await_free(
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
async fn expect_lease_lifetime(
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

async fn lease_ttl_extremes_are_accepted<T: LockProvider>(
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

async fn sub_second_leases_are_exact<T: LockProvider>(
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

async fn refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token<T: LockProvider>(
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

/// How many tasks race in `concurrent_contenders_leave_one_holder`.
const TASKS: usize = 16;
/// How many acquires each racing task has in flight at once.
const RACING: usize = 4;

/// [`TASKS`] × [`RACING`] acquires of `name` at once (and the holder's `release` of `lease`,
/// when given), answering every lease granted and what the release answered.
async fn race<T: LockProvider>(
    i: &Instance<T>,
    name: &'static str,
    release: Option<Lease>,
) -> Result<(Vec<Lease>, Option<bool>), String> {
    let parties = TASKS + usize::from(release.is_some());
    let barrier = Arc::new(tokio::sync::Barrier::new(parties));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let lock = i.shared();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let acquires = (0..RACING).map(|_| lock.acquire(name, LONG));
            futures_util::future::try_join_all(acquires)
                .await
                .map_err(|e| format!("acquire failed: {e}"))
        }));
    }
    let released = match release {
        Some(lease) => {
            let lock = i.shared();
            let barrier = Arc::clone(&barrier);
            let releaser = tokio::spawn(async move {
                barrier.wait().await;
                lock.release(&lease).await
            });
            Some(
                releaser
                    .await
                    .map_err(|e| format!("a task panicked: {e}"))?
                    .map_err(|e| format!("release failed: {e}"))?,
            )
        }
        None => None,
    };
    let mut winners = Vec::new();
    for task in tasks {
        let leases = task.await.map_err(|e| format!("a task panicked: {e}"))??;
        winners.extend(leases.into_iter().flatten());
    }
    Ok((winners, released))
}

/// [`TASKS`] refreshes of one valid lease at once: all succeed with its token, one holder stays.
async fn concurrent_refreshes_keep_one_holder<T: LockProvider>(
    i: &Instance<T>,
) -> Result<(), String> {
    let lock = &*i.driver;
    let lease = acquire_free(lock, "kit-race-refresh", LONG).await?;
    let mut tasks = Vec::new();
    let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
    for _ in 0..TASKS {
        let lock = i.shared();
        let lease = lease.clone();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            lock.refresh(&lease, LONG).await
        }));
    }
    for task in tasks {
        let refreshed = task
            .await
            .map_err(|e| format!("a task panicked: {e}"))?
            .map_err(|e| {
                format!("one of {TASKS} concurrent refreshes of a valid lease failed: {e}")
            })?;
        ensure!(
            refreshed.token == lease.token,
            "a concurrent refresh of {lease:?} answered {refreshed:?}: the token must stay"
        );
    }
    expect_held(lock, "kit-race-refresh", "its lease was refreshed").await?;
    expect_release(lock, &lease, true, "concurrent refreshes keep one holder").await
}

async fn concurrent_contenders_leave_one_holder<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    // An expired lock: its lease ended, nobody released it.
    let short = Duration::from_millis(100);
    acquire_free(lock, "kit-race-expired", short).await?;
    // Past its end by the declared tolerance: every backend has freed it by then.
    tokio::time::sleep(short + late).await;
    let (winners, _) = race(i, "kit-race-expired", None).await?;
    ensure!(
        winners.len() == 1,
        "{} concurrent acquires of an expired lock gave {} leases, not exactly one",
        TASKS * RACING,
        winners.len()
    );
    expect_release(lock, &winners[0], true, "the one winner holds it").await?;
    // Acquires racing the holder's release.
    let holder = acquire_free(lock, "kit-race-release", LONG).await?;
    let (winners, released) = race(i, "kit-race-release", Some(holder)).await?;
    ensure!(
        released == Some(true),
        "the holder's release, racing acquires, answered {released:?}, not true"
    );
    ensure!(
        winners.len() <= 1,
        "acquires racing the holder's release gave {} leases, not at most one",
        winners.len()
    );
    match winners.first() {
        Some(winner) => {
            expect_held(lock, "kit-race-release", "one acquire won it").await?;
            expect_release(lock, winner, true, "the one winner holds it").await?;
        }
        None => drop(acquire_free(lock, "kit-race-release", LONG).await?),
    }
    // An expired holder's release racing acquirers of its lock: it answers `false` and frees
    // nothing of the winner's (a release that checks the token, then deletes whatever is
    // there, deletes the winner's lease). A few rounds, as a race shows only sometimes.
    for _ in 0..4 {
        let name = "kit-race-stale-release";
        let old = acquire_free(lock, name, short).await?;
        tokio::time::sleep(short + late).await;
        let (winners, released) = race(i, name, Some(old)).await?;
        ensure!(
            released == Some(false) && winners.len() == 1,
            "an expired holder's release racing {} acquires answered {released:?} and they got \
             {} leases: expected false, and exactly one lease",
            TASKS * RACING,
            winners.len()
        );
        expect_held(
            lock,
            name,
            "one acquire won it, and the expired holder's release must not free it",
        )
        .await?;
        expect_release(lock, &winners[0], true, "the one winner holds it").await?;
    }
    concurrent_refreshes_keep_one_holder(i).await
}

async fn operations_after_stop_fail_with_stopped<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let lease = acquire_free(lock, "kit-stop", LONG).await?;
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "acquire after stop",
        ErrorKind::Stopped,
        &lock.acquire("kit-stop-2", LONG).await,
    )?;
    expect_kind(
        "release after stop",
        ErrorKind::Stopped,
        &lock.release(&lease).await,
    )?;
    expect_kind(
        "refresh after stop",
        ErrorKind::Stopped,
        &lock.refresh(&lease, LONG).await,
    )
}

async fn secrets_never_show<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    i.secrets_never_show(|lock| {
        Box::pin(async move {
            let unheld = Lease::new("kit-secrets", "kit-token", SystemTime::now() + LONG);
            vec![
                lock.acquire("", LONG).await.err(),
                lock.acquire("kit-secrets", Duration::ZERO).await.err(),
                lock.release(&Lease::new("", "kit-token", SystemTime::now()))
                    .await
                    .err(),
                lock.refresh(&unheld, LONG).await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                lock.release(&unheld).await.err(),
            ]
        })
    })
    .await
}
