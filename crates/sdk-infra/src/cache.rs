//! The `cache` capability: a shared key-value cache of bytes.
//!
//! Required operations: [`get`](Cache::get), [`set`](Cache::set), [`delete`](Cache::delete).
//! Optional features, each answering [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported)
//! when the driver did not declare it: [`TTL`], [`INCREMENT`], [`BULK`].
//!
//! The constants are the names drivers declare and modules require:
//!
//! ```
//! use sandloom_sdk_infra::cache::{BULK, FEATURES, INCREMENT, NAME, REQUIRED_OPERATIONS, TTL};
//! use sandloom_sdk_infra::{requires, CACHE};
//!
//! // Startup refuses a `cache.sessions` whose driver does not declare `ttl`.
//! requires!(CACHE, "sessions", features = [TTL]);
//!
//! # fn main() {
//! assert_eq!(NAME, CACHE.name());
//! assert_eq!((TTL, INCREMENT, BULK), ("ttl", "increment", "bulk"));
//! assert_eq!(FEATURES, [TTL, INCREMENT, BULK]);
//! assert_eq!(REQUIRED_OPERATIONS, ["get", "set", "delete"]);
//! # }
//! ```

/// Capability name of the cache, as written in `INFRA` (`[cache.default]`); see the
/// [module example](self).
pub const NAME: &str = "cache";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`Cache`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::cache::FUTURE_BYTES, 512);
/// ```
pub const FUTURE_BYTES: usize = 512;

/// Feature: entries that expire ([`Cache::set_with_ttl`]).
pub const TTL: &str = "ttl";
/// Feature: atomic integer counters ([`Cache::increment`]).
pub const INCREMENT: &str = "increment";
/// Feature: several keys in one round trip ([`Cache::get_many`], [`Cache::set_many`],
/// [`Cache::delete_many`]).
pub const BULK: &str = "bulk";

