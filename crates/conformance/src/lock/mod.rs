//! The `lock` kit: [`LockConformance`], for the fenced contract 1.0.
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`lock_conformance!`](crate::lock_conformance)
//! instead.
//!
//! ```
//! use sandloom_conformance::lock::LockConformance;
//! use sandloom_driverkit::NoOptions;
//! # use std::time::{Duration, SystemTime};
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::lock::{Lease, Lock, LockOps, LockProvider};
//! # use sandloom_driverkit::sdk::InfraResult;
//! # /// Grants every lease: a stand-in for a driver under test.
//! # pub struct PushoverLock;
//! # impl LockOps for PushoverLock {
//! #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
//! #         Ok(Some(Lease::new(name, "token", 1, SystemTime::now() + ttl)))
//! #     }
//! #     async fn acquire_wait(&self, name: &str, ttl: Duration, _: Duration) -> InfraResult<Option<Lease>> {
//! #         LockOps::acquire(self, name, ttl).await
//! #     }
//! #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
//! #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
//! #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), lease.fence, SystemTime::now() + ttl))
//! #     }
//! # }
//! # impl Driver for PushoverLock {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
//! # }
//! # impl LockProvider for PushoverLock {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//!
//! // `PushoverLock` (hidden) grants every `acquire`, even of a held lock.
//! let kit = LockConformance::<PushoverLock>::new(|_request| NoOptions {});
//! assert!(kit.check("acquire_grants_a_lease_naming_the_lock").is_ok());
//! let failure = kit.check("a_held_lock_cannot_be_acquired").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use std::time::Duration;

use crate::KitRequest;
use crate::harness::{Kit, Tolerance};
use sandloom_driverkit::lock::LockProvider;

mod concurrency;
mod expiry;
mod fences;
mod keep_alive;
mod leases;
mod lifecycle;
mod limits;
mod names;

use concurrency::{
    concurrent_acquirers_get_exactly_one_lease, concurrent_contenders_leave_one_holder,
};
use expiry::{
    an_expired_lease_can_be_taken_over, an_expired_lease_can_neither_be_released_nor_refreshed,
    lease_ttl_extremes_are_accepted, refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token,
    sub_second_leases_are_exact,
};
use fences::{
    a_paused_holder_finds_its_lease_lost_and_its_fence_stale, acquire_wait_respects_its_timeout,
    acquire_wait_wakes_when_the_lock_is_released_or_expires,
    fences_strictly_increase_with_every_grant,
};
use keep_alive::{
    keep_alive_fails_closed_when_renewal_hangs_or_fails,
    keep_alive_holds_a_lease_past_several_ttls, keep_alive_reports_a_lease_taken_over_as_lost,
};
use leases::{
    a_foreign_or_stale_token_can_neither_release_nor_refresh, a_held_lock_cannot_be_acquired,
    acquire_grants_a_lease_naming_the_lock, refresh_extends_the_lease,
    refused_acquires_leave_the_lease_as_it_was, release_by_the_holder_frees_the_lock,
};
use lifecycle::{operations_after_stop_fail_with_stopped, secrets_never_show};
use limits::{
    acquire_wait_timeouts_at_the_extremes, leases_last_their_whole_ttl_counted_from_the_last_grant,
    names_at_and_past_the_limit,
};
use names::{
    distinct_names_are_independent, empty_name_or_zero_ttl_is_invalid_input,
    many_locks_are_held_at_once,
};

/// A lease no obligation expects to run out.
const LONG: Duration = Duration::from_secs(30);
/// A lease an obligation waits out.
const SHORT: Duration = Duration::from_millis(300);

