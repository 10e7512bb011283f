//! The holder's keep-alive: a lease renewed in the background, failing closed.
//!
//! It lives in the module door, not in the kernel or driverkit, because a *module* holds a
//! lease, and a module depends on this crate only. Renewing in the background needs a task and
//! a timer, so this crate depends on `tokio` (features `rt`, `sync`, `time`: no threads, no I/O
//! of its own); every application already runs the kernel, and so Tokio. No Tokio type is in
//! the public API: the statuses carry `std::time::Instant`, the futures are plain `async fn`s.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::renew::{State, current, first, held_until, mark_lost, renew, runtime, wait_lost};
use super::status::{LeaseLost, LeaseStatus};
use super::{Lease, Lock};
use crate::InfraResult;

/// A holder's lease, renewed in the background at a third of its ttl, **failing closed**.
///
/// The keep-alive tells the holder the moment the lease is lost, with [`lost`](Self::lost) (a
/// future), [`status`](Self::status) and [`is_held`](Self::is_held) (a glance before each
/// write), or a [`LeaseWatch`] handed to the tasks doing the work. The lease counts as lost:
///
/// - at once when a renewal answers `Conflict` (the lease expired, was released, or another
///   holder took the lock), or an error retrying cannot mend (`Stopped`);
/// - when no renewal has been confirmed by the lease's end, measured on this process's
///   monotonic clock from **before** the confirmed request was sent, less a tenth of the ttl.
///   A renewal that hangs, or errors that persist, make the lease lost at that moment, and it
///   stays lost even if the store confirms the renewal afterwards.
///
/// The keep-alive never counts the lease held longer than the store confirmed it: the store
/// holds a refreshed lease `ttl` from when it handles the refresh, which is after the request
/// was sent. Its clock is the only one that decides, so the work must still hand the lease's
/// [`fence`](Lease::fence) to the resource it protects: a holder that checked
/// [`is_held`](Self::is_held) and then paused is stopped by the fence, not by the keep-alive.
///
/// Renewal runs on a task of the Tokio runtime the keep-alive is made in. Dropping the
/// keep-alive stops it: the lease is then no longer renewed and **ends with its ttl** (another
/// holder may take the lock after that), and watches report [`LeaseLost::Dropped`]. Call
/// [`release`](Self::release) to free the lock at once.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use sandloom_sdk_infra::lock::{KeepAlive, Lock, LockOps};
/// use sandloom_sdk_infra::{InfraError, InfraResult};
/// # use sandloom_sdk_infra::lock::Lease;
/// # use std::sync::Mutex;
/// # use std::time::SystemTime;
/// # /// A one-process lock for the example (an application gets one from `Infra`).
/// # #[derive(Default)]
/// # struct InProcess(Mutex<(u64, Option<(String, std::time::Instant)>)>);
/// # impl LockOps for InProcess {
/// #     async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
/// #         let mut state = self.0.lock().unwrap();
/// #         if state.1.as_ref().is_some_and(|(_, until)| *until > std::time::Instant::now()) {
/// #             return Ok(None);
/// #         }
/// #         state.0 += 1;
/// #         let token = format!("t{}", state.0);
/// #         state.1 = Some((token.clone(), std::time::Instant::now() + ttl));
/// #         Ok(Some(Lease::new(name, token, state.0, SystemTime::now() + ttl)))
/// #     }
/// #     async fn acquire_wait(&self, name: &str, ttl: Duration, _: Duration) -> InfraResult<Option<Lease>> {
/// #         LockOps::acquire(self, name, ttl).await
/// #     }
/// #     async fn release(&self, lease: &Lease) -> InfraResult<bool> {
/// #         let mut state = self.0.lock().unwrap();
/// #         let mine = state.1.as_ref().is_some_and(|(token, until)| *token == lease.token && *until > std::time::Instant::now());
/// #         if mine { state.1 = None; }
/// #         Ok(mine)
/// #     }
/// #     async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
/// #         let mut state = self.0.lock().unwrap();
/// #         match &mut state.1 {
/// #             Some((token, until)) if *token == lease.token && *until > std::time::Instant::now() => {
/// #                 *until = std::time::Instant::now() + ttl;
/// #                 Ok(lease.refreshed(SystemTime::now() + ttl))
/// #             }
/// #             _ => Err(lease.lost()),
/// #         }
/// #     }
/// # }
///
/// /// The protected resource: accepts a write only with a newer fence than the last one,
/// /// as `UPDATE ledger SET total = total + $1, fence = $2 WHERE id = 1 AND fence <= $2` does.
/// #[derive(Default)]
/// struct Ledger { fence: u64, total: u64 }
///
/// impl Ledger {
///     fn add(&mut self, fence: u64, amount: u64) -> bool {
///         if fence < self.fence { return false; } // a stale holder: refused
///         self.fence = fence;
///         self.total += amount;
///         true
///     }
/// }
///
/// /// Settles batches while this instance holds the `settlement` lock.
/// async fn settle(lock: Arc<dyn Lock>, ledger: &mut Ledger) -> InfraResult<u64> {
///     let Some(keep_alive) = KeepAlive::acquire(lock, "settlement", Duration::from_secs(3)).await? else {
///         return Ok(0); // another instance settles
///     };
///     let fence = keep_alive.fence();
///     let work = async {
///         let mut batches = 0;
///         for batch in 1..=5 {
///             if !ledger.add(fence, batch) { break; }
///             batches += 1;
///             tokio::time::sleep(Duration::from_millis(10)).await;
///         }
///         batches
///     };
///     // Stop working the moment the lease is lost, whatever the work is waiting on.
///     tokio::select! {
///         batches = work => {
///             keep_alive.release().await?;
///             Ok(batches)
///         }
///         lost = keep_alive.lost() => Err(InfraError::conflict("lock", lost.to_string())),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let lock: Arc<dyn Lock> = Arc::new(InProcess::default());
/// let mut ledger = Ledger::default();
/// assert_eq!(settle(lock, &mut ledger).await.unwrap(), 5);
/// assert_eq!((ledger.fence, ledger.total), (1, 15));
/// # }
/// ```
pub struct KeepAlive {
    lock: Arc<dyn Lock>,
    sender: Arc<watch::Sender<State>>,
    receiver: watch::Receiver<State>,
    task: JoinHandle<()>,
}