/// The `cache` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __cache_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "cache",
            stability: Stable,
            version: (1, 0, 0),
            features: ["ttl", "increment", "bulk"],
            ops: CacheOps,
            future_bytes: $crate::cache::FUTURE_BYTES,
            trait: {
                /// A shared cache of byte values under string keys.
                ///
                /// Keys are non-empty UTF-8 strings; values are arbitrary bytes, including empty. Every driver
                /// holds keys of up to 1,024 bytes and values of up to 1 MiB; a longer key or a larger value it
                /// either holds exactly, as a key of its own, or refuses with `InvalidInput`, writing nothing:
                /// it never cuts one to fit. A key holding a NUL character is held like any other or refused
                /// with `InvalidInput`, never cut at the NUL. Keys are compared byte for byte: keys that differ
                /// only in case, by a leading or trailing space, by a trailing dot or slash, by a prefix or
                /// suffix, as a percent-encoding, or as NFC vs NFD forms of the same text are distinct keys in
                /// every operation, bulk ones and `increment` included. A cache may forget an
                /// entry at any time (capacity, eviction, expiry); it never returns a value that was overwritten
                /// or deleted before the call began, whichever task or thread asks: once `set` or `delete` has
                /// completed, every later `get` anywhere answers the new state. An entry written without a ttl
                /// (by `set`, `set_many`, or an `increment` that makes a counter) is never forgotten because
                /// time passed: a driver applies no expiry of its own unless the operator configured one (as
                /// `cache.redis`'s `default_ttl_ms`), and may forget it only to make room.
                ///
                /// ```
                /// use sandloom_sdk_infra::{Cache, InfraResult};
                ///
                /// async fn remember_visit(cache: &dyn Cache, user: &str) -> InfraResult<bool> {
                ///     let key = format!("visited:{user}");
                ///     let seen = cache.get(&key).await?.is_some();
                ///     cache.set(&key, b"1".to_vec().into()).await?;
                ///     Ok(seen)
                /// }
                /// ```
                pub trait Cache: Send + Sync {
                    /// The value under `key`, or `None` when there is none.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{Cache, InfraResult};
                    ///
                    /// async fn greeting(cache: &dyn Cache) -> InfraResult<String> {
                    ///     Ok(match cache.get("greeting").await? {
                    ///         Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    ///         None => "hello".to_owned(), // never written, deleted, evicted or expired
                    ///     })
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for an empty key; `Unavailable`/`Timeout` when the backend fails;
                    /// `Stopped` after the driver stopped.
                    async fn get(&self, key: &str) -> $crate::InfraResult<Option<$crate::bytes::Bytes>>;

                    /// Store `value` under `key`, replacing any value (and clearing any expiry).
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{bytes::Bytes, Cache, InfraResult};
                    ///
                    /// async fn save_profile(cache: &dyn Cache, user: u64, json: &str) -> InfraResult<()> {
                    ///     cache.set(&format!("profile:{user}"), Bytes::copy_from_slice(json.as_bytes())).await
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As [`get`](Cache::get).
                    async fn set(&self, key: &str, value: $crate::bytes::Bytes) -> $crate::InfraResult<()>;

                    /// Remove `key`; `true` when there was a value.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{Cache, InfraResult};
                    ///
                    /// /// `false` when the session had already expired or been logged out.
                    /// async fn logout(cache: &dyn Cache, session: &str) -> InfraResult<bool> {
                    ///     cache.delete(&format!("session:{session}")).await
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As [`get`](Cache::get).
                    async fn delete(&self, key: &str) -> $crate::InfraResult<bool>;

                    /// Store `value` under `key` for `ttl`; afterwards `get` answers `None`. Feature [`TTL`].
                    ///
                    /// Once expired, the entry is absent to every operation: `delete` answers `false`,
                    /// `get_many` `None`, `delete_many` does not count it, `increment` counts from 0. A second
                    /// `set_with_ttl` replaces the first ttl (longer or shorter); a plain `set` clears it.
                    ///
                    /// Any nonzero `ttl` is accepted. A `ttl` shorter than the backend's resolution is rounded
                    /// up to it (never to no expiry, never refused); otherwise the entry lives `ttl`, not a
                    /// `ttl` rounded to whole seconds either way (1.5 s is neither 1 s nor 2 s). A `ttl` longer
                    /// than the backend can hold (400 days, `Duration::MAX`) is held as long as it can, never
                    /// less than 100 years: `Duration::MAX` means "as long as possible", without panic or error.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::{Cache, CacheOps, ErrorKind, InfraResult};
                    ///
                    /// async fn remember_login(cache: &dyn Cache, user: &str) -> InfraResult<()> {
                    ///     cache.set_with_ttl(&format!("login:{user}"), "1".into(), Duration::from_secs(3600)).await
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes as B};
                    /// # struct PlainCache;
                    /// # impl CacheOps for PlainCache {
                    /// #     async fn get(&self, _: &str) -> InfraResult<Option<B>> { Ok(None) }
                    /// #     async fn set(&self, _: &str, _: B) -> InfraResult<()> { Ok(()) }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainCache` implements only `get`, `set` and `delete`: it declares no feature.
                    /// let err = block_on(remember_login(&PlainCache, "ada")).unwrap_err();
                    /// assert_eq!(err.kind(), ErrorKind::Unsupported);
                    /// ```
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; `InvalidInput` for a zero `ttl`; else as `set`.
                    #[feature = "ttl"]
                    async fn set_with_ttl(&self, key: &str, value: $crate::bytes::Bytes, ttl: ::std::time::Duration) -> $crate::InfraResult<()>;

                    /// Add `delta` to the signed 64-bit counter under `key` (absent counts as 0) and return the
                    /// new value, atomically across all callers. Feature [`INCREMENT`].
                    ///
                    /// A counter is a value `increment` wrote. A value written by `set` that is the decimal
                    /// text of an `i64` may count on from there (as Redis `INCRBY` does, and the built-in
                    /// drivers, which store a counter as its decimal text) or answer `Conflict`: callers must
                    /// not rely on either. A value no integer parser reads (`"text"`, `" 5"`, `"5.0"`, `""`, a
                    /// number beyond `i64`) is never a counter. `increment` keeps the entry's expiry; `set`,
                    /// `set_with_ttl` and `set_many` over a counter replace it, and after `delete` (or expiry) a
                    /// counter starts again from 0.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{Cache, CacheOps, ErrorKind, InfraResult};
                    ///
                    /// /// The new view count, or `None` when the driver cannot count.
                    /// async fn count_view(cache: &dyn Cache, page: &str) -> InfraResult<Option<i64>> {
                    ///     match cache.increment(&format!("views:{page}"), 1).await {
                    ///         Ok(views) => Ok(Some(views)),
                    ///         Err(err) if err.kind() == ErrorKind::Unsupported => Ok(None),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes as B};
                    /// # struct PlainCache;
                    /// # impl CacheOps for PlainCache {
                    /// #     async fn get(&self, _: &str) -> InfraResult<Option<B>> { Ok(None) }
                    /// #     async fn set(&self, _: &str, _: B) -> InfraResult<()> { Ok(()) }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainCache` implements only `get`, `set` and `delete`: it declares no feature.
                    /// assert_eq!(block_on(count_view(&PlainCache, "home")).unwrap(), None);
                    /// ```
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; `Conflict` when the value is not a counter (the
                    /// value is kept), or on overflow (beyond `i64::MAX` or `i64::MIN`; the counter keeps its
                    /// value).
                    #[feature = "increment"]
                    async fn increment(&self, key: &str, delta: i64) -> $crate::InfraResult<i64>;

                    /// The values of `keys`, in the same order. Feature [`BULK`].
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{bytes::Bytes, Cache, CacheOps, ErrorKind, InfraResult};
                    ///
                    /// /// One round trip where the driver can, one per key where it cannot.
                    /// async fn load(cache: &dyn Cache, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
                    ///     match cache.get_many(keys).await {
                    ///         Err(err) if err.kind() == ErrorKind::Unsupported => {
                    ///             let mut values = Vec::with_capacity(keys.len());
                    ///             for key in keys {
                    ///                 values.push(cache.get(key).await?);
                    ///             }
                    ///             Ok(values)
                    ///         }
                    ///         result => result,
                    ///     }
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes as B};
                    /// # struct PlainCache;
                    /// # impl CacheOps for PlainCache {
                    /// #     async fn get(&self, _: &str) -> InfraResult<Option<B>> { Ok(None) }
                    /// #     async fn set(&self, _: &str, _: B) -> InfraResult<()> { Ok(()) }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainCache` implements only `get`, `set` and `delete`, and holds nothing.
                    /// assert_eq!(block_on(load(&PlainCache, &["a", "b"])).unwrap(), [None, None]);
                    /// ```
                    ///
                    /// A call with an invalid key anywhere among `keys` answers `InvalidInput`; no keys answer
                    /// no values. Every position gets its answer, a repeated key each time it appears, however
                    /// many keys one call carries.
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; else as `get`.
                    #[feature = "bulk"]
                    async fn get_many(&self, keys: &[&str]) -> $crate::InfraResult<Vec<Option<$crate::bytes::Bytes>>>;

                    /// Store every entry, as [`set`](Cache::set) does each: replacing any value and clearing
                    /// any expiry. Feature [`BULK`].
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{bytes::Bytes, Cache, CacheOps, ErrorKind, InfraResult};
                    ///
                    /// async fn warm_up(cache: &dyn Cache) -> InfraResult<()> {
                    ///     let entries = [("plan:free", Bytes::from("0")), ("plan:pro", Bytes::from("9"))];
                    ///     cache.set_many(&entries).await
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes as B};
                    /// # struct PlainCache;
                    /// # impl CacheOps for PlainCache {
                    /// #     async fn get(&self, _: &str) -> InfraResult<Option<B>> { Ok(None) }
                    /// #     async fn set(&self, _: &str, _: B) -> InfraResult<()> { Ok(()) }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainCache` implements only `get`, `set` and `delete`: it declares no feature.
                    /// let err = block_on(warm_up(&PlainCache)).unwrap_err();
                    /// assert_eq!(
                    ///     err.to_string(),
                    ///     "cache: `set_many` is not supported: the driver does not declare feature `bulk`"
                    /// );
                    /// ```
                    ///
                    /// A call with an invalid key anywhere among `entries` answers `InvalidInput` and writes
                    /// nothing; no entries is a successful no-op. A key given twice keeps its last entry's value
                    /// (as Redis `MSET` does).
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; else as `set`.
                    #[feature = "bulk"]
                    async fn set_many(&self, entries: &[(&str, $crate::bytes::Bytes)]) -> $crate::InfraResult<()>;

                    /// Remove every key; returns how many had a value. Feature [`BULK`].
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::{Cache, CacheOps, ErrorKind, InfraResult};
                    ///
                    /// async fn forget(cache: &dyn Cache, keys: &[&str]) -> InfraResult<u64> {
                    ///     match cache.delete_many(keys).await {
                    ///         Err(err) if err.kind() == ErrorKind::Unsupported => {
                    ///             let mut removed = 0;
                    ///             for key in keys {
                    ///                 removed += u64::from(cache.delete(key).await?);
                    ///             }
                    ///             Ok(removed)
                    ///         }
                    ///         result => result,
                    ///     }
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes as B};
                    /// # struct PlainCache;
                    /// # impl CacheOps for PlainCache {
                    /// #     async fn get(&self, _: &str) -> InfraResult<Option<B>> { Ok(None) }
                    /// #     async fn set(&self, _: &str, _: B) -> InfraResult<()> { Ok(()) }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainCache` implements only `get`, `set` and `delete`, and holds nothing.
                    /// assert_eq!(block_on(forget(&PlainCache, &["a", "b"])).unwrap(), 0);
                    /// ```
                    ///
                    /// A call with an invalid key anywhere among `keys` answers `InvalidInput` and deletes
                    /// nothing; no keys count 0. A key given twice is counted once (as Redis `DEL` does).
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; else as `delete`.
                    #[feature = "bulk"]
                    async fn delete_many(&self, keys: &[&str]) -> $crate::InfraResult<u64>;
                }
            }
        }
    };
}

crate::__cache_contract!([crate::__operation_trait] []);
crate::__cache_contract!([crate::__capability_constants] []);
