//! What starts a reload from outside: a changed `INFRA` file ([`ReloadOnFileChange`]), on Unix
//! SIGHUP ([`ReloadOnSighup`]), and a rotated secret ([`ReloadOnRotation`]). Feature
//! `reload-triggers`. Each is opt-in: nothing reloads unless the application starts it.
//!
//! The file watch and SIGHUP read the `INFRA` file as startup reads it
//! ([`InfraConfig::from_file`], then the `SANDLOOM__…` overrides of the environment) and either
//! reload the running infrastructure with it (`start_reloading(&running)`: `Running::reload`,
//! which logs and counts every reload, applied or refused) or call the application's callback
//! with the new [`InfraConfig`] (`start(callback)`). A file that cannot be read, is not TOML or
//! has problems ([`InfraConfig::problems`]) goes no further: each of its problems is logged
//! (`WARN`, target `sandloom::reload`, with its code, location and action) and counted
//! ([`TriggerStats::rejected`]); the running configuration stays. [`ReloadOnRotation`] reloads
//! the running configuration, replacing the instances that read a rotated secret.
//!
//! The callback runs on the trigger's own task, one call at a time: events that arrive while a
//! reload runs are handled after it, never beside it. A callback that panics is caught: the
//! panic is logged (`ERROR`) and counted ([`TriggerStats::panicked`],
//! [`TRIGGER_PANICS_METRIC`]), and the trigger keeps watching. Dropping the [`TriggerHandle`]
//! (or [`stop`](TriggerHandle::stop)) ends the task after the callback in progress, if any: a
//! reload is never cut off half-way by its trigger.
//!
//! ```no_run
//! use sandloom_kernel::{InfraConfig, Kernel};
//! use sandloom_kernel::reload::triggers::{ReloadOnFileChange, ReloadOnRotation, ReloadOnSighup};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let path = "/etc/app/infra.toml";
//! let config = InfraConfig::from_file(path)?.with_env_overrides()?;
//! let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await?;
//! let watch = ReloadOnFileChange::new(path).start_reloading(&running)?;
//! let hangup = ReloadOnSighup::new(path).start_reloading(&running)?;
//! let rotation = ReloadOnRotation::new().start(&running)?;
//! // … serve …
//! for trigger in [watch, hangup, rotation] {
//!     trigger.stop().await;
//! }
//! running.shutdown().await?;
//! # Ok(()) }
//! ```

mod file;
mod rotation;
#[cfg(unix)]
mod sighup;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use file::ReloadOnFileChange;
pub use rotation::ReloadOnRotation;
#[cfg(unix)]
pub use sighup::ReloadOnSighup;

use super::Reloader;
use crate::InfraConfig;
use crate::error::Problem;

/// What a trigger calls with the new configuration, type-erased.
type Callback = Arc<dyn Fn(InfraConfig) -> Pin<Box<dyn Future<Output = Ran> + Send>> + Send + Sync>;

/// How a call of the callback ended, for the trigger's counters.
enum Ran {
    /// The application's callback returned, or the reload was applied.
    Done,
    /// The reload was refused (and logged by the reload): the running configuration stays.
    Refused,
}

fn callback<F, Fut>(on_change: F) -> Callback
where
    F: Fn(InfraConfig) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    Arc::new(move |config| {
        let call = on_change(config);
        Box::pin(async move {
            call.await;
            Ran::Done
        })
    })
}

/// The callback of [`ReloadOnFileChange::start_reloading`] and
/// [`ReloadOnSighup::start_reloading`]: `Reloader::reload`, its outcome logged by the reload
/// itself (`INFO` applied, `WARN` refused, target `sandloom`) and counted here.
fn reloading(reloader: Reloader) -> Callback {
    Arc::new(move |config| {
        let reloader = reloader.clone();
        Box::pin(async move {
            match reloader.reload(config).await {
                Ok(_) => Ran::Done,
                Err(_) => Ran::Refused,
            }
        })
    })
}

/// What a trigger has done so far.
///
/// ```
/// use sandloom_kernel::reload::triggers::TriggerStats;
///
/// let stats = TriggerStats::default();
/// assert_eq!((stats.events, stats.reloads, stats.rejected), (0, 0, 0));
/// assert_eq!((stats.refused, stats.panicked), (0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TriggerStats {
    /// Events acted on: a changed file (after the debounce), a SIGHUP received, rotations
    /// seen together.
    pub events: u64,
    /// Calls of the callback (or reloads started), each with a configuration without problems.
    pub reloads: u64,
    /// Files that could not be read or had problems: logged, and not passed to the callback.
    pub rejected: u64,
    /// Of the reloads a trigger started itself (`start_reloading`, [`ReloadOnRotation`]),
    /// those refused: the running configuration stayed.
    pub refused: u64,
    /// Calls of the callback that panicked: logged (`ERROR`), and the trigger kept watching.
    pub panicked: u64,
}

#[derive(Default)]
struct Counters {
    events: AtomicU64,
    reloads: AtomicU64,
    rejected: AtomicU64,
    refused: AtomicU64,
    panicked: AtomicU64,
}