impl KeepAlive {
    /// Take the lock `name` for `ttl` and keep it alive; `None` when another holder's lease is
    /// still valid.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use sandloom_sdk_infra::lock::{KeepAlive, Lock};
    /// use sandloom_sdk_infra::InfraResult;
    ///
    /// async fn lead(lock: Arc<dyn Lock>) -> InfraResult<Option<KeepAlive>> {
    ///     KeepAlive::acquire(lock, "leader", Duration::from_secs(10)).await
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Lock::acquire`]; `Unsupported` outside a Tokio runtime (nothing is acquired then).
    pub async fn acquire(
        lock: Arc<dyn Lock>,
        name: &str,
        ttl: Duration,
    ) -> InfraResult<Option<Self>> {
        let runtime = runtime()?;
        let sent = Instant::now();
        let Some(lease) = lock.acquire(name, ttl).await? else {
            return Ok(None);
        };
        Ok(Some(Self::start(&runtime, lock, lease, ttl, sent)))
    }

    /// Take the lock `name` for `ttl`, waiting up to `timeout` for it (as
    /// [`Lock::acquire_wait`]), and keep it alive; `None` when it is still held at the timeout.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use sandloom_sdk_infra::lock::{KeepAlive, Lock};
    /// use sandloom_sdk_infra::InfraResult;
    ///
    /// async fn migrate(lock: Arc<dyn Lock>) -> InfraResult<Option<KeepAlive>> {
    ///     KeepAlive::acquire_wait(lock, "migrations", Duration::from_secs(30), Duration::from_secs(5)).await
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Lock::acquire_wait`]; `Unsupported` outside a Tokio runtime.
    pub async fn acquire_wait(
        lock: Arc<dyn Lock>,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Self>> {
        let runtime = runtime()?;
        // The grant happens after the request is sent, however long the wait: `sent` is early.
        let sent = Instant::now();
        let Some(lease) = lock.acquire_wait(name, ttl, timeout).await? else {
            return Ok(None);
        };
        Ok(Some(Self::start(&runtime, lock, lease, ttl, sent)))
    }

    /// Keep alive a lease acquired without the keep-alive: it is refreshed to `ttl` first, so
    /// its end is measured from a request this keep-alive sent.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use sandloom_sdk_infra::lock::{KeepAlive, Lease, Lock};
    /// use sandloom_sdk_infra::InfraResult;
    ///
    /// async fn keep(lock: Arc<dyn Lock>, lease: &Lease) -> InfraResult<KeepAlive> {
    ///     KeepAlive::adopt(lock, lease, Duration::from_secs(10)).await
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Lock::refresh`]: `Conflict` when the lease is no longer held; `Unsupported`
    /// outside a Tokio runtime.
    pub async fn adopt(lock: Arc<dyn Lock>, lease: &Lease, ttl: Duration) -> InfraResult<Self> {
        let runtime = runtime()?;
        let sent = Instant::now();
        let lease = lock.refresh(lease, ttl).await?;
        Ok(Self::start(&runtime, lock, lease, ttl, sent))
    }

    fn start(
        runtime: &tokio::runtime::Handle,
        lock: Arc<dyn Lock>,
        lease: Lease,
        ttl: Duration,
        sent: Instant,
    ) -> Self {
        let state = State {
            lease: lease.clone(),
            status: LeaseStatus::Held {
                until: held_until(sent, ttl).into_std(),
            },
        };
        let (sender, receiver) = watch::channel(state);
        let sender = Arc::new(sender);
        let task = runtime.spawn(renew(
            Arc::clone(&lock),
            Arc::clone(&sender),
            lease,
            ttl,
            sent,
        ));
        Self {
            lock,
            sender,
            receiver,
            task,
        }
    }

    /// The lease as last confirmed (its `expires_at` is the driver's report; the keep-alive
    /// judges by [`status`](Self::status)).
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// fn name(keep_alive: &KeepAlive) -> String { keep_alive.lease().name }
    /// ```
    #[must_use]
    pub fn lease(&self) -> Lease {
        self.receiver.borrow().lease.clone()
    }

    /// The grant's fence: hand it to the resource the lock protects. Renewals keep it.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// fn fence_for_the_write(keep_alive: &KeepAlive) -> u64 { keep_alive.fence() }
    /// ```
    #[must_use]
    pub fn fence(&self) -> u64 {
        self.receiver.borrow().lease.fence
    }

    /// Where the lease stands now (see [`LeaseStatus`]).
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::{KeepAlive, LeaseStatus};
    /// fn report(keep_alive: &KeepAlive) {
    ///     if let LeaseStatus::Uncertain { error, .. } = keep_alive.status() {
    ///         eprintln!("renewal failing, still held: {error}");
    ///     }
    /// }
    /// ```
    #[must_use]
    pub fn status(&self) -> LeaseStatus {
        current(&self.receiver).1
    }

    /// Whether the lease is held now: check it before each step of the protected work.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// fn step(keep_alive: &KeepAlive) -> bool { keep_alive.is_held() }
    /// ```
    #[must_use]
    pub fn is_held(&self) -> bool {
        self.status().is_held()
    }

    /// Resolves the moment the lease is lost, with why; at once when it already is.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// async fn until_lost(keep_alive: &KeepAlive) {
    ///     let why = keep_alive.lost().await;
    ///     eprintln!("stopping: {why}");
    /// }
    /// ```
    pub async fn lost(&self) -> LeaseLost {
        wait_lost(self.receiver.clone()).await
    }

    /// A handle on the lease's status for the tasks doing the protected work; cheap to clone.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// fn spawn_worker(keep_alive: &KeepAlive) {
    ///     let watch = keep_alive.watch();
    ///     tokio::spawn(async move {
    ///         tokio::select! {
    ///             () = async { /* the protected work, with watch.fence() */ } => {}
    ///             _ = watch.lost() => {}
    ///         }
    ///     });
    /// }
    /// ```
    #[must_use]
    pub fn watch(&self) -> LeaseWatch {
        LeaseWatch {
            receiver: self.sender.subscribe(),
        }
    }

    /// Stop renewing and give the lock back; `false` when the lease had already ended. Watches
    /// report [`LeaseLost::Released`] before the release is sent.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::KeepAlive;
    /// # use sandloom_sdk_infra::InfraResult;
    /// async fn done(keep_alive: KeepAlive) -> InfraResult<()> {
    ///     if !keep_alive.release().await? {
    ///         eprintln!("the lease had already ended");
    ///     }
    ///     Ok(())
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Lock::release`].
    pub async fn release(self) -> InfraResult<bool> {
        mark_lost(&self.sender, LeaseLost::Released);
        self.task.abort();
        let lease = self.lease();
        self.lock.release(&lease).await
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.task.abort();
        mark_lost(&self.sender, LeaseLost::Dropped);
    }
}

impl fmt::Debug for KeepAlive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lease, status) = current(&self.receiver);
        f.debug_struct("KeepAlive")
            .field("name", &lease.name)
            .field("fence", &lease.fence)
            .field("status", &status)
            .finish_non_exhaustive()
    }
}

/// A watch on a [`KeepAlive`]'s lease, for the tasks doing the protected work.
///
/// ```
/// use sandloom_sdk_infra::lock::LeaseWatch;
///
/// /// A worker's loop: one step while the lease is held, stop when it is lost.
/// async fn work(watch: LeaseWatch) {
///     while watch.is_held() {
///         tokio::select! {
///             () = tokio::time::sleep(std::time::Duration::from_millis(10)) => { /* a step, with watch.fence() */ }
///             _ = watch.lost() => break,
///         }
///     }
/// }
/// ```
#[derive(Debug, Clone)]
pub struct LeaseWatch {
    receiver: watch::Receiver<State>,
}

impl LeaseWatch {
    /// Where the lease stands now.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::LeaseWatch;
    /// fn held(watch: &LeaseWatch) -> bool { watch.status().is_held() }
    /// ```
    #[must_use]
    pub fn status(&self) -> LeaseStatus {
        current(&self.receiver).1
    }

    /// Whether the lease is held now.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::LeaseWatch;
    /// fn may_write(watch: &LeaseWatch) -> bool { watch.is_held() }
    /// ```
    #[must_use]
    pub fn is_held(&self) -> bool {
        self.status().is_held()
    }

    /// The grant's fence.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::LeaseWatch;
    /// fn fence(watch: &LeaseWatch) -> u64 { watch.fence() }
    /// ```
    #[must_use]
    pub fn fence(&self) -> u64 {
        self.receiver.borrow().lease.fence
    }

    /// Resolves the moment the lease is lost, with why; at once when it already is.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::LeaseWatch;
    /// async fn log_loss(watch: LeaseWatch) {
    ///     eprintln!("lease lost: {}", watch.lost().await);
    /// }
    /// ```
    pub async fn lost(&self) -> LeaseLost {
        wait_lost(self.receiver.clone()).await
    }

    /// Resolves at the next change of status (a renewal confirmed, failing, or the lease
    /// lost), with the new status; at once when the lease is already lost.
    ///
    /// ```
    /// # use sandloom_sdk_infra::lock::{LeaseStatus, LeaseWatch};
    /// async fn log_changes(mut watch: LeaseWatch) {
    ///     loop {
    ///         match watch.changed().await {
    ///             LeaseStatus::Lost(why) => break eprintln!("lost: {why}"),
    ///             status => eprintln!("{status:?}"),
    ///         }
    ///     }
    /// }
    /// ```
    pub async fn changed(&mut self) -> LeaseStatus {
        let until = match current(&self.receiver).1 {
            lost @ LeaseStatus::Lost(_) => return lost,
            LeaseStatus::Held { until } | LeaseStatus::Uncertain { until, .. } => until,
        };
        let ended = tokio::time::sleep_until(Instant::from_std(until));
        let _ = first(self.receiver.changed(), ended).await;
        current(&self.receiver).1
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<KeepAlive>();
    assert_send_sync::<LeaseWatch>();
    assert_send_sync::<LeaseStatus>();
    assert_send_sync::<LeaseLost>();
};
