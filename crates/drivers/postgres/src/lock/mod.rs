//! `lock.postgres`: the [`Lock`] operations on a lease table ([`sql`]), the lifecycle (the
//! crate's shared [`Backend`]) and the provider declaration.

mod options;
mod sql;

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt as _;
use sandloom_driverkit::lock::{Lease, LockOps, LockProvider, NAME};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version, error_chain};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::backend::Backend;
use crate::errors;
use crate::provider::millis;

pub use options::PostgresLockOptions;
use sql::LockSql;

/// Longest lock name, in bytes: names are index keys.
const MAX_NAME_LEN: usize = 1024;

/// The `lock.postgres` driver: fenced leases in one PostgreSQL table (not advisory locks, which
/// a transaction-mode pooler loses and which give no token).
///
/// `acquire` is one statement that takes the name's row only when its lease was released or
/// has expired (by the server's `now()`) and increments the row's fence in the same statement;
/// `release` and `refresh` match the token and the fence. The row of a name stays after its
/// release as the name's fence counter, so fences survive restarts of the server and of the
/// application. `acquire_wait` listens on the table's channel, which `release` notifies
/// (`pg_notify`), and sleeps until a release of its lock, the holder's expiry or its timeout.
/// `start` creates the table under the crate's migration lock. No optional features.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::lock::Lock;
/// use sandloom_driver_postgres::{PostgresLock, PostgresLockOptions};
///
/// #[tokio::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let lock = PostgresLock::from_options(PostgresLockOptions::default())?;
///     lock.start().await?; // creates `sandloom_locks` when missing
///     let ttl = Duration::from_secs(30);
///     if let Some(lease) = lock.acquire_wait("nightly", ttl, Duration::from_secs(5)).await? {
///         // In the protected table: `UPDATE report SET …, fence = $1 WHERE fence < $1`.
///         println!("fence {}", lease.fence);
///         lock.release(&lease).await?;
///     }
///     lock.stop().await?;
///     Ok(())
/// }
/// ```
pub struct PostgresLock {
    backend: Backend,
    namespace: String,
    sql: LockSql,
    /// Woken by `stop`, so waiters end at once.
    stopped: Notify,
    salt: u64,
    issued: AtomicU64,
}

impl fmt::Debug for PostgresLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresLock")
            .field("server", &self.backend.target().redacted())
            .field("table", &self.sql.table())
            .field("namespace", &self.namespace)
            .field("stopped", &self.backend.is_stopped())
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
    if name.len() > MAX_NAME_LEN || name.contains('\0') {
        return Err(InfraError::invalid_input(
            NAME,
            format!("lock names are at most {MAX_NAME_LEN} bytes, without NUL characters"),
        ));
    }
    Ok(())
}

/// `ttl` in milliseconds as stored (rounded up, at most a hundred years).
fn ttl_ms(ttl: Duration) -> InfraResult<i64> {
    if ttl.is_zero() {
        return Err(InfraError::invalid_input(
            NAME,
            "the lease ttl must not be zero",
        ));
    }
    Ok(millis(ttl))
}

/// The caller's view of when a lease of `ms` ends (the server's `now()` decides).
fn expires_at(ms: i64) -> SystemTime {
    SystemTime::now() + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

impl PostgresLock {
    fn new_token(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let random = RandomState::new().hash_one((n, SystemTime::now()));
        format!("{:016x}{random:016x}{n:x}", self.salt)
    }

    /// Try once: the lease, or `None` when held.
    async fn try_acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        self.backend.running()?;
        check_name(name)?;
        let ms = ttl_ms(ttl)?;
        let token = self.new_token();
        let statement = &self.sql.grant;
        let row = self
            .backend
            .run("acquire", async |client| {
                client
                    .query_opt(statement, &[&self.namespace, &name, &token, &ms])
                    .await
            })
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let fence: i64 = row.try_get(0).map_err(|err| {
            InfraError::new(
                ErrorKind::Backend,
                NAME,
                format!("acquire: unexpected fence column: {}", error_chain(&err)),
            )
        })?;
        let fence = u64::try_from(fence).unwrap_or(0);
        Ok(Some(Lease::new(name, token, fence, expires_at(ms))))
    }

    /// How long the holder of `name` keeps it (`None`: it is free now), and the payload of its
    /// release.
    async fn holder(&self, name: &str) -> InfraResult<(Option<Duration>, String)> {
        let statement = &self.sql.holder;
        let row = self
            .backend
            .run("acquire_wait", async |client| {
                client.query_one(statement, &[&self.namespace, &name]).await
            })
            .await?;
        let left: Option<i64> = row.try_get(0).ok().flatten();
        let payload: String = row.try_get(1).unwrap_or_default();
        let left = left.map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0)));
        Ok((left, payload))
    }

    /// A dedicated connection listening on the table's channel, and the payloads it receives.
    /// The connection closes when the returned client is dropped.
    async fn listen(
        &self,
    ) -> InfraResult<(tokio_postgres::Client, mpsc::UnboundedReceiver<String>)> {
        let target = self.backend.target();
        let budget = self.backend.connect_timeout();
        let config = target.config(budget);
        let connecting = config.connect(NoTls);
        let (client, mut connection) = match tokio::time::timeout(budget, connecting).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(err)) => {
                return Err(errors::client(NAME, "acquire_wait", target.redacted(), err));
            }
            Err(_) => {
                return Err(InfraError::new(
                    ErrorKind::Timeout,
                    NAME,
                    format!(
                        "acquire_wait failed: cannot connect to {} within {} ms (`connect_timeout_ms`)",
                        target.redacted(),
                        budget.as_millis()
                    ),
                ));
            }
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(|cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(notification) = message
                    && sender.send(notification.payload().to_owned()).is_err()
                {
                    break;
                }
            }
        });
        let listen = format!("LISTEN \"{}\"", self.sql.channel);
        match tokio::time::timeout(
            self.backend.operation_timeout(),
            client.batch_execute(&listen),
        )
        .await
        {
            Ok(Ok(())) => Ok((client, receiver)),
            Ok(Err(err)) => Err(errors::client(NAME, "acquire_wait", target.redacted(), err)),
            Err(_) => Err(errors::timeout(
                NAME,
                "acquire_wait",
                target.redacted(),
                self.backend.operation_timeout(),
            )),
        }
    }
}

