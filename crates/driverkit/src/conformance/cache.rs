//! The `cache` kit: [`CacheConformance`].
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`cache_conformance!`](crate::cache_conformance)
//! instead.
//!
//! ```
//! use sandloom_driverkit::conformance::cache::CacheConformance;
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{Cache, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct ForgetfulCache;
//! # #[async_trait]
//! # impl Cache for ForgetfulCache {
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

use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, Cache, INCREMENT, TTL};

use super::harness::{Instance, Kit, Tolerance};
use super::{KitRequest, call, ensure, expect_kind, expect_unsupported};
use crate::cache::CacheProvider;

mod combined;
mod exactness;

use combined::{
    empty_batches_are_no_ops, every_operation_refuses_an_empty_key,
    expiry_is_seen_by_every_operation, increment_at_the_limits,
};
use exactness::{
    bulk_handles_repeated_keys_and_large_batches, counters_are_plain_decimal_values,
    near_identical_keys_are_distinct, sub_second_ttls_are_exact, ttl_extremes_are_accepted,
    writes_are_seen_at_once_by_other_tasks,
};

/// The conformance kit of the `cache` contract. See [`OBLIGATIONS`] for what it holds a driver
/// to; run it with [`cache_conformance!`](crate::cache_conformance).
///
/// ```
/// # use sandloom_driverkit::conformance::cache::CacheConformance;
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
/// use sandloom_driverkit::conformance::cache::CacheSettings;
/// use sandloom_driverkit::conformance::Tolerance;
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
    /// use sandloom_driverkit::conformance::cache::CacheSettings;
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
    /// use sandloom_driverkit::conformance::cache::CacheConformance;
    /// use sandloom_driverkit::conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct ForgetfulCache;
    /// # #[async_trait]
    /// # impl Cache for ForgetfulCache {
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
        Kit::build::<crate::cache::CacheCapability>(
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
    /// # use sandloom_driverkit::conformance::cache::CacheConformance;
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
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] turn on the
    /// // `conformance` feature of sandloom-driverkit.
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct ForgetfulCache;
    /// # #[async_trait]
    /// # impl Cache for ForgetfulCache {
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
    /// sandloom_driverkit::cache_conformance!(MyCache, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro cache_conformance;
    kit crate::conformance::cache::CacheConformance::new;
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
    ///   tab, a line feed, CR LF), and `delete` of `kit:near:*` removes that one key only.
    /// - `writes_are_seen_at_once_by_other_tasks`: after a `set` or `delete` completes, `get` on
    ///   other tasks (other threads) answers the new state, never the old one.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, every operation answers
    ///   `Stopped`, the declared optional ones too.
    /// - `secrets_never_show`: with secrets declared
    ///   ([`Kit::secrets`](crate::conformance::Kit::secrets)), none shows in the options' `Debug`,
    ///   the driver's `Debug`, or the `Display` or `Debug` of the errors of the contract's
    ///   operations given an empty key or name (`InvalidInput`), after `stop` (`Stopped`), and of
    ///   an instance pointed at an unreachable address (its `start`, or its operations); nothing to
    ///   check without declared secrets.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::cache::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 24);
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
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}

async fn round_trip(cache: &dyn Cache, key: &str, value: Bytes) -> Result<(), String> {
    call!(format!("set({key:?})"), cache.set(key, value.clone()));
    let got = call!(format!("get({key:?})"), cache.get(key));
    ensure!(
        got.as_ref() == Some(&value),
        "get({key:?}) after set of {} bytes answered {}",
        value.len(),
        describe(got.as_ref())
    );
    Ok(())
}

fn describe(value: Option<&Bytes>) -> String {
    match value {
        None => "None".to_owned(),
        Some(bytes) if bytes.len() <= 32 => format!("Some({bytes:?})"),
        Some(bytes) => format!("Some(<{} bytes>)", bytes.len()),
    }
}

async fn get_missing_key_returns_none<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let got = call!("get of a missing key", i.driver.get("kit:never-written"));
    ensure!(
        got.is_none(),
        "get of a missing key answered {}",
        describe(got.as_ref())
    );
    Ok(())
}

async fn binary_values_round_trip_exactly<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let every_byte: Vec<u8> = (0..=255).collect();
    round_trip(&*i.driver, "kit:binary", every_byte.into()).await?;
    round_trip(&*i.driver, "kit:nul", Bytes::from_static(b"\0\0\xff")).await
}

async fn empty_value_round_trips<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    round_trip(&*i.driver, "kit:empty", Bytes::new()).await
}

async fn large_value_round_trips<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let large: Vec<u8> = (0..1024 * 1024).map(|n: u32| (n % 251) as u8).collect();
    round_trip(&*i.driver, "kit:large", large.into()).await
}

async fn set_overwrites<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    round_trip(&*i.driver, "kit:overwrite", Bytes::from_static(b"first")).await?;
    round_trip(&*i.driver, "kit:overwrite", Bytes::from_static(b"second")).await
}

