//! Sandloom drivers `cache.redis`, a [`Cache`](sandloom_driverkit::cache::Cache) on Redis, and
//! `lock.redis`, a fenced [`Lock`](sandloom_driverkit::lock::Lock) ([`RedisLock`]), through the `redis` crate's connection manager, with TLS for `rediss://` URLs.
//! The lock's keys, scripts, and what its fences survive: [`RedisLock`] and the crate README.
//!
//! ## Using it
//!
//! Link it in the application with `sandloom::link_drivers!(sandloom_embedded,
//! sandloom_driver_redis)` and select it in `INFRA`:
//!
//! ```toml
//! [cache.default]
//! driver = "redis"
//! url = "redis://127.0.0.1:6379/0"   # password: SANDLOOM__CACHE__DEFAULT__URL=redis://:…@host
//! prefix = "shop"
//! ```
//!
//! Every option is described on [`RedisCacheOptions`]: `url`, `prefix`, `connect_timeout_ms`,
//! `response_timeout_ms`, `default_ttl_ms`, `tls_ca_file`.
//!
//! ## What it does
//!
//! - **Features**: `ttl` (`SET … PX`), `increment` (`INCRBY`), `bulk` (`MGET`, `MSET` or
//!   pipelined `SET … PX`, multi-key `DEL`), each in one round trip.
//! - **Keys**: stored as given, or as `{prefix}:{key}` when `prefix` is set, so instances and
//!   applications can share a database without seeing each other's keys. Keys are binary-safe
//!   in Redis: any non-empty UTF-8 key works; an empty key is `InvalidInput`.
//! - **Expiry**: `set_with_ttl` stores with a millisecond expiry (rounded up); a plain `set`
//!   clears any expiry, or applies `default_ttl_ms` when configured.
//! - **Counters**: a counter is the canonical decimal text of an `i64`, as Redis stores it
//!   (`get` answers `b"5"`). `increment` of a value that is not such a number (`"abc"`,
//!   `"05"`, `" 5"`), of a key of another Redis type (a list, a hash), or past the `i64` range
//!   answers `Conflict`, and the value is unchanged. An existing counter keeps its expiry; a
//!   new one gets `default_ttl_ms`, atomically (`MULTI`: `SET NX PX` + `INCRBY`).
//! - **Lifecycle**: [`from_options`](sandloom_driverkit::Driver::from_options) only parses;
//!   `start` connects and PINGs within `connect_timeout_ms` and otherwise fails naming the
//!   address with its user-info redacted (`redis://***@host:6379/0`); `stop` closes the
//!   connection and later calls answer `Stopped`; `health` PINGs.
//! - **Reconnecting**: one multiplexed connection serves every caller. When it drops, the
//!   calls in flight fail with `Unavailable` and the next call reconnects; while the server is
//!   down each call fails at once (no retry loop inside a call).
//!
//! ## Error kinds
//!
//! | what happened | kind |
//! |---|---|
//! | connection refused, dropped or reset, TLS failure, no connection yet | `Unavailable` |
//! | no answer within `response_timeout_ms`, no connection within `connect_timeout_ms` | `Timeout` |
//! | server loading, out of memory (`OOM`), read-only replica, cluster down | `Unavailable` |
//! | `increment` of a value that is not a counter, or overflow | `Conflict` |
//! | authentication, permissions, a key of another Redis type for `get`/`set` | `Backend` |
//!
//! ```no_run
//! use sandloom_driverkit::Driver;
//! use sandloom_driverkit::cache::Cache;
//! use sandloom_driverkit::sdk::ErrorKind;
//! use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cache = RedisCache::from_options(RedisCacheOptions::default())?;
//! cache.start().await?;
//! match cache.get("greeting").await {
//!     Ok(value) => println!("{value:?}"),
//!     Err(err) if err.kind().is_retryable() => println!("Redis is away for now: {err}"),
//!     Err(err) => return Err(err.into()),
//! }
//! cache.set("greeting", "hello".into()).await?;
//! assert_eq!(cache.increment("greeting", 1).await.unwrap_err().kind(), ErrorKind::Conflict);
//! # Ok(()) }
//! ```

mod address;
mod client;
mod connection;
mod errors;
mod lock;
mod options;
mod provider;

pub use lock::{RedisLock, RedisLockOptions};
pub use options::RedisCacheOptions;
pub use provider::RedisCache;

sandloom_driverkit::register_driver!(cache, "redis", RedisCache);
sandloom_driverkit::register_driver!(lock, "redis", RedisLock);
