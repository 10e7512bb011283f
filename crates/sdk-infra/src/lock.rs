//! The `lock` capability: named, expiring, **fenced** mutual-exclusion leases.
//!
//! Stable since contract 1.0.0 (the operations of 0.2.0, unchanged, now under semver's
//! promise): a driver written for 1.0 serves every 1.x.
//!
//! Required operations: [`acquire`](Lock::acquire), [`acquire_wait`](Lock::acquire_wait),
//! [`release`](Lock::release), [`refresh`](Lock::refresh). No optional features.
//!
//! ## Fences
//!
//! A lease alone cannot make a lock safe: a holder that pauses (a GC, a stalled VM, a slow
//! network) past its ttl loses the lock to another holder, then wakes up and writes anyway.
//! Every [`Lease`] therefore carries a **fence**: a number the store mints atomically with the
//! grant, strictly greater than the fence of every lease granted before it for that name on that
//! store (across restarts of the application, and of the backend where the backend keeps its
//! data). [`refresh`](Lock::refresh) keeps the fence. Hand the fence to the resource the lock
//! protects, and have the resource refuse a write whose fence is not greater than the last one
//! it accepted: a paused holder's late write is then refused, whatever the clocks did.
//!
//! Fences are **required of every driver**, not an optional feature: the lock is meant to be
//! safe by construction, and a lock a module cannot rely on for correctness would need every
//! caller to check a feature first. A backend that cannot mint fences cannot offer `lock`.
//! Expiry is judged by the store's clock, never by a caller's copy of
//! [`expires_at`](Lease::expires_at).
//!
//! ```
//! use std::time::Duration;
//! use sandloom_sdk_infra::lock::Lock;
//! use sandloom_sdk_infra::InfraResult;
//!
//! /// The protected resource: a row that accepts a write only with a newer fence, as in
//! /// `UPDATE report SET body = $1, fence = $2 WHERE id = 1 AND fence < $2`.
//! struct Report { fence: u64, body: String }
//!
//! impl Report {
//!     fn write(&mut self, fence: u64, body: &str) -> bool {
//!         if fence <= self.fence {
//!             return false; // a stale holder: refused
//!         }
//!         self.fence = fence;
//!         self.body = body.to_owned();
//!         true
//!     }
//! }
//!
//! async fn publish(lock: &dyn Lock, report: &mut Report) -> InfraResult<bool> {
//!     let Some(lease) = lock.acquire("report", Duration::from_secs(30)).await? else {
//!         return Ok(false);
//!     };
//!     // However long this task pauses here, a write with an older fence than one already
//!     // accepted is refused by the resource itself.
//!     let written = report.write(lease.fence, "nightly figures");
//!     lock.release(&lease).await?;
//!     Ok(written)
//! }
//! ```
//!
//! ## Keeping a lease alive
//!
//! Work that outlasts a ttl holds its lease through a [`KeepAlive`]: it renews the lease at a
//! third of its ttl and tells the holder the moment the lease is lost or its renewal is
//! uncertain, failing closed (a renewal not confirmed before the lease's end, as this process
//! measures it from before the request was sent, counts as lost). Its example hands the fence
//! to the resource while the keep-alive runs and stops the work when [`KeepAlive::lost`] fires.
//!
//! ```
//! use sandloom_sdk_infra::lock::{FEATURES, NAME, REQUIRED_OPERATIONS};
//! use sandloom_sdk_infra::LOCK;
//!
//! assert_eq!(NAME, LOCK.name());
//! assert!(FEATURES.is_empty());
//! assert_eq!(REQUIRED_OPERATIONS, ["acquire", "acquire_wait", "release", "refresh"]);
//! ```

use std::time::SystemTime;

mod keep_alive;
mod renew;
mod status;

pub use keep_alive::{KeepAlive, LeaseWatch};
pub use status::{LeaseLost, LeaseStatus};

/// Capability name of the lock, as written in `INFRA` (`[lock.default]`); see the
/// [module example](self).
pub const NAME: &str = "lock";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`Lock`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::lock::FUTURE_BYTES, 576);
/// ```
pub const FUTURE_BYTES: usize = 576;