async fn delete_reports_existence_and_removes<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    call!("set", cache.set("kit:delete", Bytes::from_static(b"v")));
    let existed = call!("first delete", cache.delete("kit:delete"));
    ensure!(existed, "delete of an existing key answered false");
    let got = call!("get after delete", cache.get("kit:delete"));
    ensure!(
        got.is_none(),
        "get after delete answered {}",
        describe(got.as_ref())
    );
    let again = call!("second delete", cache.delete("kit:delete"));
    ensure!(!again, "delete of a deleted key answered true");
    Ok(())
}

async fn long_and_non_ascii_keys_work<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let long = format!("kit:{}", "k".repeat(1000));
    let keys = [
        long.as_str(),
        "kit:ключ",
        "kit:鍵",
        "kit:🔑",
        "kit:clé avec espaces",
    ];
    for (n, key) in keys.iter().enumerate() {
        call!(
            format!("set({key:?})"),
            i.driver.set(key, Bytes::from(vec![n as u8; 3]))
        );
    }
    for (n, key) in keys.iter().enumerate() {
        let got = call!(format!("get({key:?})"), i.driver.get(key));
        ensure!(
            got.as_deref() == Some(&[n as u8; 3][..]),
            "key {key:?} answered {} (keys must be distinct and exact)",
            describe(got.as_ref())
        );
    }
    Ok(())
}

async fn empty_key_is_invalid_input<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    expect_kind(
        "get(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.get("").await,
    )?;
    expect_kind(
        "set(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.set("", Bytes::new()).await,
    )?;
    expect_kind(
        "delete(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.delete("").await,
    )
}

async fn concurrent_tasks_lose_no_writes<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let mut tasks = Vec::new();
    for task in 0..32_u32 {
        let cache = i.shared();
        tasks.push(tokio::spawn(async move {
            // Within a task the writes are concurrent too: a driver that reads, modifies and
            // writes back shared state loses all but one of them.
            let writes = (0..20_u32).map(|n| {
                let cache = cache.clone();
                async move {
                    let key = format!("kit:concurrent:{task}:{n}");
                    cache
                        .set(&key, Bytes::from(format!("{task}-{n}")))
                        .await
                        .map_err(|e| format!("set({key:?}) failed: {e}"))
                }
            });
            futures_util::future::try_join_all(writes).await?;
            for n in 0..20_u32 {
                let key = format!("kit:concurrent:{task}:{n}");
                let got = cache
                    .get(&key)
                    .await
                    .map_err(|e| format!("get({key:?}) failed: {e}"))?;
                if got.as_deref() != Some(format!("{task}-{n}").as_bytes()) {
                    return Err(format!("{key} lost its write: {}", describe(got.as_ref())));
                }
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("a task panicked: {e}"))??;
    }
    Ok(())
}

async fn ttl_entries_expire<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    let short = Duration::from_millis(300);
    if !i.declares(TTL) {
        return expect_unsupported(
            "set_with_ttl",
            &cache
                .set_with_ttl("kit:ttl", Bytes::from_static(b"v"), short)
                .await,
        );
    }
    let late = s.late();
    // The TTL counts from the call at the latest: the bound is measured from before it.
    let written = tokio::time::Instant::now();
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:ttl", Bytes::from_static(b"v"), short)
    );
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:ttl-then-set", Bytes::from_static(b"v"), short)
    );
    call!(
        "set",
        cache.set("kit:ttl-then-set", Bytes::from_static(b"kept"))
    );
    call!("set", cache.set("kit:no-ttl", Bytes::from_static(b"kept")));
    let got = call!("get before expiry", cache.get("kit:ttl"));
    ensure!(got.is_some(), "an entry with a 300 ms ttl was gone at once");
    // Not early: still there at half its TTL (when the machine got there in time to tell).
    tokio::time::sleep_until(written + short / 2).await;
    let got = call!("get at half the ttl", cache.get("kit:ttl"));
    ensure!(
        got.is_some() || written.elapsed() >= short,
        "an entry with a 300 ms ttl was gone {:?} after it was written",
        written.elapsed()
    );
    // Expired within the declared tolerance: a cache may evict lazily, not late.
    let deadline = written + short + late;
    loop {
        let asked = tokio::time::Instant::now();
        if call!("get after ttl", cache.get("kit:ttl")).is_none() {
            break;
        }
        ensure!(
            asked < deadline,
            "an entry with a 300 ms ttl was still there {:?} after it was written: more than the \
             declared tolerance ({late:?}) past its ttl",
            asked - written
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kept = call!("get", cache.get("kit:ttl-then-set"));
    ensure!(
        kept.is_some(),
        "a plain `set` after `set_with_ttl` must clear the expiry, but the entry expired"
    );
    let kept = call!("get", cache.get("kit:no-ttl"));
    ensure!(kept.is_some(), "an entry without ttl disappeared");
    expect_kind(
        "set_with_ttl with a zero ttl",
        ErrorKind::InvalidInput,
        &cache
            .set_with_ttl("kit:zero", Bytes::new(), Duration::ZERO)
            .await,
    )
}

async fn increment_is_atomic<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(INCREMENT) {
        return expect_unsupported("increment", &i.driver.increment("kit:counter", 1).await);
    }
    let first = call!(
        "increment of a missing key",
        i.driver.increment("kit:counter", 5)
    );
    ensure!(
        first == 5,
        "increment(5) of a missing key answered {first}, not 5"
    );
    let down = call!("negative increment", i.driver.increment("kit:counter", -5));
    ensure!(down == 0, "increment(-5) after 5 answered {down}, not 0");
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let cache = i.shared();
        tasks.push(tokio::spawn(async move {
            let increments = (0..50).map(|_| cache.increment("kit:counter", 1));
            futures_util::future::try_join_all(increments)
                .await
                .map_err(|e| format!("increment failed: {e}"))?;
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("a task panicked: {e}"))??;
    }
    let total = call!("increment(0)", i.driver.increment("kit:counter", 0));
    ensure!(
        total == 800,
        "16 tasks × 50 increments gave {total}, not 800: increments were lost"
    );
    call!(
        "set",
        i.driver
            .set("kit:not-a-counter", Bytes::from_static(b"text"))
    );
    expect_kind(
        "increment of a non-counter value",
        ErrorKind::Conflict,
        &i.driver.increment("kit:not-a-counter", 1).await,
    )
}

async fn bulk_operations_work<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    if !i.declares(BULK) {
        expect_unsupported("get_many", &cache.get_many(&["kit:a"]).await)?;
        expect_unsupported(
            "set_many",
            &cache.set_many(&[("kit:a", Bytes::new())]).await,
        )?;
        return expect_unsupported("delete_many", &cache.delete_many(&["kit:a"]).await);
    }
    call!(
        "set_many",
        cache.set_many(&[
            ("kit:bulk:a", Bytes::from_static(b"1")),
            ("kit:bulk:b", Bytes::from_static(b"2"))
        ])
    );
    let got = call!(
        "get_many",
        cache.get_many(&["kit:bulk:b", "kit:bulk:missing", "kit:bulk:a"])
    );
    let expected = [
        Some(Bytes::from_static(b"2")),
        None,
        Some(Bytes::from_static(b"1")),
    ];
    ensure!(
        got == expected,
        "get_many answered {got:?}, expected {expected:?} (same order, None for a miss)"
    );
    let deleted = call!(
        "delete_many",
        cache.delete_many(&["kit:bulk:a", "kit:bulk:missing", "kit:bulk:b"])
    );
    ensure!(
        deleted == 2,
        "delete_many of 2 present and 1 missing key answered {deleted}, not 2"
    );
    let after = call!("get_many", cache.get_many(&["kit:bulk:a", "kit:bulk:b"]));
    ensure!(
        after == [None, None],
        "values remained after delete_many: {after:?}"
    );
    Ok(())
}

