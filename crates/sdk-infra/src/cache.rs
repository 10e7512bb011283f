//! The `cache` capability: a shared key-value cache of bytes.
//!
//! Required operations: [`get`](Cache::get), [`set`](Cache::set), [`delete`](Cache::delete).
//! Optional features, each answering [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported)
//! when the driver did not declare it: [`TTL`], [`INCREMENT`], [`BULK`].

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{InfraError, InfraResult};

/// Capability name of the cache.
pub const NAME: &str = "cache";

/// Feature: entries that expire ([`Cache::set_with_ttl`]).
pub const TTL: &str = "ttl";
/// Feature: atomic integer counters ([`Cache::increment`]).
pub const INCREMENT: &str = "increment";
/// Feature: several keys in one round trip ([`Cache::get_many`], [`Cache::set_many`],
/// [`Cache::delete_many`]).
pub const BULK: &str = "bulk";
/// Every optional feature a cache driver may declare.
pub const FEATURES: &[&str] = &[TTL, INCREMENT, BULK];
/// Every required operation: never a feature.
pub const REQUIRED_OPERATIONS: &[&str] = &["get", "set", "delete"];

/// A shared cache of byte values under string keys.
///
/// Keys are non-empty UTF-8 strings of any length a driver can store; values are arbitrary
/// bytes, including empty. A cache may forget an entry at any time (capacity, eviction, expiry);
/// it never returns a value that was overwritten or deleted before the call began.
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
#[async_trait]
pub trait Cache: Send + Sync {
    /// The value under `key`, or `None` when there is none.
    ///
    /// # Errors
    /// `InvalidInput` for an empty key; `Unavailable`/`Timeout` when the backend fails;
    /// `Stopped` after the driver stopped.
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>>;

    /// Store `value` under `key`, replacing any value (and clearing any expiry).
    ///
    /// # Errors
    /// As [`get`](Cache::get).
    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()>;

    /// Remove `key`; `true` when there was a value.
    ///
    /// # Errors
    /// As [`get`](Cache::get).
    async fn delete(&self, key: &str) -> InfraResult<bool>;

    /// Store `value` under `key` for `ttl`; afterwards `get` answers `None`. Feature [`TTL`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; `InvalidInput` for a zero `ttl`; else as `set`.
    async fn set_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> InfraResult<()> {
        let _ = (key, value, ttl);
        Err(InfraError::unsupported(NAME, "set_with_ttl", TTL))
    }

    /// Add `delta` to the signed 64-bit counter under `key` (absent counts as 0) and return the
    /// new value, atomically across all callers. Feature [`INCREMENT`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; `Conflict` when the value is not a counter written
    /// by `increment`, or on overflow.
    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        let _ = (key, delta);
        Err(InfraError::unsupported(NAME, "increment", INCREMENT))
    }

    /// The values of `keys`, in the same order. Feature [`BULK`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; else as `get`.
    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        let _ = keys;
        Err(InfraError::unsupported(NAME, "get_many", BULK))
    }

    /// Store every entry. Feature [`BULK`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; else as `set`.
    async fn set_many(&self, entries: &[(&str, Bytes)]) -> InfraResult<()> {
        let _ = entries;
        Err(InfraError::unsupported(NAME, "set_many", BULK))
    }

    /// Remove every key; returns how many had a value. Feature [`BULK`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; else as `delete`.
    async fn delete_many(&self, keys: &[&str]) -> InfraResult<u64> {
        let _ = keys;
        Err(InfraError::unsupported(NAME, "delete_many", BULK))
    }
}
