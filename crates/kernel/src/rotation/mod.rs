//! Rotated secrets, detected and reported: for every `secrets` store whose secrets the
//! configuration uses, one background task (owned by `Running`, cancelled at shutdown before
//! any driver stops) follows the store's change signal (`watch`) or polls it every
//! `rotation_poll_ms`, by version (`versions`) or else by a keyed digest of the value. Each
//! change of a used secret is logged (target `sandloom::secrets`), counted
//! ([`ROTATIONS_METRIC`](crate::telemetry::ROTATIONS_METRIC)), kept in
//! `Running::secret_rotations` and sent to `Running::rotation_events`, where the opt-in trigger
//! `reload::triggers::ReloadOnRotation` picks it up to reload the dependent instances. After
//! each reload the watch follows the new configuration (`follow.rs`).

mod digest;
mod follow;
mod task;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::secrets::{Secrets, VERSIONS, WATCH};
use sandloom_sdk_infra::{Infra, SECRETS};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::config::InfraConfig;
use crate::references::uses::{SecretUse, UsedBy};
use crate::telemetry::ROTATIONS_METRIC;

pub(crate) use follow::{Follow, store_features};
pub(crate) use task::Timing;

/// How many rotations `Running::secret_rotations` keeps (the oldest are forgotten first).
pub(crate) const ROTATIONS_KEPT: usize = 100;
/// How many rotations a slow `rotation_events` receiver may fall behind before it is told
/// it lagged.
const EVENTS_CAPACITY: usize = 64;

/// One secret that changed in its store: which store, which secret, when it was seen, and the
/// instances configured with it (which still hold the old value until they are reloaded).
/// It never carries a value.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel, SecretRotation};
///
/// /// What an operator's status page shows.
/// fn line(rotation: &SecretRotation) -> String {
///     format!(
///         "secret {} of secrets.{} rotated; in use by {}",
///         rotation.secret,
///         rotation.store,
///         rotation.dependents.join(", ")
///     )
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// for rotation in running.secret_rotations() {
///     println!("{}", line(&rotation));
/// }
/// running.shutdown().await.unwrap();
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecretRotation {
    /// When the change was seen (a polled store: up to `rotation_poll_ms` after it was made).
    pub at: SystemTime,
    /// The `secrets` instance holding the secret (`vault` in `[secrets.vault]`).
    pub store: String,
    /// The secret's name (`db/password`).
    pub secret: String,
    /// The instances whose options refer to the secret, as `capability.instance`, sorted, each
    /// once: those a reload would rebuild.
    pub dependents: Vec<String>,
}

impl crate::Kernel {
    /// **Interim**, until references to secrets in `INFRA` land (issue 25, item 4): also watch
    /// the secret `secret` of the `secrets` instance `store` for rotation, as used by the
    /// options `used_by` (`(capability, instance, option)`). Once references land, the secrets
    /// they name are watched without this call, and it stays for tests only.
    ///
    /// A store that is not configured is logged (WARN) and not watched.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let kernel = Kernel::new(config, sandloom_kernel::link_drivers!())
    ///     .watch_secret("default", "db/password", &[("taskqueue", "default", "password")]);
    /// # drop(kernel);
    /// ```
    #[doc(hidden)]
    #[must_use]
    pub fn watch_secret(
        mut self,
        store: &str,
        secret: &str,
        used_by: &[(&str, &str, &str)],
    ) -> Self {
        self.watched.push(SecretUse {
            store: store.to_owned(),
            secret: secret.to_owned(),
            used_by: used_by
                .iter()
                .map(|&(capability, instance, option)| UsedBy {
                    capability: capability.to_owned(),
                    instance: instance.to_owned(),
                    option: option.to_owned(),
                })
                .collect(),
        });
        self
    }
}

