//! The `cache.memory` driver: moka's `sync::Cache` underneath, expiry per entry.
//!
//! The `sync` cache, not moka's `future` one: every operation here is a short critical section
//! that never waits on I/O, so it runs to completion on the calling thread and the operation's
//! future holds only its arguments (tens of bytes, where `future::Cache` kept up to 1.8 KiB; see
//! the design note `docs/src/contributing/inline-futures.md`). Moka 0.12 starts no thread of its
//! own: its maintenance (eviction, expiry) runs on the callers' threads, a bounded batch at a
//! time, so there is nothing to stop at `stop` besides dropping the entries.

use crate::serving::Serving;
use moka::Expiry;
use moka::ops::compute::{CompResult, Op};
use moka::sync::Cache as MokaCache;
use sandloom_driverkit::cache::{BULK, CacheOps, CacheProvider, INCREMENT, NAME, TTL};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use std::time::{Duration, Instant};

use super::options::MemoryCacheOptions;

/// When a stored entry expires, as the [`Expiry`] policy reads it.
#[derive(Debug, Clone)]
struct Entry {
    value: Bytes,
    /// When the entry expires (`None`: never). Absolute, so an `increment` can carry the
    /// deadline of the counter it replaces over exactly.
    expires_at: Option<Instant>,
}

struct EntryExpiry;

impl EntryExpiry {
    fn remaining(entry: &Entry, now: Instant) -> Option<Duration> {
        entry
            .expires_at
            .map(|deadline| deadline.saturating_duration_since(now))
    }
}

impl Expiry<String, Entry> for EntryExpiry {
    fn expire_after_create(&self, _key: &String, entry: &Entry, at: Instant) -> Option<Duration> {
        Self::remaining(entry, at)
    }

    fn expire_after_update(
        &self,
        _key: &String,
        entry: &Entry,
        at: Instant,
        _remaining: Option<Duration>,
    ) -> Option<Duration> {
        Self::remaining(entry, at)
    }
}

/// The deadline `ttl` from now (`None` for no ttl, or one too far to represent: never).
fn deadline(ttl: Option<Duration>) -> Option<Instant> {
    ttl.and_then(|ttl| Instant::now().checked_add(ttl))
}

/// The `cache.memory` driver: a cache inside the process, lost when it exits.
///
/// Features: `ttl`, `increment`, `bulk`. Every write of a key is serialized with the other
/// writes of that key, so [`increment`](sandloom_driverkit::cache::Cache::increment) is atomic across concurrent callers.
/// No operation awaits: each runs on the calling thread and returns; a write of a key that
/// another thread is writing waits, holding its thread, for that write (a parse and a store,
/// no I/O) to finish.
/// A counter is stored as the canonical decimal ASCII of an `i64` (`get` answers `b"5"`); a
/// value that is not exactly such a number (`"05"`, `"+5"`, `" 5"`, `"abc"`) is not a counter.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::cache::Cache;
/// use sandloom_embedded::{MemoryCache, MemoryCacheOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let cache = MemoryCache::from_options(MemoryCacheOptions::default()).unwrap();
///     cache.set("greeting", "hello".into()).await.unwrap();
///     assert_eq!(cache.get("greeting").await.unwrap().as_deref(), Some(&b"hello"[..]));
///     assert_eq!(cache.increment("visits", 5).await.unwrap(), 5);
///     assert_eq!(cache.get("visits").await.unwrap().as_deref(), Some(&b"5"[..]));
/// }
/// ```
pub struct MemoryCache {
    entries: MokaCache<String, Entry>,
    default_ttl: Option<Duration>,
    serving: Serving,
}

impl std::fmt::Debug for MemoryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryCache")
            .field("entries", &self.entries.entry_count())
            .field("default_ttl", &self.default_ttl)
            .field("serving", &self.serving)
            .finish()
    }
}

fn check_key(key: &str) -> InfraResult<()> {
    if key.is_empty() {
        Err(InfraError::invalid_input(
            NAME,
            "cache keys must not be empty",
        ))
    } else {
        Ok(())
    }
}

/// The counter stored in `value`, if it is the canonical decimal form of an `i64`.
fn parse_counter(value: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(value).ok()?;
    let number: i64 = text.parse().ok()?;
    (number.to_string() == text).then_some(number)
}

impl MemoryCache {
    fn store(&self, key: &str, value: Bytes, expires_at: Option<Instant>) {
        let entry = Entry { value, expires_at };
        // Writes go through `and_compute_with`, which serializes them per key with `increment`.
        self.entries
            .entry_by_ref(key)
            .and_compute_with(|_| Op::Put(entry));
    }