/// Proof of holding the lock `name` until `expires_at`, with the grant's `fence`.
///
/// Drivers build leases; modules keep them to [`release`](Lock::release) or
/// [`refresh`](Lock::refresh) the lock, and hand [`fence`](Lease::fence) to the resource the
/// lock protects (see the [module example](self)).
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use sandloom_sdk_infra::lock::Lease;
///
/// let lease = Lease::new("nightly-report", "t-1", 7, SystemTime::now() + Duration::from_secs(30));
/// assert_eq!(lease.name, "nightly-report");
/// assert_eq!(lease.fence, 7);
/// assert!(lease.expires_at > SystemTime::now(), "still held");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lease {
    /// The lock's name.
    pub name: String,
    /// Opaque token of this holder; another holder's token never matches.
    pub token: String,
    /// The grant's fencing token: minted by the store with the grant, strictly greater than the
    /// fence of every lease granted before it for this name on this store; kept by `refresh`.
    pub fence: u64,
    /// After this instant another caller may acquire the lock.
    pub expires_at: SystemTime,
}

impl Lease {
    /// A lease value (drivers build these).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// let l = sandloom_sdk_infra::lock::Lease::new("job", "t1", 1, SystemTime::now() + Duration::from_secs(5));
    /// assert_eq!((l.name.as_str(), l.fence), ("job", 1));
    /// ```
    pub fn new(
        name: impl Into<String>,
        token: impl Into<String>,
        fence: u64,
        expires_at: SystemTime,
    ) -> Self {
        Self {
            name: name.into(),
            token: token.into(),
            fence,
            expires_at,
        }
    }

    /// The same grant (name, token, fence) with a new expiry: what a driver's
    /// [`refresh`](Lock::refresh) answers.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use sandloom_sdk_infra::lock::Lease;
    ///
    /// let lease = Lease::new("job", "t1", 3, SystemTime::now());
    /// let later = SystemTime::now() + Duration::from_secs(30);
    /// let refreshed = lease.refreshed(later);
    /// assert_eq!((refreshed.token.as_str(), refreshed.fence), ("t1", 3));
    /// assert_eq!(refreshed.expires_at, later);
    /// ```
    #[must_use]
    pub fn refreshed(&self, expires_at: SystemTime) -> Self {
        Self {
            expires_at,
            ..self.clone()
        }
    }

    /// The `Conflict` a driver answers when this lease is no longer its holder's: expired,
    /// released, or taken over.
    ///
    /// ```
    /// use std::time::SystemTime;
    /// use sandloom_sdk_infra::ErrorKind;
    /// use sandloom_sdk_infra::lock::Lease;
    ///
    /// let lease = Lease::new("job", "t1", 3, SystemTime::now());
    /// assert_eq!(lease.lost().kind(), ErrorKind::Conflict);
    /// ```
    #[must_use]
    pub fn lost(&self) -> crate::InfraError {
        crate::InfraError::conflict(
            NAME,
            format!(
                "the lease on {:?} has expired, was released, or is held by another holder",
                self.name
            ),
        )
    }
}