impl LockOps for PostgresLock {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        self.try_acquire(name, ttl).await
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        let deadline = Instant::now().checked_add(timeout);
        // The common case first: a free lock needs no listening connection.
        if let Some(lease) = self.try_acquire(name, ttl).await? {
            return Ok(Some(lease));
        }
        if deadline.is_some_and(|deadline| deadline <= Instant::now()) {
            return Ok(None);
        }
        // Listening before the next try, so a release between the try and the wait is heard.
        let (_listener, mut released) = self.listen().await?;
        loop {
            let stopped = self.stopped.notified();
            tokio::pin!(stopped);
            stopped.as_mut().enable();
            if let Some(lease) = self.try_acquire(name, ttl).await? {
                return Ok(Some(lease));
            }
            let (left, payload) = self.holder(name).await?;
            let now = Instant::now();
            if deadline.is_some_and(|deadline| deadline <= now) {
                return Ok(None);
            }
            let Some(left) = left else {
                continue; // released or expired since the try: try again
            };
            let holder_ends = now + left;
            let wake = deadline.map_or(holder_ends, |deadline| deadline.min(holder_ends));
            let sleep = tokio::time::sleep_until(wake);
            tokio::pin!(sleep);
            // Releases of other locks of the table wake the listener too: wait on for ours.
            loop {
                tokio::select! {
                    notified = released.recv() => match notified {
                        Some(other) if other != payload => {}
                        Some(_) => break,
                        None => {
                            return Err(InfraError::unavailable(
                                NAME,
                                "the listening connection to PostgreSQL closed while waiting",
                            ));
                        }
                    },
                    () = &mut sleep => break,
                    () = &mut stopped => return Err(InfraError::stopped(NAME)),
                }
            }
        }
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        self.backend.running()?;
        check_name(&lease.name)?;
        let Ok(fence) = i64::try_from(lease.fence) else {
            return Ok(false); // no fence this driver minted
        };
        let statement = &self.sql.release;
        let channel = &self.sql.channel;
        let released = self
            .backend
            .run("release", async |client| {
                client
                    .execute(
                        statement,
                        &[&self.namespace, &lease.name, &lease.token, &fence, channel],
                    )
                    .await
            })
            .await?;
        Ok(released == 1)
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        self.backend.running()?;
        check_name(&lease.name)?;
        let ms = ttl_ms(ttl)?;
        let fence = i64::try_from(lease.fence).unwrap_or(-1);
        let statement = &self.sql.refresh;
        let refreshed = self
            .backend
            .run("refresh", async |client| {
                client
                    .execute(
                        statement,
                        &[&self.namespace, &lease.name, &lease.token, &fence, &ms],
                    )
                    .await
            })
            .await?;
        if refreshed != 1 {
            return Err(lease.lost());
        }
        Ok(lease.refreshed(expires_at(ms)))
    }
}

impl Driver for PostgresLock {
    type Options = PostgresLockOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn validate(options: &PostgresLockOptions) -> Result<(), DriverError> {
        options
            .check()
            .map(drop)
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: PostgresLockOptions) -> Result<Self, DriverError> {
        let target = options.check()?;
        let backend = Backend::new(
            NAME,
            target,
            options.pool_size,
            options.connect_timeout(),
            options.operation_timeout(),
        )?;
        Ok(Self {
            backend,
            sql: LockSql::new(options.schema.as_deref(), &options.table),
            namespace: options.namespace,
            stopped: Notify::new(),
            salt: RandomState::new().hash_one(std::process::id()),
            issued: AtomicU64::new(0),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        let migrations = self.sql.migrations();
        self.backend.start(&self.sql.layout(&migrations)).await
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.backend.stop();
        self.stopped.notify_waiters();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.backend.health().await
    }
}

impl LockProvider for PostgresLock {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ttls_are_checked() {
        assert_eq!(check_name("").unwrap_err().kind(), ErrorKind::InvalidInput);
        assert_eq!(
            check_name("a\0b").unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert!(check_name(&"x".repeat(MAX_NAME_LEN)).is_ok());
        assert_eq!(
            ttl_ms(Duration::ZERO).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(ttl_ms(Duration::from_micros(1)).unwrap(), 1);
    }

    #[tokio::test]
    async fn construction_does_no_io_and_stop_makes_operations_stopped() {
        let lock = PostgresLock::from_options(PostgresLockOptions {
            url: "postgres://app:hunter2@127.0.0.1:1/app".into(),
            ..PostgresLockOptions::default()
        })
        .unwrap();
        assert!(!format!("{lock:?}").contains("hunter2"));
        lock.stop().await.unwrap();
        let ttl = Duration::from_secs(1);
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
    }
}