impl crate::Running {
    /// The rotations of secrets the configuration uses seen since startup, oldest first: the
    /// last 100 (older ones are forgotten; the log and the counter
    /// [`ROTATIONS_METRIC`](crate::telemetry::ROTATIONS_METRIC) keep them all).
    ///
    /// A store with the `watch` feature is followed through its change signal; any other is
    /// polled every `rotation_poll_ms` of its table (default 30 s; 0 turns detection off), by
    /// version when it has `versions`, else by comparing a keyed digest of the value (never
    /// the value). Only secrets some option refers to are watched, those of the configuration
    /// running now (a reload changes them). A rotation is reported, not acted on: the dependent
    /// instances keep the value they started with until a reload replaces them — the trigger
    /// `ReloadOnRotation` (feature `reload-triggers`) does that for each rotation.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let stale: Vec<String> = running
    ///     .secret_rotations()
    ///     .into_iter()
    ///     .flat_map(|rotation| rotation.dependents)
    ///     .collect();
    /// assert!(stale.is_empty()); // nothing configured, nothing watched
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn secret_rotations(&self) -> Vec<SecretRotation> {
        self.rotations.recent()
    }

    /// Every rotation from now on, as it is seen: the hook the trigger `ReloadOnRotation`
    /// (feature `reload-triggers`) uses to reload exactly the instances in
    /// [`SecretRotation::dependents`]. Each receiver
    /// gets every rotation; one that falls more than 64 behind gets
    /// [`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged) and can catch
    /// up from [`secret_rotations`](Self::secret_rotations). The channel closes when the
    /// `Running` is dropped (after [`shutdown`](Self::shutdown)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let mut rotations = running.rotation_events();
    /// tokio::spawn(async move {
    ///     while let Ok(rotation) = rotations.recv().await {
    ///         println!("reload {:?}: {} changed", rotation.dependents, rotation.secret);
    ///     }
    /// });
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn rotation_events(&self) -> tokio::sync::broadcast::Receiver<SecretRotation> {
        self.rotations.subscribe()
    }
}

/// What the watchers found: the recent rotations, and the channel that announces each.
pub(crate) struct Rotations {
    recent: Mutex<VecDeque<SecretRotation>>,
    /// Made by the first subscriber: a broadcast channel allocates all of its slots at once (a
    /// good part of what starting the kernel allocated), and a rotation sent before anyone
    /// subscribed reaches nobody either way.
    events: OnceLock<broadcast::Sender<SecretRotation>>,
}

impl Rotations {
    pub(crate) fn new() -> Self {
        Self {
            recent: Mutex::new(VecDeque::new()),
            events: OnceLock::new(),
        }
    }

    /// Log, count, keep and announce one rotation.
    pub(crate) fn record(&self, rotation: SecretRotation) {
        tracing::info!(
            target: "sandloom::secrets",
            store = %rotation.store,
            secret = %rotation.secret,
            dependents = %rotation.dependents.join(","),
            "secret rotated in its store; the instances using it keep the old value until they are reloaded"
        );
        metrics::counter!(ROTATIONS_METRIC, "store" => rotation.store.clone()).increment(1);
        {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            if recent.len() == ROTATIONS_KEPT {
                recent.pop_front();
            }
            recent.push_back(rotation.clone());
        }
        // No receiver is not an error: nobody subscribed (yet).
        if let Some(events) = self.events.get() {
            let _ = events.send(rotation);
        }
    }

    pub(crate) fn recent(&self) -> Vec<SecretRotation> {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<SecretRotation> {
        self.events
            .get_or_init(|| broadcast::channel(EVENTS_CAPACITY).0)
            .subscribe()
    }
}

/// How a store is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `changes`, as a long poll (the store declares `watch`).
    Watch,
    /// `current_version` of every watched secret, every interval (the store declares
    /// `versions`).
    PollVersions(Duration),
    /// `get` of every watched secret, every interval, compared by keyed digest.
    PollDigests(Duration),
}

/// One store to watch, and the secrets of it the configuration uses.
pub(crate) struct StoreWatch {
    pub(crate) store: String,
    pub(crate) secrets: Arc<dyn Secrets>,
    pub(crate) mode: Mode,
    /// Each used secret, with its dependents (`capability.instance`, sorted, once each).
    pub(crate) watched: BTreeMap<String, Vec<String>>,
}