async fn operations_after_stop_fail_with_stopped<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    call!("set", i.driver.set("kit:stop", Bytes::from_static(b"v")));
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "get after stop",
        ErrorKind::Stopped,
        &i.driver.get("kit:stop").await,
    )?;
    expect_kind(
        "set after stop",
        ErrorKind::Stopped,
        &i.driver.set("kit:stop", Bytes::new()).await,
    )?;
    expect_kind(
        "delete after stop",
        ErrorKind::Stopped,
        &i.driver.delete("kit:stop").await,
    )?;
    let cache = &*i.driver;
    if i.declares(TTL) {
        expect_kind(
            "set_with_ttl after stop",
            ErrorKind::Stopped,
            &cache
                .set_with_ttl("kit:stop", Bytes::new(), Duration::from_mins(1))
                .await,
        )?;
    }
    if i.declares(INCREMENT) {
        expect_kind(
            "increment after stop",
            ErrorKind::Stopped,
            &cache.increment("kit:stop-counter", 1).await,
        )?;
    }
    if i.declares(BULK) {
        expect_kind(
            "get_many after stop",
            ErrorKind::Stopped,
            &cache.get_many(&["kit:stop"]).await,
        )?;
        expect_kind(
            "set_many after stop",
            ErrorKind::Stopped,
            &cache.set_many(&[("kit:stop", Bytes::new())]).await,
        )?;
        expect_kind(
            "delete_many after stop",
            ErrorKind::Stopped,
            &cache.delete_many(&["kit:stop"]).await,
        )?;
    }
    Ok(())
}

async fn secrets_never_show<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    i.secrets_never_show(|cache| {
        Box::pin(async move {
            let v = || Bytes::from_static(b"v");
            vec![
                cache.get("").await.err(),
                cache.set("", v()).await.err(),
                cache.delete("").await.err(),
                cache
                    .set_with_ttl("", v(), Duration::from_secs(1))
                    .await
                    .err(),
                cache.increment("", 1).await.err(),
                cache.get_many(&[""]).await.err(),
                cache.set_many(&[("", v())]).await.err(),
                cache.delete_many(&[""]).await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                cache.get("kit:secrets").await.err(),
                cache.set("kit:secrets", v()).await.err(),
            ]
        })
    })
    .await
}
