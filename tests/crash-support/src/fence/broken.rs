//! A deliberately broken lock, for the campaign's own test: the campaign must fail on it.

use sandloom_driverkit::lock::{Lease, Lock, LockOps};
use sandloom_driverkit::sdk::InfraResult;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// A [`Lock`] that **reuses the last fence**: it hands every grant with an odd fence the fence
/// of the grant before it (3 becomes 2, 5 becomes 4), as a store whose counter lost one step
/// would. Mutual exclusion is the real driver's, so only the fences are wrong: the holder of a
/// reused fence writes while it certainly holds the lease and the resource refuses it.
///
/// Leases it answers carry the changed fence; it keeps the real lease behind each (by token)
/// for `refresh` and `release`, so the wrapper must see every lease it hands out (one per
/// worker process is fine).
#[derive(Debug)]
pub struct ReusedFence<L> {
    inner: L,
    real: Mutex<HashMap<String, Lease>>,
}

impl<L: Lock> ReusedFence<L> {
    /// Wrap `inner`.
    pub fn new(inner: L) -> Self {
        ReusedFence {
            inner,
            real: Mutex::new(HashMap::new()),
        }
    }

    fn broken(&self, lease: Option<Lease>) -> Option<Lease> {
        let lease = lease?;
        let mut shown = lease.clone();
        shown.fence = lease.fence - lease.fence % 2;
        self.real
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(lease.token.clone(), lease);
        Some(shown)
    }

    fn real(&self, shown: &Lease) -> Lease {
        self.real
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&shown.token)
            .cloned()
            .unwrap_or_else(|| shown.clone())
    }
}

impl<L: Lock> LockOps for ReusedFence<L> {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        Ok(self.broken(self.inner.acquire(name, ttl).await?))
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        Ok(self.broken(self.inner.acquire_wait(name, ttl, timeout).await?))
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        let real = self.real(lease);
        let released = self.inner.release(&real).await;
        self.real
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&lease.token);
        released
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        let real = self.real(lease);
        let mut refreshed = self.inner.refresh(&real, ttl).await?;
        refreshed.fence = lease.fence;
        Ok(refreshed)
    }
}
