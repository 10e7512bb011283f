//! `lock.redis`: the [`Lock`] operations on Redis, one Lua script each ([`scripts`]), and the
//! provider declaration. The lifecycle is the crate's shared [`Connection`].

mod options;
mod scripts;

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt as _;
use sandloom_driverkit::lock::{Lease, LockOps, LockProvider, NAME};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::connection::Connection;
use crate::errors;
use crate::provider::ttl_ms;

pub use options::RedisLockOptions;

/// What the grant script answered: the fence of a new lease, or how long the holder's lasts.
enum Grant {
    Granted(u64),
    /// The holder's lease ends in this many milliseconds; `None` when it has no expiry.
    Held(Option<u64>),
}

/// The `lock.redis` driver: fenced leases on a Redis server (or Valkey).
///
/// Each operation is one Lua script (`EVALSHA`, loaded on first use): `acquire` checks the
/// lease key, mints the fence (`INCR` of the lock's counter) and writes the lease with
/// `SET … PX` in one step; `release` and `refresh` compare the stored `{fence}:{token}` before
/// they delete or re-expire it. Expiry is the server's. `acquire_wait` subscribes to the lock's
/// release channel, which the release script publishes to, and sleeps until a release, the
/// holder's expiry (its `PTTL`) or its timeout. No optional features. See the crate README for
/// what the fences survive and the clock's limits.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::lock::Lock;
/// use sandloom_driver_redis::{RedisLock, RedisLockOptions};
///
/// #[tokio::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let lock = RedisLock::from_options(RedisLockOptions::default())?;
///     lock.start().await?;
///     let ttl = Duration::from_secs(30);
///     if let Some(lease) = lock.acquire_wait("nightly", ttl, Duration::from_secs(5)).await? {
///         // Hand `lease.fence` to the resource: it refuses writes with an older fence.
///         println!("fence {}", lease.fence);
///         lock.release(&lease).await?;
///     }
///     lock.stop().await?;
///     Ok(())
/// }
/// ```
pub struct RedisLock {
    connection: Connection,
    /// `"{prefix}:"`.
    prefix: String,
    /// Woken by `stop`, so waiters end at once.
    stopped: Notify,
    /// Per-process part of the tokens, and their counter.
    salt: u64,
    issued: AtomicU64,
}

impl fmt::Debug for RedisLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLock")
            .field("address", &self.connection.address())
            .field("prefix", &self.prefix)
            .field("state", &self.connection.state_name())
            .finish_non_exhaustive()
    }
}

fn check_name(name: &str) -> InfraResult<()> {
    if name.is_empty() {
        return Err(InfraError::invalid_input(
            NAME,
            "lock names must not be empty",
        ));
    }
    Ok(())
}

/// `ttl` as the scripts take it: whole milliseconds rounded up, or empty for no expiry (a
/// ttl longer than Redis holds: as long as possible).
fn ttl_arg(ttl: Duration) -> InfraResult<String> {
    if ttl.is_zero() {
        return Err(InfraError::invalid_input(
            NAME,
            "the lease ttl must not be zero",
        ));
    }
    Ok(ttl_ms(ttl).map(|ms| ms.to_string()).unwrap_or_default())
}

/// The caller's view of when a lease of `ttl` ends (the server's expiry decides).
fn expires_at(ttl: Duration) -> SystemTime {
    const LONGEST: Duration = Duration::from_hours(1000 * 365 * 24);
    SystemTime::now()
        .checked_add(ttl.min(LONGEST))
        .unwrap_or(SystemTime::UNIX_EPOCH + LONGEST)
}

impl RedisLock {
    fn lease_key(&self, name: &str) -> String {
        format!("{}lock:{name}", self.prefix)
    }

    fn fence_key(&self, name: &str) -> String {
        format!("{}fence:{name}", self.prefix)
    }

    fn channel(&self, name: &str) -> String {
        format!("{}released:{name}", self.prefix)
    }

    fn new_token(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let random = RandomState::new().hash_one((n, SystemTime::now()));
        format!("{:016x}{random:016x}{n:x}", self.salt)
    }

    /// One run of the grant script.
    async fn grant(&self, name: &str, token: &str, ttl: &str) -> InfraResult<Grant> {
        let mut connection = self.connection.manager()?;
        let (granted, value): (u8, i64) = scripts::GRANT
            .key(self.lease_key(name))
            .key(self.fence_key(name))
            .arg(token)
            .arg(ttl)
            .invoke_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "acquire", err))?;
        Ok(match (granted, u64::try_from(value)) {
            (1, Ok(fence)) => Grant::Granted(fence),
            (1, Err(_)) => {
                return Err(InfraError::new(
                    ErrorKind::Backend,
                    NAME,
                    format!("the fence counter of {name:?} answered {value}"),
                ));
            }
            (_, pttl) => Grant::Held(pttl.ok()),
        })
    }

    /// Try once; the lease, or in how many milliseconds the holder's ends (`None`: never).
    async fn try_acquire(
        &self,
        name: &str,
        ttl: Duration,
    ) -> InfraResult<Result<Lease, Option<u64>>> {
        check_name(name)?;
        let ttl_arg = ttl_arg(ttl)?;
        let token = self.new_token();
        Ok(match self.grant(name, &token, &ttl_arg).await? {
            Grant::Granted(fence) => Ok(Lease::new(name, token, fence, expires_at(ttl))),
            Grant::Held(pttl) => Err(pttl),
        })
    }

    /// A connection subscribed to the release channel of `name`, opened within the connect
    /// timeout.
    async fn subscribe(&self, name: &str) -> InfraResult<redis::aio::PubSub> {
        let client = self.connection.client()?;
        let limit = self.connection.endpoint().connect_timeout();
        let subscribed = tokio::time::timeout(limit, async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(self.channel(name)).await?;
            Ok::<_, redis::RedisError>(pubsub)
        })
        .await
        .map_err(|_| {
            InfraError::new(
                ErrorKind::Timeout,
                NAME,
                format!(
                    "no notification connection to Redis at {} within `connect_timeout_ms`",
                    self.connection.address()
                ),
            )
        })?;
        subscribed.map_err(|err| errors::operation(NAME, "SUBSCRIBE", err))
    }
}