    /// Remove `key`; whether it had a value. Moka evicts lazily: an entry whose ttl passed is
    /// handed to the closure as absent, yet still reported `Removed`, so only the closure's
    /// view tells whether there was a value.
    fn remove(&self, key: &str) -> bool {
        let mut had_value = false;
        let result = self.entries.entry_by_ref(key).and_compute_with(|current| {
            had_value = current.is_some();
            Op::<Entry>::Remove
        });
        had_value && matches!(result, CompResult::Removed(_))
    }

    /// Add `delta` to the counter under `key` (0 when absent), keeping its expiry; one
    /// `and_compute_with`, so no other write of `key` comes between the read and the write.
    fn add(&self, key: &str, delta: i64) -> InfraResult<i64> {
        let mut outcome: InfraResult<i64> =
            Err(InfraError::conflict(NAME, "increment did not run"));
        self.entries.entry_by_ref(key).and_compute_with(|current| {
            let (base, expires_at) = match current {
                None => (Some(0), deadline(self.default_ttl)),
                Some(entry) => (
                    parse_counter(&entry.value().value),
                    entry.value().expires_at,
                ),
            };
            match base {
                None => {
                    outcome = Err(InfraError::conflict(
                        NAME,
                        format!("the value under {key:?} is not a counter"),
                    ));
                    Op::Nop
                }
                Some(base) => match base.checked_add(delta) {
                    None => {
                        outcome = Err(InfraError::conflict(
                            NAME,
                            format!("incrementing {key:?} by {delta} overflows an i64"),
                        ));
                        Op::Nop
                    }
                    Some(next) => {
                        outcome = Ok(next);
                        Op::Put(Entry {
                            value: Bytes::from(next.to_string()),
                            expires_at,
                        })
                    }
                },
            }
        });
        outcome
    }
}

impl CacheOps for MemoryCache {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        self.serving.check(NAME)?;
        check_key(key)?;
        Ok(self.entries.get(key).map(|entry| entry.value))
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        self.serving.check(NAME)?;
        check_key(key)?;
        self.store(key, value, deadline(self.default_ttl));
        Ok(())
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        self.serving.check(NAME)?;
        check_key(key)?;
        Ok(self.remove(key))
    }

    async fn set_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> InfraResult<()> {
        self.serving.check(NAME)?;
        check_key(key)?;
        if ttl.is_zero() {
            return Err(InfraError::invalid_input(NAME, "the ttl must not be zero"));
        }
        self.store(key, value, deadline(Some(ttl)));
        Ok(())
    }

    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        self.serving.check(NAME)?;
        check_key(key)?;
        self.add(key, delta)
    }

    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        self.serving.check(NAME)?;
        keys.iter().try_for_each(|key| check_key(key))?;
        Ok(keys
            .iter()
            .map(|key| self.entries.get(*key).map(|entry| entry.value))
            .collect())
    }

    async fn set_many(&self, entries: &[(&str, Bytes)]) -> InfraResult<()> {
        self.serving.check(NAME)?;
        entries.iter().try_for_each(|(key, _)| check_key(key))?;
        for (key, value) in entries {
            self.store(key, value.clone(), deadline(self.default_ttl));
        }
        Ok(())
    }

    async fn delete_many(&self, keys: &[&str]) -> InfraResult<u64> {
        self.serving.check(NAME)?;
        keys.iter().try_for_each(|key| check_key(key))?;
        Ok(keys.iter().map(|key| u64::from(self.remove(key))).sum())
    }
}

impl Driver for MemoryCache {
    type Options = MemoryCacheOptions;

    fn supported_features() -> &'static [&'static str] {
        &[TTL, INCREMENT, BULK]
    }

    fn validate(options: &MemoryCacheOptions) -> Result<(), DriverError> {
        if options.capacity == 0 {
            return Err(DriverError::new("must be at least 1").at_option("capacity"));
        }
        if options.default_ttl_ms == Some(0) {
            return Err(DriverError::new("must be at least 1").at_option("default_ttl_ms"));
        }
        Ok(())
    }

    fn from_options(options: MemoryCacheOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        let default_ttl = options.default_ttl_ms.map(Duration::from_millis);
        let entries = MokaCache::builder()
            .max_capacity(options.capacity)
            .expire_after(EntryExpiry)
            .build();
        Ok(Self {
            entries,
            default_ttl,
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        self.entries.invalidate_all();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl CacheProvider for MemoryCache {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests;
