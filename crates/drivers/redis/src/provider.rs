//! `cache.redis`: the [`Cache`] operations and the provider declaration (the lifecycle is the
//! crate's shared [`Connection`]).

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use redis::aio::ConnectionManager;
use sandloom_driverkit::cache::{BULK, CacheOps, CacheProvider, INCREMENT, NAME, TTL};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use crate::connection::Connection;
use crate::{RedisCacheOptions, errors};

/// The longest expiry handed to Redis, in milliseconds (about 146 million years); a longer
/// `ttl` is stored without expiry, since Redis refuses expiry times past `i64` milliseconds.
const MAX_TTL_MS: u64 = i64::MAX as u64 / 2;

/// The `cache.redis` driver: a [`Cache`](sandloom_driverkit::cache::Cache) on a Redis server (or Valkey, or anything that speaks
/// the same commands), through the `redis` crate's connection manager.
///
/// Features: `ttl`, `increment`, `bulk`. One multiplexed connection serves every caller; when
/// it drops, the call that notices fails with `Unavailable` and the next call reconnects. See
/// the [crate documentation](crate) for the key layout, counters and error kinds.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::cache::Cache;
/// use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
///
/// #[tokio::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let cache = RedisCache::from_options(RedisCacheOptions {
///         prefix: Some("shop".to_owned()), // stored as `shop:greeting`
///         ..RedisCacheOptions::default()
///     })?;
///     cache.start().await?; // connects and PINGs within `connect_timeout_ms`
///     cache.set("greeting", "hello".into()).await?;
///     assert_eq!(cache.get("greeting").await?.as_deref(), Some(&b"hello"[..]));
///     cache.set_with_ttl("session", "ada".into(), Duration::from_mins(1)).await?;
///     assert_eq!(cache.increment("visits", 1).await?, 1);
///     cache.stop().await?;
///     Ok(())
/// }
/// ```
pub struct RedisCache {
    options: RedisCacheOptions,
    connection: Connection,
    /// `"{prefix}:"`, prepended to every key, when a prefix is configured.
    key_prefix: Option<String>,
}

impl fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCache")
            .field("address", &self.connection.address())
            .field("prefix", &self.options.prefix)
            .field("default_ttl_ms", &self.options.default_ttl_ms)
            .field("state", &self.connection.state_name())
            .finish_non_exhaustive()
    }
}

/// `ttl` in whole milliseconds, rounded up so a sub-millisecond ttl still expires; `None` when
/// it is longer than Redis can represent (stored without expiry).
pub(crate) fn ttl_ms(ttl: Duration) -> Option<u64> {
    let ms = ttl.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).ok().filter(|&ms| ms <= MAX_TTL_MS)
}

/// `SET key value [PX ms]`: replaces the value and any expiry.
fn set_command(key: &str, value: &[u8], ttl_ms: Option<u64>) -> redis::Cmd {
    let mut cmd = redis::cmd("SET");
    cmd.arg(key).arg(value);
    if let Some(ms) = ttl_ms {
        cmd.arg("PX").arg(ms);
    }
    cmd
}

impl RedisCache {
    /// The shared connection, or why there is none.
    fn connection(&self) -> InfraResult<ConnectionManager> {
        self.connection.manager()
    }

    /// The Redis key of `key`: refused when empty, prefixed when a prefix is configured.
    fn key<'k>(&self, key: &'k str) -> InfraResult<Cow<'k, str>> {
        if key.is_empty() {
            return Err(InfraError::invalid_input(
                NAME,
                "cache keys must not be empty",
            ));
        }
        Ok(match &self.key_prefix {
            None => Cow::Borrowed(key),
            Some(prefix) => Cow::Owned(format!("{prefix}{key}")),
        })
    }

    fn keys<'k>(&self, keys: &[&'k str]) -> InfraResult<Vec<Cow<'k, str>>> {
        keys.iter().map(|key| self.key(key)).collect()
    }

    fn default_ttl_ms(&self) -> Option<u64> {
        self.options.default_ttl_ms
    }
}

