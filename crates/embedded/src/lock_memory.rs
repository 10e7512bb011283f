//! `lock.memory`: expiring, fenced leases inside the process.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use sandloom_driverkit::lock::{Lease, LockOps, LockProvider, NAME};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, NoOptions, Version};

use tokio::sync::Notify;

use crate::serving::Serving;

/// Expired leases are swept from the table after this many acquisitions.
const SWEEP_EVERY: u64 = 1024;

#[derive(Debug)]
struct Held {
    token: String,
    fence: u64,
    /// Monotonic expiry: what decides. `Lease::expires_at` is the wall-clock view of it.
    until: Instant,
}

/// The `lock.memory` driver: named leases held inside one process.
///
/// At most one holder per name until its lease expires; expiry is measured on the monotonic
/// clock, so a wall-clock jump neither frees nor prolongs a lease. A ttl longer than 1,000 years
/// (`Duration::MAX` included) is held 1,000 years. Tokens are unique per driver instance and
/// carry a per-instance random part. Fences come from one counter per driver instance, taken
/// under the table's lock with the grant, so they grow across every name (strictly, per name
/// too); the store is the process, so they start again with it. `acquire_wait` sleeps on a
/// notification each `release` sends, or until the holder's lease ends. No optional features;
/// options: none.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::{Driver, NoOptions};
/// use sandloom_driverkit::lock::Lock;
/// use sandloom_embedded::MemoryLock;
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let ttl = Duration::from_secs(30);
///     let lock = MemoryLock::from_options(NoOptions {}).unwrap();
///     let lease = lock.acquire("nightly", ttl).await.unwrap().unwrap();
///     assert!(lock.acquire("nightly", ttl).await.unwrap().is_none());
///     let waited = lock.acquire_wait("nightly", ttl, Duration::from_millis(10)).await.unwrap();
///     assert!(waited.is_none(), "still held after 10 ms");
///     assert!(lock.release(&lease).await.unwrap());
///     let next = lock.acquire("nightly", ttl).await.unwrap().unwrap();
///     assert!(next.fence > lease.fence);
/// }
/// ```
#[derive(Debug)]
pub struct MemoryLock {
    held: Mutex<Table>,
    issued: AtomicU64,
    salt: u64,
    /// Woken by every `release` and by `stop`: what `acquire_wait` sleeps on.
    released: Notify,
    serving: Serving,
}

/// The leases, and the last fence minted: one lock guards both, so a fence is minted with
/// its grant and no later grant can get a smaller one.
#[derive(Debug, Default)]
struct Table {
    leases: HashMap<String, Held>,
    fence: u64,
}

/// The longest lease held: 1,000 years. A longer `ttl` (`Duration::MAX` included) is held this
/// long, as the contract asks of a ttl longer than the driver can hold (at least 100 years).
const LONGEST: Duration = Duration::from_hours(1000 * 365 * 24);

/// `Instant` and `SystemTime` `ttl` (at most [`LONGEST`]) from now, or `InvalidInput` when
/// `ttl` is zero.
fn deadline(ttl: Duration) -> InfraResult<(Instant, SystemTime)> {
    if ttl.is_zero() {
        return Err(InfraError::invalid_input(
            NAME,
            "the lease ttl must not be zero",
        ));
    }
    let ttl = ttl.min(LONGEST);
    let until = Instant::now().checked_add(ttl);
    let expires_at = SystemTime::now().checked_add(ttl);
    // 1,000 years fits both clocks on every supported platform; should one not hold it, the
    // lease is refused rather than cut short.
    until.zip(expires_at).ok_or_else(|| {
        InfraError::unavailable(
            NAME,
            format!("this platform's clocks cannot hold a lease of {ttl:?}"),
        )
    })
}

fn check_name(name: &str) -> InfraResult<()> {
    if name.is_empty() {
        Err(InfraError::invalid_input(
            NAME,
            "lock names must not be empty",
        ))
    } else {
        Ok(())
    }
}

impl MemoryLock {
    fn table(&self) -> MutexGuard<'_, Table> {
        // No code path panics while holding the lock; recover anyway rather than propagate.
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The lease of `name` for `ttl` when the lock is free; else when its holder's lease ends.
    fn try_acquire(&self, name: &str, ttl: Duration) -> InfraResult<Result<Lease, Instant>> {
        self.serving.check(NAME)?;
        check_name(name)?;
        let (until, expires_at) = deadline(ttl)?;
        let token = self.new_token();
        let now = Instant::now();
        let mut table = self.table();
        if let Some(held) = table.leases.get(name).filter(|held| held.until > now) {
            return Ok(Err(held.until));
        }
        if self
            .issued
            .load(Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            table.leases.retain(|_, held| held.until > now);
        }
        table.fence += 1;
        let fence = table.fence;
        table.leases.insert(
            name.to_owned(),
            Held {
                token: token.clone(),
                fence,
                until,
            },
        );
        Ok(Ok(Lease::new(name, token, fence, expires_at)))
    }

