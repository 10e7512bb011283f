//! Reload on SIGHUP (Unix).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::signal::unix::{SignalKind, signal};

use super::{
    Callback, Counters, TriggerHandle, callback, check_runtime, reload_from, reloading, stopped,
};
use crate::InfraConfig;
use crate::error::Problem;
use crate::location::Location;
use crate::reload::Reloader;

/// Reload on SIGHUP, the Unix convention for "read your configuration again" (Unix only;
/// opt-in: nothing listens for SIGHUP unless this is started).
///
/// Each SIGHUP reads the `INFRA` file and calls the callback, whether or not the file changed:
/// the operator asked. Signals that arrive while a reload runs are folded into one more.
///
/// Once started, the process keeps a SIGHUP handler for its whole life, even after the trigger
/// stops (Tokio never restores the default action, which ends the process): a SIGHUP then does
/// nothing.
///
/// ```no_run
/// use sandloom_kernel::reload::triggers::ReloadOnSighup;
///
/// # async fn example() -> Result<(), sandloom_kernel::Problem> {
/// let hangup = ReloadOnSighup::new("/etc/app/infra.toml").start(|config| async move {
///     println!("reload to {} instances", config.instances().count());
/// })?;
/// // `kill -HUP <pid>` now reloads.
/// # drop(hangup);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ReloadOnSighup {
    path: PathBuf,
}

impl ReloadOnSighup {
    /// Read the `INFRA` file at `path` on each SIGHUP.
    ///
    /// ```
    /// let trigger = sandloom_kernel::reload::triggers::ReloadOnSighup::new("infra.toml");
    /// assert!(format!("{trigger:?}").contains("infra.toml"));
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Listen for SIGHUP, on a task of the current Tokio runtime; `on_change` is called with
    /// each new configuration. The handler is installed when this returns: a SIGHUP sent after
    /// it is never lost.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), sandloom_kernel::Problem> {
    /// let hangup = sandloom_kernel::reload::triggers::ReloadOnSighup::new("infra.toml")
    ///     .start(|config| async move { drop(config) })?;
    /// # drop(hangup);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// SANDLOOM-B001 outside a Tokio runtime with timers and I/O (`enable_all()`);
    /// SANDLOOM-B010 when the handler cannot be installed.
    pub fn start<F, Fut>(self, on_change: F) -> Result<TriggerHandle, Problem>
    where
        F: Fn(InfraConfig) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn(callback(on_change))
    }

    /// Listen for SIGHUP, and reload the running infrastructure from the file on each:
    /// [`Reloader::reload`], which logs and counts each reload (`INFO` applied, `WARN` refused
    /// with its problems). A refused reload keeps the running configuration and is counted in
    /// [`TriggerStats::refused`](super::TriggerStats::refused). Pass the
    /// [`Running`](crate::Running) (`&running`) or a [`Reloader`].
    ///
    /// ```no_run
    /// use sandloom_kernel::{InfraConfig, Kernel};
    /// use sandloom_kernel::reload::triggers::ReloadOnSighup;
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let path = "/etc/app/infra.toml";
    /// let config = InfraConfig::from_file(path)?.with_env_overrides()?;
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await?;
    /// let hangup = ReloadOnSighup::new(path).start_reloading(&running)?;
    /// // `kill -HUP <pid>` now reloads.
    /// hangup.stop().await;
    /// running.shutdown().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn start_reloading(self, reloader: impl Into<Reloader>) -> Result<TriggerHandle, Problem> {
        self.spawn(reloading(reloader.into()))
    }

    fn spawn(self, on_change: Callback) -> Result<TriggerHandle, Problem> {
        check_runtime()?;
        // Tokio panics when the runtime was built without its I/O driver: the answer instead.
        let installed = std::panic::catch_unwind(|| signal(SignalKind::hangup()))
            .map_err(|_| Problem::NoRuntime)?;
        let mut hangups = installed.map_err(|error| {
            Problem::config(
                Location::Code,
                format!("cannot listen for SIGHUP to reload `{}`: {error}", self.path.display()),
                "reload another way (the file watch, or `Running::reload`), or report this with the error",
            )
        })?;
        let counters = Arc::new(Counters::default());
        let state = Arc::clone(&counters);
        let path = self.path;
        Ok(TriggerHandle::spawn(counters, |mut stop| async move {
            loop {
                tokio::select! {
                    () = stopped(&mut stop) => return,
                    received = hangups.recv() => {
                        if received.is_none() {
                            return;
                        }
                    }
                }
                Counters::add(&state.events);
                reload_from(&path, "sighup", &state, &on_change).await;
            }
        }))
    }
}