/// The `lock` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __lock_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "lock",
            stability: Stable,
            version: (1, 0, 0),
            features: [],
            ops: LockOps,
            future_bytes: $crate::lock::FUTURE_BYTES,
            trait: {
                /// Named leases: at most one holder per name at a time, until its lease expires.
                ///
                /// Names are compared byte for byte: names that differ only in case, by a leading or trailing
                /// space, by a prefix or suffix, or as NFC vs NFD forms of the same text are distinct locks.
                /// Every driver holds names of up to 1,024 bytes; a longer name it either holds whole, as a
                /// lock of its own, or refuses with `InvalidInput`: it never cuts one to fit. So with a NUL
                /// character: held whole or refused (`lock.postgres` refuses it), never cut at the NUL.
                /// Every operation is atomic across callers: however many acquire a free, released or expired
                /// lock at once, at most one gets a lease. Every lease granted carries a fence strictly
                /// greater than every earlier grant's for its name (see the [module docs](self)).
                ///
                /// Any nonzero `ttl` is accepted, by [`acquire`](Lock::acquire) and
                /// [`refresh`](Lock::refresh) alike. A `ttl` shorter than the backend's resolution is rounded up
                /// to it (never refused, never made endless); otherwise the lease lasts `ttl`, not a `ttl`
                /// rounded to whole seconds either way (1.5 s is neither 1 s nor 2 s), and `expires_at` reports
                /// it. A `ttl` longer than the backend can hold (400 days, `Duration::MAX`) is held as long as
                /// it can, never less than 100 years: `Duration::MAX` means "as long as possible", without panic
                /// or error. No lease ends before its `ttl`, counted from the `acquire` or `refresh` that
                /// granted it: a driver caps no lease to a default of its own.
                ///
                /// ```
                /// use std::time::Duration;
                /// use sandloom_sdk_infra::lock::Lock;
                /// use sandloom_sdk_infra::InfraResult;
                ///
                /// async fn run_exclusively(lock: &dyn Lock) -> InfraResult<bool> {
                ///     let Some(lease) = lock.acquire("nightly-report", Duration::from_secs(30)).await? else {
                ///         return Ok(false); // someone else runs it
                ///     };
                ///     // ... work ...
                ///     lock.release(&lease).await?;
                ///     Ok(true)
                /// }
                /// ```
                pub trait Lock: Send + Sync {
                    /// Take the lock `name` for `ttl`; `None` when another holder's lease is still valid.
                    ///
                    /// A refused `acquire` changes nothing: the holder's lease keeps its expiry, whatever `ttl`
                    /// the refused caller asked for.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::lock::{Lease, Lock};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// /// The lease when this instance is the leader for the next 10 s, `None` when another is.
                    /// async fn try_lead(lock: &dyn Lock) -> InfraResult<Option<Lease>> {
                    ///     lock.acquire("leader", Duration::from_secs(10)).await
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for an empty name or a zero `ttl`; `Unavailable` when the backend fails.
                    async fn acquire(&self, name: &str, ttl: ::std::time::Duration) -> $crate::InfraResult<Option<$crate::lock::Lease>>;

                    /// Take the lock `name` for `ttl`, waiting up to `timeout` for it to be free; `None`
                    /// when it is still held when `timeout` has passed.
                    ///
                    /// The wait does not poll the backend: the driver wakes when the lock is released
                    /// (Redis pub/sub, Postgres `LISTEN`/`NOTIFY`, a notification in process) or when
                    /// the holder's lease ends, and tries again. A zero `timeout` is one `acquire`. Woken
                    /// waiters race as `acquire`s do: at most one gets the lease. Any `timeout` is accepted:
                    /// one longer than the driver can wait (400 days, `Duration::MAX`) is waited as long as it
                    /// can, never less than 100 years, without panic or error, and a release still wakes it.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::lock::{Lease, Lock};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// /// Wait up to 5 s for the migration lock; `None` when another instance keeps it.
                    /// async fn migrate_lock(lock: &dyn Lock) -> InfraResult<Option<Lease>> {
                    ///     lock.acquire_wait("migrations", Duration::from_secs(60), Duration::from_secs(5)).await
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As `acquire`.
                    #[waits = "A cut leaves the lock as it was, unless the backend granted it to \
                        this call as the drain began (a request in flight); then nobody holds that \
                        lease and the lock is free again when its `ttl` ends."]
                    async fn acquire_wait(&self, name: &str, ttl: ::std::time::Duration, timeout: ::std::time::Duration) -> $crate::InfraResult<Option<$crate::lock::Lease>>;

                    /// Give the lock back; `false` when the lease had already expired or been taken over.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::lock::{Lease, Lock};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn step_down(lock: &dyn Lock, lease: Lease) -> InfraResult<()> {
                    ///     if !lock.release(&lease).await? {
                    ///         eprintln!("lease on `{}` had already expired", lease.name);
                    ///     }
                    ///     Ok(())
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As `acquire`.
                    async fn release(&self, lease: &$crate::lock::Lease) -> $crate::InfraResult<bool>;

                    /// Extend a lease still held to `ttl` from now.
                    ///
                    /// The new expiry is `ttl` from now whatever was left, so a `ttl` shorter than the rest of
                    /// the lease shortens it (as Redis `PEXPIRE` does). The answered lease keeps the name, the
                    /// token and the fence: the lease value from before the refresh still releases and refreshes the
                    /// lock. Several refreshes of one valid lease at once all succeed and leave its holder the
                    /// one holder.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::lock::{Lease, Lock};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// /// Keep leading: `Ok(None)` when the lease was lost and work must stop.
                    /// async fn keep_leading(lock: &dyn Lock, lease: &Lease) -> InfraResult<Option<Lease>> {
                    ///     match lock.refresh(lease, Duration::from_secs(10)).await {
                    ///         Ok(renewed) => Ok(Some(renewed)),
                    ///         Err(err) if err.kind() == ErrorKind::Conflict => Ok(None),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `Conflict` when the lease expired or another holder has the lock; else as `acquire`.
                    async fn refresh(&self, lease: &$crate::lock::Lease, ttl: ::std::time::Duration) -> $crate::InfraResult<$crate::lock::Lease>;
                }
            }
        }
    };
}

crate::__lock_contract!([crate::__operation_trait] []);
crate::__lock_contract!([crate::__capability_constants] []);
