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
    ///   lease's `release` answers `false` and its `refresh` `Conflict`; the lock stays free.
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
    /// - `distinct_names_are_independent`: locks whose names differ in case, by a suffix, in
    ///   non-ASCII letters or are 200 characters long are held and released independently.
    /// - `many_locks_are_held_at_once`: 1,500 locks acquired one after another, with short leases
    ///   ending among them, are all still held afterwards (refused to another `acquire`) and each
    ///   is released by its own lease.
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
    /// assert_eq!(OBLIGATIONS.len(), 14);
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
    // Nobody takes them over, so their expiry cannot be observed by polling: wait it out
    // generously (their ttl was counted from before these calls returned).
    tokio::time::sleep(SHORT + Duration::from_millis(700)).await;
    expect_release(lock, &to_release, false, "its lease had expired").await?;
    expect_refresh_conflict(lock, &to_refresh, "its lease had expired").await?;
    acquire_free(lock, "kit-expired-release", LONG)
        .await
        .map_err(|e| format!("after its lease expired: {e}"))?;
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
        "kit-jöb",
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