impl CacheOps for RedisCache {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        let mut connection = self.connection()?;
        let key = self.key(key)?;
        redis::cmd("GET")
            .arg(&*key)
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "GET", err))
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        let mut connection = self.connection()?;
        let key = self.key(key)?;
        set_command(&key, &value, self.default_ttl_ms())
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "SET", err))
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        let mut connection = self.connection()?;
        let key = self.key(key)?;
        let removed: u64 = redis::cmd("DEL")
            .arg(&*key)
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "DEL", err))?;
        Ok(removed > 0)
    }

    async fn set_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> InfraResult<()> {
        let mut connection = self.connection()?;
        let key = self.key(key)?;
        if ttl.is_zero() {
            return Err(InfraError::invalid_input(NAME, "the ttl must not be zero"));
        }
        set_command(&key, &value, ttl_ms(ttl))
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "SET", err))
    }

    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        let mut connection = self.connection()?;
        let redis_key = self.key(key)?;
        let counted = match self.default_ttl_ms() {
            None => {
                redis::cmd("INCRBY")
                    .arg(&*redis_key)
                    .arg(delta)
                    .query_async::<i64>(&mut connection)
                    .await
            }
            // A new counter gets the default expiry: create it at 0 with that expiry unless it
            // exists, then add, in one transaction so no caller sees it without its expiry.
            Some(ms) => redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(&*redis_key)
                .arg(0)
                .arg("NX")
                .arg("PX")
                .arg(ms)
                .ignore()
                .cmd("INCRBY")
                .arg(&*redis_key)
                .arg(delta)
                .query_async::<(i64,)>(&mut connection)
                .await
                .map(|(value,)| value),
        };
        counted.map_err(|err| errors::increment(key, delta, err))
    }

    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        let mut connection = self.connection()?;
        let keys = self.keys(keys)?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        redis::cmd("MGET")
            .arg(&keys[..])
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "MGET", err))
    }

    async fn set_many(&self, entries: &[(&str, Bytes)]) -> InfraResult<()> {
        let mut connection = self.connection()?;
        let keys: Vec<Cow<'_, str>> = entries
            .iter()
            .map(|(key, _)| self.key(key))
            .collect::<InfraResult<_>>()?;
        if entries.is_empty() {
            return Ok(());
        }
        match self.default_ttl_ms() {
            None => {
                let mut cmd = redis::cmd("MSET");
                for (key, (_, value)) in keys.iter().zip(entries) {
                    cmd.arg(&**key).arg(&value[..]);
                }
                cmd.query_async(&mut connection)
                    .await
                    .map_err(|err| errors::operation(NAME, "MSET", err))
            }
            // MSET cannot give an expiry: one `SET … PX` per entry, in one round trip.
            Some(ms) => {
                let mut pipe = redis::pipe();
                for (key, (_, value)) in keys.iter().zip(entries) {
                    pipe.add_command(set_command(key, value, Some(ms))).ignore();
                }
                pipe.query_async(&mut connection)
                    .await
                    .map_err(|err| errors::operation(NAME, "SET (pipelined)", err))
            }
        }
    }

    async fn delete_many(&self, keys: &[&str]) -> InfraResult<u64> {
        let mut connection = self.connection()?;
        let keys = self.keys(keys)?;
        if keys.is_empty() {
            return Ok(0);
        }
        redis::cmd("DEL")
            .arg(&keys[..])
            .query_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "DEL", err))
    }
}

impl Driver for RedisCache {
    type Options = RedisCacheOptions;

    fn supported_features() -> &'static [&'static str] {
        &[TTL, INCREMENT, BULK]
    }

    fn validate(options: &RedisCacheOptions) -> Result<(), DriverError> {
        options
            .check()
            .map(|_| ())
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: RedisCacheOptions) -> Result<Self, DriverError> {
        let info = options.check()?;
        Ok(Self {
            connection: Connection::new("cache.redis", NAME, options.endpoint(), info),
            key_prefix: options.prefix.as_ref().map(|prefix| format!("{prefix}:")),
            options,
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        self.connection.start().await
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.connection.stop();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.connection.health().await
    }
}

impl CacheProvider for RedisCache {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use sandloom_driverkit::sdk::ErrorKind;

    use super::*;

    #[test]
    fn ttls_round_up_to_milliseconds_and_cap_at_what_redis_accepts() {
        assert_eq!(ttl_ms(Duration::from_micros(1)), Some(1));
        assert_eq!(ttl_ms(Duration::from_millis(300)), Some(300));
        assert_eq!(ttl_ms(Duration::from_micros(1500)), Some(2));
        assert_eq!(ttl_ms(Duration::MAX), None);
    }

    #[tokio::test]
    async fn operations_before_start_are_unavailable_and_after_stop_stopped() {
        let cache = RedisCache::from_options(RedisCacheOptions::default()).unwrap();
        let err = cache.get("k").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(!cache.health().await.is_healthy());
        cache.stop().await.unwrap();
        assert_eq!(cache.get("k").await.unwrap_err().kind(), ErrorKind::Stopped);
        assert_eq!(
            cache.increment("k", 1).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert!(cache.start().await.is_err());
        assert!(format!("{cache:?}").contains("stopped"));
    }

    #[tokio::test]
    async fn keys_are_prefixed_and_empty_keys_refused() {
        let cache = RedisCache::from_options(RedisCacheOptions {
            prefix: Some("shop".to_owned()),
            ..RedisCacheOptions::default()
        })
        .unwrap();
        assert_eq!(cache.key("cart:1").unwrap(), "shop:cart:1");
        assert_eq!(cache.key("").unwrap_err().kind(), ErrorKind::InvalidInput);
        let plain = RedisCache::from_options(RedisCacheOptions::default()).unwrap();
        assert!(matches!(plain.key("k").unwrap(), Cow::Borrowed("k")));
    }
}