impl LockOps for RedisLock {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        Ok(self.try_acquire(name, ttl).await?.ok())
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        let deadline = Instant::now().checked_add(timeout);
        // The common case first: a free lock needs no notification connection.
        if let Ok(lease) = self.try_acquire(name, ttl).await? {
            return Ok(Some(lease));
        }
        if deadline.is_some_and(|deadline| deadline <= Instant::now()) {
            return Ok(None);
        }
        // Subscribed before the next try, so a release between the try and the wait is heard.
        let mut pubsub = self.subscribe(name).await?;
        let mut released = pubsub.on_message();
        loop {
            // Registered before the try, as the subscription is: a `stop` in between is heard.
            let stopped = self.stopped.notified();
            tokio::pin!(stopped);
            stopped.as_mut().enable();
            let holder_ends = match self.try_acquire(name, ttl).await? {
                Ok(lease) => return Ok(Some(lease)),
                Err(pttl) => pttl.map(|ms| Instant::now() + Duration::from_millis(ms)),
            };
            let now = Instant::now();
            if deadline.is_some_and(|deadline| deadline <= now) {
                return Ok(None);
            }
            let wake = match (deadline, holder_ends) {
                (Some(deadline), Some(end)) => Some(deadline.min(end)),
                (one, other) => one.or(other),
            };
            let sleep = async {
                match wake {
                    Some(wake) => tokio::time::sleep_until(wake).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                message = released.next() => {
                    if message.is_none() {
                        return Err(InfraError::unavailable(
                            NAME,
                            "the notification connection to Redis dropped while waiting",
                        ));
                    }
                }
                () = sleep => {}
                () = stopped => return Err(InfraError::stopped(NAME)),
            }
        }
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        let mut connection = self.connection.manager()?;
        check_name(&lease.name)?;
        let released: u8 = scripts::RELEASE
            .key(self.lease_key(&lease.name))
            .arg(format!("{}:{}", lease.fence, lease.token))
            .arg(self.channel(&lease.name))
            .invoke_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "release", err))?;
        Ok(released == 1)
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        let mut connection = self.connection.manager()?;
        check_name(&lease.name)?;
        let ttl_arg = ttl_arg(ttl)?;
        let refreshed: u8 = scripts::REFRESH
            .key(self.lease_key(&lease.name))
            .arg(format!("{}:{}", lease.fence, lease.token))
            .arg(ttl_arg)
            .invoke_async(&mut connection)
            .await
            .map_err(|err| errors::operation(NAME, "refresh", err))?;
        if refreshed != 1 {
            return Err(lease.lost());
        }
        Ok(lease.refreshed(expires_at(ttl)))
    }
}

impl Driver for RedisLock {
    type Options = RedisLockOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn validate(options: &RedisLockOptions) -> Result<(), DriverError> {
        options
            .check()
            .map(|_| ())
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: RedisLockOptions) -> Result<Self, DriverError> {
        let info = options.check()?;
        Ok(Self {
            connection: Connection::new("lock.redis", NAME, options.endpoint(), info),
            prefix: format!("{}:", options.prefix),
            stopped: Notify::new(),
            salt: RandomState::new().hash_one(std::process::id()),
            issued: AtomicU64::new(0),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        self.connection.start().await
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.connection.stop();
        self.stopped.notify_waiters();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.connection.health().await
    }
}

impl LockProvider for RedisLock {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_are_whole_milliseconds_rounded_up_or_none_for_the_longest() {
        assert_eq!(ttl_arg(Duration::from_micros(1)).unwrap(), "1");
        assert_eq!(ttl_arg(Duration::from_micros(1500)).unwrap(), "2");
        assert_eq!(ttl_arg(Duration::MAX).unwrap(), "");
        assert_eq!(
            ttl_arg(Duration::ZERO).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }

    #[tokio::test]
    async fn operations_before_start_are_unavailable_and_after_stop_stopped() {
        let lock = RedisLock::from_options(RedisLockOptions::default()).unwrap();
        let ttl = Duration::from_secs(1);
        let err = lock.acquire("a", ttl).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        lock.stop().await.unwrap();
        let lease = Lease::new("a", "t", 1, SystemTime::now());
        assert_eq!(
            lock.acquire("a", ttl).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.acquire_wait("a", ttl, ttl).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.release(&lease).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.refresh(&lease, ttl).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert!(lock.start().await.is_err());
        assert!(format!("{lock:?}").contains("stopped"));
    }

    #[test]
    fn keys_and_channels_live_under_the_prefix_and_tokens_differ() {
        let lock = RedisLock::from_options(RedisLockOptions {
            prefix: "shop".to_owned(),
            ..RedisLockOptions::default()
        })
        .unwrap();
        assert_eq!(lock.lease_key("job"), "shop:lock:job");
        assert_eq!(lock.fence_key("job"), "shop:fence:job");
        assert_eq!(lock.channel("job"), "shop:released:job");
        assert_ne!(lock.new_token(), lock.new_token());
    }
}