    fn new_token(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed) + 1;
        format!("lease-{n}-{:016x}", self.salt ^ n.rotate_left(32))
    }
}

impl LockOps for MemoryLock {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        Ok(self.try_acquire(name, ttl)?.ok())
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            // Registered before trying, so a release between the try and the wait still wakes.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            let holder_until = match self.try_acquire(name, ttl)? {
                Ok(lease) => return Ok(Some(lease)),
                Err(until) => until,
            };
            let now = Instant::now();
            if deadline.is_some_and(|deadline| deadline <= now) {
                return Ok(None);
            }
            // Wake at the holder's end, the deadline, or a release, whichever comes first.
            let wake = deadline.map_or(holder_until, |deadline| deadline.min(holder_until));
            tokio::select! {
                () = released => {}
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        self.serving.check(NAME)?;
        check_name(&lease.name)?;
        let now = Instant::now();
        let mut table = self.table();
        match table.leases.get(&lease.name) {
            Some(held) if held.token == lease.token => {
                let valid = held.until > now;
                table.leases.remove(&lease.name);
                drop(table);
                self.released.notify_waiters();
                Ok(valid)
            }
            _ => Ok(false),
        }
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        self.serving.check(NAME)?;
        check_name(&lease.name)?;
        let (until, expires_at) = deadline(ttl)?;
        let now = Instant::now();
        let mut table = self.table();
        match table.leases.get_mut(&lease.name) {
            Some(held) if held.token == lease.token => {
                // Its own lease, ended: a refresh must not revive it.
                if held.until <= now {
                    return Err(InfraError::conflict(
                        NAME,
                        format!("the lease on {:?} has expired", lease.name),
                    ));
                }
                held.until = until;
                Ok(Lease::new(
                    lease.name.clone(),
                    lease.token.clone(),
                    held.fence,
                    expires_at,
                ))
            }
            _ => Err(InfraError::conflict(
                NAME,
                format!("the lease on {:?} is not held by this token", lease.name),
            )),
        }
    }
}

