//! The `cache` kit: [`CacheConformance`].
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`cache_conformance!`](crate::cache_conformance)
//! instead.
//!
//! ```
//! use sandloom_conformance::cache::CacheConformance;
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct ForgetfulCache;
//! # impl CacheOps for ForgetfulCache {
//! #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
//! #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
//! #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
//! # }
//! # impl Driver for ForgetfulCache {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
//! # }
//! # impl CacheProvider for ForgetfulCache {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//!
//! // `ForgetfulCache` (hidden) stores nothing: every `get` answers `None`.
//! let kit = CacheConformance::<ForgetfulCache>::new(|_request| NoOptions {});
//! assert!(kit.check("get_missing_key_returns_none").is_ok());
//! let failure = kit.check("set_overwrites").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use crate::KitRequest;
use crate::harness::{Kit, Tolerance};
use sandloom_driverkit::cache::CacheProvider;

mod combined;
mod exactness;
mod features;
mod lifecycle;
mod limits;
mod values;

use combined::{
    empty_batches_are_no_ops, every_operation_refuses_an_empty_key,
    expiry_is_seen_by_every_operation, increment_at_the_limits,
};
use exactness::{
    bulk_handles_repeated_keys_and_large_batches, counters_are_plain_decimal_values,
    near_identical_keys_are_distinct, sub_second_ttls_are_exact, ttl_extremes_are_accepted,
    writes_are_seen_at_once_by_other_tasks,
};

use features::{bulk_operations_work, increment_is_atomic, ttl_entries_expire};
use lifecycle::{operations_after_stop_fail_with_stopped, secrets_never_show};
use limits::{entries_without_ttl_never_expire, keys_and_values_at_and_past_their_limits};
use values::{
    binary_values_round_trip_exactly, concurrent_tasks_lose_no_writes,
    delete_reports_existence_and_removes, empty_key_is_invalid_input, empty_value_round_trips,
    get_missing_key_returns_none, large_value_round_trips, long_and_non_ascii_keys_work,
    set_overwrites,
};

/// The conformance kit of the `cache` contract. See [`OBLIGATIONS`] for what it holds a driver
/// to; run it with [`cache_conformance!`](crate::cache_conformance).
///
/// ```
/// # use sandloom_conformance::cache::CacheConformance;
/// # fn kit<T: sandloom_driverkit::cache::CacheProvider>(options: T::Options)
/// # where T::Options: Clone + Send + Sync {
/// let kit = CacheConformance::<T>::new(move |_request| options.clone());
/// for failure in kit.check_all() {
///     eprintln!("{failure}");
/// }
/// # }
/// ```
pub type CacheConformance<T> = Kit<T, CacheSettings>;

/// What the `cache` kit's obligations are given besides the instance: the declared timing
/// [`Tolerance`] (how late an entry may expire after its TTL), set with the kit's
/// [`tolerance`](CacheConformance::tolerance) method.
///
/// ```
/// use sandloom_conformance::cache::CacheSettings;
/// use sandloom_conformance::Tolerance;
/// assert_eq!(CacheSettings::default().tolerance(), Tolerance::DEFAULT);
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CacheSettings {
    tolerance: Tolerance,
}

impl CacheSettings {
    /// The declared timing tolerance.
    ///
    /// ```
    /// use sandloom_conformance::cache::CacheSettings;
    /// let tolerance = CacheSettings::default().tolerance().get();
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

impl<T: CacheProvider> Kit<T, CacheSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_conformance::cache::CacheConformance;
    /// use sandloom_conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct ForgetfulCache;
    /// # impl CacheOps for ForgetfulCache {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for ForgetfulCache {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
    /// # }
    /// # impl CacheProvider for ForgetfulCache {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = CacheConformance::<ForgetfulCache>::new(|request: &KitRequest| {
    ///     // Called once per obligation, for a fresh instance with its own scratch space.
    ///     assert!(request.scratch_dir.is_dir());
    ///     assert!(!request.namespace.is_empty());
    ///     NoOptions {}
    /// });
    /// assert!(kit.check("get_missing_key_returns_none").is_ok());
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<sandloom_driverkit::cache::CacheCapability>(
            obligations::<T>(),
            options,
            CacheSettings::default(),
        )
    }

    /// Widen the timing tolerance for a driver on a server (default [`Tolerance::DEFAULT`],
    /// at most [`Tolerance::MAX`]: above it, every obligation fails saying so). The
    /// tolerance is how late an entry may expire after its TTL.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_conformance::cache::CacheConformance;
    /// # fn kit<T: sandloom_driverkit::cache::CacheProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // For a cache on a server that evicts expired entries up to a second late:
    /// let kit = CacheConformance::<T>::new(move |_request| options.clone())
    ///     .tolerance(Duration::from_secs(1));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `cache_conformance!(MyDriver, |request| …, .tolerance(Duration::from_secs(1)));`.
    #[must_use]
    pub fn tolerance(self, late: std::time::Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }
}