impl Counters {
    fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A running trigger. Dropping it stops the trigger (after the callback in progress, if any);
/// [`stop`](Self::stop) also waits for that.
///
/// ```no_run
/// # async fn example() -> Result<(), sandloom_kernel::Problem> {
/// use sandloom_kernel::reload::triggers::ReloadOnFileChange;
///
/// let trigger = ReloadOnFileChange::new("infra.toml").start(|_config| async {})?;
/// println!("{} reloads so far", trigger.stats().reloads);
/// trigger.stop().await;
/// # Ok(()) }
/// ```
pub struct TriggerHandle {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for TriggerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriggerHandle")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl TriggerHandle {
    /// What the trigger has done so far.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), sandloom_kernel::Problem> {
    /// # let trigger = sandloom_kernel::reload::triggers::ReloadOnFileChange::new("infra.toml").start(|_| async {})?;
    /// let stats = trigger.stats();
    /// println!("{} events, {} reloads, {} files refused", stats.events, stats.reloads, stats.rejected);
    /// # Ok(()) }
    /// ```
    pub fn stats(&self) -> TriggerStats {
        TriggerStats {
            events: self.counters.events.load(Ordering::Relaxed),
            reloads: self.counters.reloads.load(Ordering::Relaxed),
            rejected: self.counters.rejected.load(Ordering::Relaxed),
            refused: self.counters.refused.load(Ordering::Relaxed),
            panicked: self.counters.panicked.load(Ordering::Relaxed),
        }
    }

    /// Stop the trigger, and wait for the callback in progress, if any, to end.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), sandloom_kernel::Problem> {
    /// # let trigger = sandloom_kernel::reload::triggers::ReloadOnFileChange::new("infra.toml").start(|_| async {})?;
    /// trigger.stop().await; // at shutdown, before `Running::shutdown`
    /// # Ok(()) }
    /// ```
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            // A callback's panic is caught in the task: it ends only when told to.
            let _ = task.await;
        }
    }

    fn spawn<F>(counters: Arc<Counters>, run: impl FnOnce(watch::Receiver<bool>) -> F) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(stopped));
        Self {
            stop,
            task: Some(task),
            counters,
        }
    }
}

impl Drop for TriggerHandle {
    fn drop(&mut self) {
        // Not an abort: a reload the callback is running finishes; the task ends after it.
        let _ = self.stop.send(true);
    }
}

/// Resolves when the trigger is told to stop (or its handle is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Read `path` as startup reads `INFRA`, and call `callback` with it; or log and count why not.
async fn reload_from(path: &Path, trigger: &'static str, counters: &Counters, callback: &Callback) {
    match load(path) {
        Ok(config) => {
            Counters::add(&counters.reloads);
            tracing::info!(
                target: "sandloom::reload",
                trigger,
                file = %path.display(),
                "INFRA read: reloading"
            );
            call(trigger, counters, callback, config).await;
        }
        Err(problems) => {
            Counters::add(&counters.rejected);
            for problem in &problems {
                tracing::warn!(
                    target: "sandloom::reload",
                    trigger,
                    file = %path.display(),
                    code = problem.code(),
                    action = %problem.action(),
                    "INFRA not reloaded: {}",
                    problem.description()
                );
            }
        }
    }
}

/// The metric counting callbacks of a trigger that panicked, labelled `trigger` (`file`,
/// `sighup`, `rotation`).
///
/// ```
/// assert_eq!(
///     sandloom_kernel::reload::triggers::TRIGGER_PANICS_METRIC,
///     "sandloom.reload_trigger_panics"
/// );
/// ```
pub const TRIGGER_PANICS_METRIC: &str = "sandloom.reload_trigger_panics";

/// Call `callback` with `config` and count how it ended. A panic (in the call or in its
/// future) is caught, logged and counted: the trigger keeps watching, and the next event
/// calls the callback again.
async fn call(
    trigger: &'static str,
    counters: &Counters,
    callback: &Callback,
    config: InfraConfig,
) {
    // The callback and its future are only ever used again after a panic through `Arc`s the
    // application gave us; what they hold is theirs to keep consistent, as for any task.
    let ran = match std::panic::catch_unwind(AssertUnwindSafe(|| callback(config))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(payload) => Err(payload),
    };
    match ran {
        Ok(Ran::Done) => {}
        Ok(Ran::Refused) => Counters::add(&counters.refused),
        Err(payload) => {
            Counters::add(&counters.panicked);
            metrics::counter!(TRIGGER_PANICS_METRIC, "trigger" => trigger).increment(1);
            tracing::error!(
                target: "sandloom::reload",
                trigger,
                panic = %crate::panic_message(payload.as_ref()),
                "the reload callback panicked; the trigger keeps watching"
            );
        }
    }
}

/// `INFRA` from `path`, the overrides of the environment applied; every problem when it cannot
/// be read or has some.
fn load(path: &Path) -> Result<InfraConfig, Vec<Problem>> {
    let config = InfraConfig::from_file(path)
        .and_then(InfraConfig::with_env_overrides)
        .map_err(|error| error.problems().to_vec())?;
    if config.problems().is_empty() {
        Ok(config)
    } else {
        Err(config.problems().to_vec())
    }
}

/// Refuse to start outside a Tokio runtime with timers: the answer instead of Tokio's panic.
fn check_runtime() -> Result<(), Problem> {
    if tokio::runtime::Handle::try_current().is_ok() && crate::lifecycle::timers_enabled() {
        Ok(())
    } else {
        Err(Problem::NoRuntime)
    }
}
