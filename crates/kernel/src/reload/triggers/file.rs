//! Reload when the `INFRA` file changes, seen through `notify` and debounced.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::{Notify, watch};

use super::{
    Callback, Counters, TriggerHandle, callback, check_runtime, reload_from, reloading, stopped,
};
use crate::InfraConfig;
use crate::error::Problem;
use crate::location::Location;
use crate::reload::Reloader;

/// Reload when the `INFRA` file changes.
///
/// It watches the file's **directory**, not the file: editors save by writing a new file and
/// renaming it over the old one, and Kubernetes updates a mounted `ConfigMap` by swapping its
/// `..data` link, and a watch on the file itself would see neither after the first time. Any
/// change in the directory starts the debounce (default [`DEFAULT_DEBOUNCE`](Self::DEFAULT_DEBOUNCE));
/// when it has been quiet that long, the file is read, and only when its content differs from
/// the last one read is it parsed and passed to the callback (see [the module](super) for a file
/// with problems). Other files of the directory changing cost a read, never a reload.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_kernel::reload::triggers::ReloadOnFileChange;
///
/// # async fn example() -> Result<(), sandloom_kernel::Problem> {
/// let watch = ReloadOnFileChange::new("/etc/app/infra.toml")
///     .debounce(Duration::from_millis(200))
///     .start(|config| async move {
///         println!("reload to {} instances", config.instances().count());
///     })?;
/// # drop(watch);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ReloadOnFileChange {
    path: PathBuf,
    debounce: Duration,
}

impl ReloadOnFileChange {
    /// How long the directory must be quiet before the file is read: long enough for an
    /// editor's or a deployment tool's several steps, short next to a person's patience.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::reload::triggers::ReloadOnFileChange;
    /// assert_eq!(ReloadOnFileChange::DEFAULT_DEBOUNCE, Duration::from_millis(500));
    /// ```
    pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(500);

    /// Watch the `INFRA` file at `path`.
    ///
    /// ```
    /// let trigger = sandloom_kernel::reload::triggers::ReloadOnFileChange::new("infra.toml");
    /// assert!(format!("{trigger:?}").contains("infra.toml"));
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            debounce: Self::DEFAULT_DEBOUNCE,
        }
    }

    /// Set the debounce: how long the directory must be quiet before the file is read.
    ///
    /// ```
    /// use std::time::Duration;
    /// let trigger = sandloom_kernel::reload::triggers::ReloadOnFileChange::new("infra.toml")
    ///     .debounce(Duration::from_millis(100));
    /// # drop(trigger);
    /// ```
    #[must_use]
    pub fn debounce(mut self, debounce: Duration) -> Self {
        self.debounce = debounce;
        self
    }

    /// Start watching, on a task of the current Tokio runtime; `on_change` is called with each
    /// new configuration. The content the file has now counts as the one running: only a
    /// change from it reloads.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), sandloom_kernel::Problem> {
    /// let watch = sandloom_kernel::reload::triggers::ReloadOnFileChange::new("infra.toml")
    ///     .start(|config| async move { drop(config) })?;
    /// # drop(watch);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// SANDLOOM-B001 outside a Tokio runtime with timers; SANDLOOM-B010, at the file, when its
    /// directory cannot be watched (it does not exist; the system's limit of watches is
    /// reached).
    pub fn start<F, Fut>(self, on_change: F) -> Result<TriggerHandle, Problem>
    where
        F: Fn(InfraConfig) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn(callback(on_change))
    }

    /// Start watching, and reload the running infrastructure with each new configuration:
    /// [`Reloader::reload`], which logs and counts each reload (`INFO` applied, `WARN` refused
    /// with its problems; [`RELOADS_METRIC`](crate::reload::RELOADS_METRIC)). A refused
    /// reload keeps the running configuration, and is counted in
    /// [`TriggerStats::refused`](super::TriggerStats::refused); the next change of the file
    /// tries again. Pass the [`Running`](crate::Running) (`&running`) or a [`Reloader`].
    ///
    /// ```no_run
    /// use sandloom_kernel::{InfraConfig, Kernel};
    /// use sandloom_kernel::reload::triggers::ReloadOnFileChange;
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let path = "/etc/app/infra.toml";
    /// let config = InfraConfig::from_file(path)?.with_env_overrides()?;
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await?;
    /// let watch = ReloadOnFileChange::new(path).start_reloading(&running)?;
    /// // … serve …
    /// watch.stop().await;
    /// running.shutdown().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn start_reloading(self, reloader: impl Into<Reloader>) -> Result<TriggerHandle, Problem> {
        self.spawn(reloading(reloader.into()))
    }

    fn spawn(self, callback: Callback) -> Result<TriggerHandle, Problem> {
        check_runtime()?;
        let directory = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let changed = Arc::new(Notify::new());
        let seen = Arc::clone(&changed);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            // An error may mean events were lost: look at the file again, as for a change.
            // Reads (ours included) change nothing: waking on them would read forever.
            let relevant = event.map_or(true, |event| match event.kind {
                EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
                EventKind::Access(_) => false,
                _ => true,
            });
            if relevant {
                seen.notify_one();
            }
        })
        .and_then(|mut watcher| {
            watcher.watch(&directory, RecursiveMode::NonRecursive)?;
            Ok(watcher)
        })
        .map_err(|error| self.unwatchable(&directory, &error))?;
        let counters = Arc::new(Counters::default());
        let watching = Watching {
            last_seen: digest(&self.path),
            path: self.path,
            debounce: self.debounce,
            changed,
            counters: Arc::clone(&counters),
            callback,
        };
        let handle = TriggerHandle::spawn(counters, |stop| async move {
            watching.run(stop).await;
            // The watch (and its thread) ends with the task.
            drop(watcher);
        });
        Ok(handle)
    }

    fn unwatchable(&self, directory: &Path, error: &notify::Error) -> Problem {
        Problem::config(
            Location::file(&self.path.display().to_string()),
            format!(
                "cannot watch `{}`, the directory of the INFRA file `{}`, for changes: {error}",
                directory.display(),
                self.path.display()
            ),
            format!(
                "check that `{}` exists and is readable; on Linux, if inotify's limit is reached, raise `fs.inotify.max_user_watches`",
                directory.display()
            ),
        )
    }
}

/// The task's state.
struct Watching {
    path: PathBuf,
    debounce: Duration,
    changed: Arc<Notify>,
    counters: Arc<Counters>,
    callback: Callback,
    /// The digest of the content last read (`None`: the file could not be read).
    last_seen: Option<u64>,
}

impl Watching {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = stopped(&mut stop) => return,
                () = self.changed.notified() => {}
            }
            // Debounce: wait until the directory has been quiet for `debounce`.
            loop {
                tokio::select! {
                    () = stopped(&mut stop) => return,
                    () = self.changed.notified() => {}
                    () = tokio::time::sleep(self.debounce) => break,
                }
            }
            let now = digest(&self.path);
            if now.is_some() && now == self.last_seen {
                continue;
            }
            self.last_seen = now;
            Counters::add(&self.counters.events);
            reload_from(&self.path, "file", &self.counters, &self.callback).await;
        }
    }
}

/// A digest of the file's content, to tell a change from a touch (or an event of another file
/// of the directory); `None` when it cannot be read. Only the digest is kept: the file may hold
/// secrets.
fn digest(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}