impl Driver for MemoryLock {
    type Options = NoOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn from_options(_options: NoOptions) -> Result<Self, DriverError> {
        Ok(Self {
            held: Mutex::new(Table::default()),
            issued: AtomicU64::new(0),
            salt: RandomState::new().hash_one(SystemTime::now()),
            released: Notify::new(),
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        self.table().leases.clear();
        // Waiters wake and find the driver stopped.
        self.released.notify_waiters();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl LockProvider for MemoryLock {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use sandloom_driverkit::sdk::ErrorKind;

    use super::*;

    fn lock() -> MemoryLock {
        MemoryLock::from_options(NoOptions {}).unwrap()
    }

    const TTL: Duration = Duration::from_secs(30);

    #[tokio::test]
    async fn one_holder_at_a_time_until_release() {
        let lock = lock();
        let lease = lock.acquire("job", TTL).await.unwrap().unwrap();
        assert_eq!(lease.name, "job");
        assert!(lease.expires_at > SystemTime::now());
        assert!(lock.acquire("job", TTL).await.unwrap().is_none());
        assert!(lock.acquire("other", TTL).await.unwrap().is_some());
        assert!(lock.release(&lease).await.unwrap());
        assert!(
            !lock.release(&lease).await.unwrap(),
            "a second release finds nothing"
        );
        let again = lock.acquire("job", TTL).await.unwrap().unwrap();
        assert_ne!(again.token, lease.token);
    }

    #[tokio::test]
    async fn an_expired_lease_can_be_taken_over_and_no_longer_released_or_refreshed() {
        let lock = lock();
        let old = lock
            .acquire("job", Duration::from_millis(50))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let err = lock.refresh(&old, TTL).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict);
        let new = lock.acquire("job", TTL).await.unwrap().unwrap();
        assert!(
            !lock.release(&old).await.unwrap(),
            "the old token does not match"
        );
        assert_eq!(
            lock.refresh(&old, TTL).await.unwrap_err().kind(),
            ErrorKind::Conflict
        );
        assert!(lock.release(&new).await.unwrap());
    }

    #[tokio::test]
    async fn expired_lease_release_answers_false() {
        let lock = lock();
        let lease = lock
            .acquire("job", Duration::from_millis(30))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!lock.release(&lease).await.unwrap());
    }

    #[tokio::test]
    async fn refresh_extends_the_lease() {
        let lock = lock();
        let lease = lock
            .acquire("job", Duration::from_millis(80))
            .await
            .unwrap()
            .unwrap();
        let refreshed = lock.refresh(&lease, TTL).await.unwrap();
        assert_eq!(refreshed.token, lease.token);
        assert!(refreshed.expires_at > lease.expires_at);
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(
            lock.acquire("job", TTL).await.unwrap().is_none(),
            "still held"
        );
        assert!(lock.release(&refreshed).await.unwrap());
    }

    #[tokio::test]
    async fn invalid_input() {
        let lock = lock();
        let kind = |r: InfraResult<Option<Lease>>| r.unwrap_err().kind();
        assert_eq!(kind(lock.acquire("", TTL).await), ErrorKind::InvalidInput);
        assert_eq!(
            kind(lock.acquire("a", Duration::ZERO).await),
            ErrorKind::InvalidInput
        );
        let lease = lock.acquire("a", TTL).await.unwrap().unwrap();
        let err = lock.refresh(&lease, Duration::ZERO).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        let forged = Lease::new("a", "forged", lease.fence, SystemTime::now());
        assert_eq!(
            lock.refresh(&forged, TTL).await.unwrap_err().kind(),
            ErrorKind::Conflict
        );
        assert!(!lock.release(&forged).await.unwrap());
    }

    #[tokio::test]
    async fn a_ttl_too_long_to_hold_is_held_a_thousand_years() {
        let lock = lock();
        let lease = lock.acquire("a", Duration::MAX).await.unwrap().unwrap();
        let century = SystemTime::now() + Duration::from_hours(100 * 365 * 24);
        assert!(lease.expires_at > century, "{lease:?}");
        assert!(lock.acquire("a", TTL).await.unwrap().is_none());
        let refreshed = lock.refresh(&lease, Duration::MAX).await.unwrap();
        assert!(refreshed.expires_at > century, "{refreshed:?}");
        assert!(lock.release(&lease).await.unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_acquirers_get_exactly_one_lease() {
        let lock = Arc::new(lock());
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let lock = Arc::clone(&lock);
            tasks.push(tokio::spawn(async move {
                lock.acquire("x", TTL).await.unwrap()
            }));
        }
        let mut winners = 0;
        for task in tasks {
            winners += usize::from(task.await.unwrap().is_some());
        }
        assert_eq!(winners, 1);
    }

    #[tokio::test]
    async fn fences_grow_with_every_grant_and_refresh_keeps_them() {
        let lock = lock();
        let first = lock.acquire("job", TTL).await.unwrap().unwrap();
        let other = lock.acquire("other", TTL).await.unwrap().unwrap();
        assert!(other.fence > first.fence);
        let refreshed = lock.refresh(&first, TTL).await.unwrap();
        assert_eq!(refreshed.fence, first.fence);
        assert!(lock.release(&first).await.unwrap());
        let second = lock.acquire("job", TTL).await.unwrap().unwrap();
        assert!(second.fence > other.fence);
    }

    #[tokio::test]
    async fn a_waiter_wakes_on_release_and_gives_up_at_its_timeout() {
        let lock = Arc::new(lock());
        let held = lock.acquire("job", TTL).await.unwrap().unwrap();
        let started = Instant::now();
        let none = lock
            .acquire_wait("job", TTL, Duration::from_millis(50))
            .await
            .unwrap();
        assert!(none.is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        let waiter = {
            let lock = Arc::clone(&lock);
            tokio::spawn(async move { lock.acquire_wait("job", TTL, Duration::MAX).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(lock.release(&held).await.unwrap());
        let got = waiter.await.unwrap().unwrap().unwrap();
        assert!(got.fence > held.fence);
    }

    #[tokio::test]
    async fn stop_wakes_a_waiter_with_stopped() {
        let lock = Arc::new(lock());
        lock.acquire("job", TTL).await.unwrap().unwrap();
        let waiter = {
            let lock = Arc::clone(&lock);
            tokio::spawn(async move { lock.acquire_wait("job", TTL, Duration::MAX).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        lock.stop().await.unwrap();
        let err = waiter.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Stopped);
    }

    #[tokio::test]
    async fn stop_makes_every_operation_stopped() {
        let lock = lock();
        let lease = lock.acquire("a", TTL).await.unwrap().unwrap();
        lock.stop().await.unwrap();
        assert!(!lock.health().await.is_healthy());
        assert_eq!(
            lock.acquire("a", TTL).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.acquire_wait("a", TTL, TTL).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.release(&lease).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        assert_eq!(
            lock.refresh(&lease, TTL).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
    }
}