crate::define_kit! {
    /// Run the whole `cache` kit from a driver crate's tests: one `#[test]` per obligation, in a
    /// module `cache_conformance`.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] name
    /// // sandloom-conformance.
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct ForgetfulCache;
    /// # impl CacheOps for ForgetfulCache {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for ForgetfulCache {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
    /// # }
    /// # impl CacheProvider for ForgetfulCache {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    /// # pub type MyCache = ForgetfulCache;
    ///
    /// sandloom_conformance::cache_conformance!(MyCache, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro cache_conformance;
    kit crate::cache::CacheConformance::new;
    provider CacheProvider;
    settings CacheSettings;
    /// Every obligation of the cache contract, in the order the kit runs them.
    ///
    /// - `get_missing_key_returns_none`: `get` of a key never written answers `None`.
    /// - `binary_values_round_trip_exactly`: every byte value 0..=255 comes back as written.
    /// - `empty_value_round_trips`: an empty value is stored (and is not "missing").
    /// - `large_value_round_trips`: a 1 MiB value comes back intact.
    /// - `set_overwrites`: a second `set` replaces the first value.
    /// - `delete_reports_existence_and_removes`: `delete` answers `true` then `false`, and `get`
    ///   answers `None` afterwards.
    /// - `long_and_non_ascii_keys_work`: a 1000-character key and keys in several scripts are
    ///   distinct and round-trip.
    /// - `empty_key_is_invalid_input`: `get`, `set` and `delete` of `""` answer `InvalidInput`.
    /// - `concurrent_tasks_lose_no_writes`: 32 tasks on several threads write and read their own
    ///   keys; every value is there.
    /// - `ttl_entries_expire`: declared `ttl`: an entry with a 300 ms ttl is there at half of it
    ///   and gone by its end plus the declared tolerance, a plain `set` clears an expiry, a zero
    ///   ttl is `InvalidInput`; undeclared: `set_with_ttl` answers `Unsupported`.
    /// - `increment_is_atomic`: declared `increment`: 16 tasks × 50 increments give 800, deltas may
    ///   be negative, a non-counter value is `Conflict`; undeclared: `Unsupported`.
    /// - `bulk_operations_work`: declared `bulk`: `set_many`, `get_many` (in order, with misses) and
    ///   `delete_many` (counting hits); undeclared: all three answer `Unsupported`.
    /// - `expiry_is_seen_by_every_operation`: declared `ttl`: once an entry's 300 ms ttl passed
    ///   (seen by `get` within the declared tolerance), `delete` answers `false`, `get_many` `None` and `delete_many`
    ///   counts 0 (with `bulk`), `increment` counts from 0 (with `increment`); a second ttl
    ///   replaces the first, longer or shorter; a plain `set` after expiry does not expire, nor
    ///   does an entry `set_many` wrote over one with a ttl (with `bulk`).
    /// - `increment_at_the_limits`: declared `increment`: 0 on a missing key is 0, `i64::MAX` and
    ///   `i64::MIN` are reached exactly, one step beyond either answers `Conflict` and leaves the
    ///   counter as it was.
    /// - `every_operation_refuses_an_empty_key`: `set_with_ttl` and `increment` (when declared),
    ///   and `get_many`, `set_many` and `delete_many` with `""` among valid keys (with `bulk`)
    ///   answer `InvalidInput`; the refused bulk call writes and deletes nothing.
    /// - `empty_batches_are_no_ops`: declared `bulk`: `get_many` of no keys answers no values,
    ///   `set_many` of no entries succeeds, `delete_many` of no keys counts 0, and nothing changes.
    /// - `ttl_extremes_are_accepted`: declared `ttl`: a 1 µs ttl is accepted and the entry is
    ///   gone within the declared tolerance; 400-day and 100-year ttls are accepted and the
    ///   entries stay (through `get`, and `get_many` where declared).
    /// - `sub_second_ttls_are_exact`: declared `ttl`: entries with 50 ms and 1.5 s ttls are there
    ///   until the ttl less the declared tolerance (where positive) and gone by the ttl plus it:
    ///   neither rounded down nor up to whole seconds.
    /// - `bulk_handles_repeated_keys_and_large_batches`: declared `bulk`: `get_many` answers every
    ///   position of a repeated key, `set_many` keeps a repeated key's last value, `delete_many`
    ///   counts a repeated key once; 1,500 keys in one call each way.
    /// - `counters_are_plain_decimal_values`: declared `increment`: a counter `increment` made
    ///   has a value; decimal text written by `set` counts on or is `Conflict` (the contract
    ///   allows both), and a value no integer parser reads (`"text"`, `" 5"`, `"5.0"`, `""`,
    ///   `"0x5"`, beyond `i64`, ...) is `Conflict` and kept; `set` over a counter replaces it, a
    ///   deleted counter starts at 0; with `ttl`, where a value written by `set_with_ttl` counts
    ///   on, `increment` keeps its expiry, and `set_with_ttl` over a counter gives its own.
    /// - `near_identical_keys_are_distinct`: keys differing by a trailing or leading space, case,
    ///   a prefix or suffix, or NFC vs NFD are distinct through `get`, `set`, `delete`, the bulk
    ///   operations, `increment` and an expiring ttl (each where declared); so are keys holding
    ///   glob, path and escape characters (`*`, `?`, `[k]`, `/`, `..`, `\`, `%6B` for `k`, a
    ///   tab, a line feed, CR LF, a trailing dot or slash), and `delete` of `kit:near:*` removes
    ///   that one key only.
    /// - `writes_are_seen_at_once_by_other_tasks`: after a `set` or `delete` completes, `get` on
    ///   other tasks (other threads) answers the new state, never the old one.
    /// - `keys_and_values_at_and_past_their_limits`: a one-byte key and value round-trip; keys of
    ///   exactly 1,024 bytes (ASCII, and 2-byte letters) are exact and distinct from their own
    ///   prefixes one character shorter; a key one character past the limit, and a value of
    ///   1 MiB and 1 byte, are stored whole (a key of its own) or refused with `InvalidInput`
    ///   writing nothing, never cut to fit; so is a key holding a NUL character, never cut at
    ///   it.
    /// - `entries_without_ttl_never_expire`: entries written by `set` (an empty value too), by
    ///   `set` over an entry with a ttl and with a 400-day ttl (with `ttl`), by `increment` (with
    ///   `increment`) and by `set_many` (with `bulk`) are all there after 3 s plus the declared
    ///   tolerance, longer than every ttl the kit uses elsewhere: no default ttl.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, every operation answers
    ///   `Stopped`, the declared optional ones too.
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
    /// use sandloom_conformance::cache::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 26);
    /// assert_eq!(OBLIGATIONS[0], "get_missing_key_returns_none");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
    /// ```
    obligations [
        get_missing_key_returns_none,
        binary_values_round_trip_exactly,
        empty_value_round_trips,
        large_value_round_trips,
        set_overwrites,
        delete_reports_existence_and_removes,
        long_and_non_ascii_keys_work,
        empty_key_is_invalid_input,
        concurrent_tasks_lose_no_writes,
        ttl_entries_expire,
        increment_is_atomic,
        bulk_operations_work,
        expiry_is_seen_by_every_operation,
        increment_at_the_limits,
        every_operation_refuses_an_empty_key,
        empty_batches_are_no_ops,
        ttl_extremes_are_accepted,
        sub_second_ttls_are_exact,
        bulk_handles_repeated_keys_and_large_batches,
        counters_are_plain_decimal_values,
        near_identical_keys_are_distinct,
        writes_are_seen_at_once_by_other_tasks,
        keys_and_values_at_and_past_their_limits,
        entries_without_ttl_never_expire,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}