/// The conformance kit of the `lock` contract. See [`OBLIGATIONS`] for what it
/// holds a driver to; run it with [`lock_conformance!`](crate::lock_conformance).
///
/// ```
/// # use sandloom_conformance::lock::LockConformance;
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
/// use sandloom_conformance::lock::LockSettings;
/// use sandloom_conformance::Tolerance;
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
    /// use sandloom_conformance::lock::LockSettings;
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
    /// use sandloom_conformance::lock::LockConformance;
    /// use sandloom_conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::time::{Duration, SystemTime};
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::lock::{Lease, Lock, LockOps, LockProvider};
    /// # use sandloom_driverkit::sdk::InfraResult;
    /// # /// Grants every lease: a stand-in for a driver under test.
    /// # pub struct PushoverLock;
    /// # impl LockOps for PushoverLock {
    /// #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
    /// #         Ok(Some(Lease::new(name, "token", 1, SystemTime::now() + ttl)))
    /// #     }
    /// #     async fn acquire_wait(&self, name: &str, ttl: Duration, _: Duration) -> InfraResult<Option<Lease>> {
    /// #         LockOps::acquire(self, name, ttl).await
    /// #     }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
    /// #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
    /// #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), lease.fence, SystemTime::now() + ttl))
    /// #     }
    /// # }
    /// # impl Driver for PushoverLock {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
    /// # }
    /// # impl LockProvider for PushoverLock {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
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
        Kit::build::<sandloom_driverkit::lock::LockCapability>(
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
    /// # use sandloom_conformance::lock::LockConformance;
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
    /// Run the whole `lock` kit from a driver crate's tests: one `#[test]` per
    /// obligation, in a module `lock_conformance`. A leading `name:` puts that module inside a
    /// module `name`, so one file can run the kit several times.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] name
    /// // sandloom-conformance.
    /// use sandloom_driverkit::NoOptions;
    /// # use std::time::{Duration, SystemTime};
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::lock::{Lease, Lock, LockOps, LockProvider};
    /// # use sandloom_driverkit::sdk::InfraResult;
    /// # /// Grants every lease: a stand-in for a driver under test.
    /// # pub struct PushoverLock;
    /// # impl LockOps for PushoverLock {
    /// #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
    /// #         Ok(Some(Lease::new(name, "token", 1, SystemTime::now() + ttl)))
    /// #     }
    /// #     async fn acquire_wait(&self, name: &str, ttl: Duration, _: Duration) -> InfraResult<Option<Lease>> {
    /// #         LockOps::acquire(self, name, ttl).await
    /// #     }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { Ok(true) }
    /// #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
    /// #         Ok(Lease::new(lease.name.clone(), lease.token.clone(), lease.fence, SystemTime::now() + ttl))
    /// #     }
    /// # }
    /// # impl Driver for PushoverLock {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(PushoverLock) }
    /// # }
    /// # impl LockProvider for PushoverLock {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    /// # pub type MyLock = PushoverLock;
    ///
    /// sandloom_conformance::lock_conformance!(MyLock, |_request| NoOptions {});
    /// // Again in a module `second_run` (another configuration of the same driver, say):
    /// sandloom_conformance::lock_conformance!(second_run: MyLock, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro lock_conformance;
    kit crate::lock::LockConformance::new;
    provider LockProvider;
    settings LockSettings;
    /// Every obligation of the lock contract, in the order the kit runs them.
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
    ///   prefix, by a trailing or leading space, dot or slash, in non-ASCII letters, as NFC vs
    ///   NFD, as a percent-encoding (`%6F` for `o`), or are 200 characters long are held and
    ///   released independently.
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
    /// - `fences_strictly_increase_with_every_grant`: 21 grants of one lock in quick
    ///   succession, released in between and with another lock's grants among them, each carry
    ///   a fence greater than the one before; `refresh` keeps the fence; a takeover after expiry
    ///   and the one winner of each of 4 rounds of 16 tasks × 4 concurrent acquires carry a
    ///   greater fence than the lease before them.
    /// - `a_paused_holder_finds_its_lease_lost_and_its_fence_stale`: a holder stalled past its
    ///   300 ms ttl finds the lock granted to a newer holder with a greater fence; its `refresh`
    ///   answers `Conflict` and its `release` `false`, and the newer holder keeps the lock and
    ///   its fence.
    /// - `acquire_wait_respects_its_timeout`: `acquire_wait` of a free lock answers a lease at
    ///   once; of a held lock, `None` no sooner than its timeout (0, 300 and 600 ms) and within
    ///   the declared tolerance after it, the holder keeping the lock; a zero ttl or an empty
    ///   name is `InvalidInput`.
    /// - `acquire_wait_wakes_when_the_lock_is_released_or_expires`: of 4 waiters (1.5 s timeout)
    ///   on a held lock, exactly one gets it within the declared tolerance of its release, with
    ///   a greater fence; a waiter on a lock whose 600 ms lease ends gets it within the declared
    ///   tolerance of that end.
    /// - `keep_alive_holds_a_lease_past_several_ttls`: a
    ///   [`KeepAlive`](sandloom_sdk_infra::lock::KeepAlive) of a 300 ms lease
    ///   reports it held for four ttls, a contender trying every 50 ms never gets the lock, and
    ///   the lease keeps its token and fence; its `release` answers `true`, tells its watches,
    ///   and frees the lock for a grant with a greater fence.
    /// - `keep_alive_reports_a_lease_taken_over_as_lost`: when the lease under a keep-alive is
    ///   released and the lock taken by another holder, the keep-alive reports it lost
    ///   (`Conflict`) within a third of the ttl and the declared tolerance, not at its expiry;
    ///   its `release` then answers `false` and the newer holder keeps the lock.
    /// - `keep_alive_fails_closed_when_renewal_hangs_or_fails`: a renewal that fails once
    ///   (`Unavailable`) is reported `Uncertain` and retried, and the lease stays held; when
    ///   renewals are handled by the store but answered a ttl late, the keep-alive reports the
    ///   lease lost (unconfirmed) within a ttl and the declared tolerance, a contender polling
    ///   every 10 ms gets the lock within two ttls and the tolerance but never while the
    ///   keep-alive reports it held, with a greater fence, and the late answers do not bring the
    ///   lease back.
    /// - `names_at_and_past_the_limit`: a one-byte name is a lock; names of exactly 1,024 bytes
    ///   (ASCII, and 2-byte letters) are held beside their own prefixes one character shorter;
    ///   a name one character past the limit, and one holding a NUL character, is granted while
    ///   the lock named by what comes before is held (a lock of its own) or refused with
    ///   `InvalidInput`, never cut.
    /// - `leases_last_their_whole_ttl_counted_from_the_last_grant`: a 30 s lease, and one
    ///   refreshed to 30 s, are still held after 3 s plus the declared tolerance, longer than
    ///   every short lease the kit uses elsewhere (no silent cap); a lease refreshed to its ttl
    ///   1.2 s into it (more with a wider tolerance) reports and keeps an expiry counted from the
    ///   refresh, held past the end counted from the acquire and free within the declared
    ///   tolerance of the one counted from the refresh.
    /// - `acquire_wait_timeouts_at_the_extremes`: `acquire_wait` of a held lock with a 1 µs
    ///   timeout answers `None` within the declared tolerance; with timeouts of 400 days and 100
    ///   years it is still waiting 300 ms later, and gets the lock within the declared tolerance
    ///   of its release.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `acquire`, `acquire_wait`,
    ///   `release` and `refresh` answer `Stopped`.
    /// - `secrets_never_show`: the secrets the kit plants itself in every `writeOnly` option
    ///   of the options' JSON Schema (every `Secret` and `SecretUrl`, with no declaration), on
    ///   an instance it builds from them, and the values declared with
    ///   [`Kit::secrets`](crate::Kit::secrets): none shows in the options' `Debug`, the
    ///   driver's `Debug`, or the `Display` or `Debug` of the errors of `validate`,
    ///   `from_options`, `start`, `stop` and of the contract's operations given an empty key or
    ///   name (`InvalidInput`); the declared ones also after `stop` (`Stopped`) and on an
    ///   instance pointed at an unreachable address. Nothing to check for options with no
    ///   `writeOnly` option and no declared secret.
    ///
    /// ```
    /// use sandloom_conformance::lock::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 28);
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
        fences_strictly_increase_with_every_grant,
        a_paused_holder_finds_its_lease_lost_and_its_fence_stale,
        acquire_wait_respects_its_timeout,
        acquire_wait_wakes_when_the_lock_is_released_or_expires,
        keep_alive_holds_a_lease_past_several_ttls,
        keep_alive_reports_a_lease_taken_over_as_lost,
        keep_alive_fails_closed_when_renewal_hangs_or_fails,
        names_at_and_past_the_limit,
        leases_last_their_whole_ttl_counted_from_the_last_grant,
        acquire_wait_timeouts_at_the_extremes,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}