impl StoreWatch {
    fn rotation(&self, secret: &str, dependents: &[String]) -> SecretRotation {
        SecretRotation {
            at: SystemTime::now(),
            store: self.store.clone(),
            secret: secret.to_owned(),
            dependents: dependents.to_vec(),
        }
    }
}

/// The stores to watch for `uses`: each used store that is running and not turned off
/// (`rotation_poll_ms = 0`), in the mode its features allow.
pub(crate) fn plan(
    uses: &[SecretUse],
    infra: &Infra,
    config: &InfraConfig,
    features: &BTreeMap<String, Vec<&'static str>>,
) -> Vec<StoreWatch> {
    let mut by_store: BTreeMap<&str, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for secret_use in uses {
        let dependents = by_store
            .entry(&secret_use.store)
            .or_default()
            .entry(secret_use.secret.clone())
            .or_default();
        for used_by in &secret_use.used_by {
            dependents.push(format!("{}.{}", used_by.capability, used_by.instance));
        }
    }
    let mut stores = Vec::new();
    for (store, mut watched) in by_store {
        for dependents in watched.values_mut() {
            dependents.sort();
            dependents.dedup();
        }
        let Ok(secrets) = infra.capability_arc(&SECRETS, store) else {
            // References are resolved against running stores, so only the interim
            // `Kernel::watch_secret` can name one that is not.
            tracing::warn!(
                target: "sandloom::secrets",
                store,
                "secrets used from `secrets.{store}`, which is not configured: their rotation is not watched"
            );
            continue;
        };
        let interval = config.instance(SECRETS.name(), store).map_or(
            crate::config::DEFAULT_ROTATION_POLL,
            crate::config::InstanceConfig::rotation_poll,
        );
        if interval.is_zero() {
            tracing::info!(
                target: "sandloom::secrets",
                store,
                secrets = watched.len(),
                "rotation detection is off for this store (`rotation_poll_ms = 0`)"
            );
            continue;
        }
        let features = features.get(store).map(Vec::as_slice).unwrap_or_default();
        let has = |feature: &str| features.contains(&feature);
        let mode = if has(WATCH) {
            Mode::Watch
        } else if has(VERSIONS) {
            Mode::PollVersions(interval)
        } else {
            Mode::PollDigests(interval)
        };
        stores.push(StoreWatch {
            store: store.to_owned(),
            secrets,
            mode,
            watched,
        });
    }
    stores
}

/// The watcher tasks, one per store. Dropped, they are aborted; [`stop`](Self::stop) also
/// waits until they have ended.
pub(crate) struct Watcher {
    tasks: Vec<(String, JoinHandle<()>)>,
}

impl Watcher {
    /// A task per store, each recording into `rotations`.
    pub(crate) fn spawn(
        stores: Vec<StoreWatch>,
        rotations: &Arc<Rotations>,
        timing: Timing,
    ) -> Self {
        let tasks = stores
            .into_iter()
            .map(|store| {
                let name = store.store.clone();
                tracing::debug!(
                    target: "sandloom::secrets",
                    store = %name,
                    mode = ?store.mode,
                    secrets = store.watched.len(),
                    "watching secrets for rotation"
                );
                let rotations = Arc::clone(rotations);
                (name, tokio::spawn(task::run(store, rotations, timing)))
            })
            .collect();
        Self { tasks }
    }

    /// Cancel every task and wait, up to `budget` in all, until each has ended. A task
    /// waiting in a store's call ends at once; one whose driver holds its thread cannot be
    /// cancelled before it gives it back, which is logged.
    pub(crate) async fn stop(mut self, budget: Duration) {
        let deadline = tokio::time::Instant::now() + budget;
        for (store, task) in std::mem::take(&mut self.tasks) {
            task.abort();
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                tracing::warn!(
                    target: "sandloom::secrets",
                    %store,
                    "the rotation watcher of this store did not end within the stop timeout ({} ms): its driver holds its thread",
                    budget.as_millis()
                );
            }
        }
    }

    /// Whether every task has ended (tests).
    #[cfg(test)]
    pub(crate) fn is_finished(&self) -> bool {
        self.tasks.iter().all(|(_, task)| task.is_finished())
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        for (_, task) in &self.tasks {
            task.abort();
        }
    }
}
