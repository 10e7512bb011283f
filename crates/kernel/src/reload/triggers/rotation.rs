//! Reload the instances that read a rotated secret.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};

use super::{Counters, TriggerHandle, check_runtime, stopped};
use crate::error::Problem;
use crate::reload::{Forced, Reloader};
use crate::rotation::SecretRotation;
use crate::runtime::Running;

/// Reload exactly the instances that read a rotated secret (opt-in, like every trigger).
///
/// The kernel watches every secret an option refers to (`{ secret = "…", store = "…" }`; see
/// [`Running::secret_rotations`]). Started, this trigger turns each rotation it reports into a
/// reload of the running configuration that replaces the rotation's
/// [`dependents`](SecretRotation::dependents), and only them, for the reason
/// ``secret `db/password` of secrets.vault rotated``. The reload is [`Running::reload`]'s:
/// each dependent is built beside the old one with the value its store holds now, swapped in,
/// and the old one drained and stopped; the reload is logged, counted
/// ([`RELOADS_METRIC`](crate::reload::RELOADS_METRIC)) and is
/// [`Running::last_reload`], and each replaced instance's version in [`Running::versions`]
/// grows by one.
///
/// - **Rotations seen together make one reload**: after a rotation, the trigger waits until none
///   has come for [`settle`](Self::settle) (default [`DEFAULT_SETTLE`](Self::DEFAULT_SETTLE)),
///   so a user name and its password rotated a moment apart rebuild their instance once.
/// - **A failed reload keeps the old instances** (a new value the backend refuses fails the
///   new instance's start): it is logged (`WARN`, with its problems) and counted in
///   [`TriggerStats::refused`](super::TriggerStats::refused). It is not retried on a timer: the
///   next rotation of a secret the instance reads tries again (rotate it again, or fix it and
///   call [`Running::reload`]).
/// - **Rotations missed** (more than 64 arrived while a reload ran) rebuild every instance that
///   reads a secret, since which ones changed is unknown.
///
/// Why opt-in: a rotation report is always on, and costs nothing; rebuilding instances reopens
/// connections and pools, which an application may prefer to do at its own time, or by
/// restarting. Applications that want credentials to follow their store start this once,
/// after startup.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel};
/// use sandloom_kernel::reload::triggers::ReloadOnRotation;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let config = InfraConfig::from_toml_str("", "infra.toml")?;
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await?;
/// let rotation = ReloadOnRotation::new().start(&running)?;
/// // … serve: a rotated secret now rebuilds the instances that read it …
/// rotation.stop().await;
/// running.shutdown().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ReloadOnRotation {
    settle: Duration,
}

impl Default for ReloadOnRotation {
    fn default() -> Self {
        Self::new()
    }
}

impl ReloadOnRotation {
    /// How long no rotation must come before the reload starts: rotations made by one
    /// operator action (or one poll of the store) arrive well within it, and a credential is
    /// used a second longer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::reload::triggers::ReloadOnRotation;
    /// assert_eq!(ReloadOnRotation::DEFAULT_SETTLE, Duration::from_secs(1));
    /// ```
    pub const DEFAULT_SETTLE: Duration = Duration::from_secs(1);

    /// The trigger, with the default settle time.
    ///
    /// ```
    /// let trigger = sandloom_kernel::reload::triggers::ReloadOnRotation::new();
    /// assert!(format!("{trigger:?}").contains("1s"));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            settle: Self::DEFAULT_SETTLE,
        }
    }

    /// Set how long no rotation must come before the reload starts.
    ///
    /// ```
    /// use std::time::Duration;
    /// let trigger = sandloom_kernel::reload::triggers::ReloadOnRotation::new()
    ///     .settle(Duration::from_millis(200));
    /// # drop(trigger);
    /// ```
    #[must_use]
    pub fn settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Start following the rotations `running` reports, on a task of the current Tokio
    /// runtime. Only rotations seen from now on reload: one reported before is in
    /// [`Running::secret_rotations`], for the application to act on.
    ///
    /// ```
    /// # use sandloom_kernel::{InfraConfig, Kernel};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let running = Kernel::new(InfraConfig::from_toml_str("", "i.toml").unwrap(), sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let rotation = sandloom_kernel::reload::triggers::ReloadOnRotation::new().start(&running).unwrap();
    /// assert_eq!(rotation.stats().reloads, 0);
    /// # rotation.stop().await;
    /// # running.shutdown().await.unwrap();
    /// # }
    /// ```
    ///
    /// # Errors
    /// SANDLOOM-B001 outside a Tokio runtime with timers.
    pub fn start(self, running: &Running) -> Result<TriggerHandle, Problem> {
        check_runtime()?;
        let following = Following {
            rotations: running.rotation_events(),
            reloader: running.reloader(),
            settle: self.settle,
        };
        let counters = Arc::new(Counters::default());
        let state = Arc::clone(&counters);
        Ok(TriggerHandle::spawn(counters, |stop| async move {
            following.run(stop, &state).await;
        }))
    }
}

struct Following {
    rotations: broadcast::Receiver<SecretRotation>,
    reloader: Reloader,
    settle: Duration,
}

/// What the rotations seen together ask for: each dependent, with the secrets that changed.
#[derive(Default)]
struct Batch {
    /// (capability, instance) → reasons.
    dependents: BTreeMap<(String, String), Vec<String>>,
    /// Rotations were missed: every instance that reads a secret.
    missed: bool,
}

impl Batch {
    fn add(&mut self, rotation: &SecretRotation) {
        let reason = format!(
            "secret `{}` of secrets.{} rotated",
            rotation.secret, rotation.store
        );
        for dependent in &rotation.dependents {
            let Some((capability, instance)) = dependent.split_once('.') else {
                continue;
            };
            let reasons = self
                .dependents
                .entry((capability.to_owned(), instance.to_owned()))
                .or_default();
            if !reasons.contains(&reason) {
                reasons.push(reason.clone());
            }
        }
    }
}

/// What the task saw next.
enum Next {
    Rotation(SecretRotation),
    Missed,
    Quiet,
    End,
}

impl Following {
    async fn next(
        &mut self,
        stop: &mut tokio::sync::watch::Receiver<bool>,
        quiet: Option<Duration>,
    ) -> Next {
        let wait = async {
            match quiet {
                Some(quiet) => tokio::time::sleep(quiet).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stopped(stop) => Next::End,
            () = wait => Next::Quiet,
            received = self.rotations.recv() => match received {
                Ok(rotation) => Next::Rotation(rotation),
                Err(RecvError::Lagged(_)) => Next::Missed,
                // The `Running` is gone.
                Err(RecvError::Closed) => Next::End,
            },
        }
    }

    async fn run(mut self, mut stop: tokio::sync::watch::Receiver<bool>, counters: &Counters) {
        let mut batch = Batch::default();
        loop {
            let quiet = (!batch.dependents.is_empty() || batch.missed).then_some(self.settle);
            match self.next(&mut stop, quiet).await {
                Next::End => return,
                Next::Rotation(rotation) => batch.add(&rotation),
                Next::Missed => batch.missed = true,
                Next::Quiet => {
                    let done = std::mem::take(&mut batch);
                    Counters::add(&counters.events);
                    Counters::add(&counters.reloads);
                    if !self.reload(done).await {
                        Counters::add(&counters.refused);
                    }
                }
            }
        }
    }

    /// Reload for `batch`; whether it was applied.
    async fn reload(&self, batch: Batch) -> bool {
        let mut forced: Vec<Forced> = batch
            .dependents
            .into_iter()
            .map(|((capability, instance), reasons)| Forced {
                capability,
                instance,
                reason: reasons.join("; "),
            })
            .collect();
        if batch.missed {
            for (capability, instance) in self.reloader.reading_secrets() {
                if !forced
                    .iter()
                    .any(|f| f.capability == capability && f.instance == instance)
                {
                    forced.push(Forced {
                        capability,
                        instance,
                        reason: "secret rotations were missed: every instance reading a secret is rebuilt".to_owned(),
                    });
                }
            }
        }
        let names: Vec<String> = forced
            .iter()
            .map(|f| format!("{}.{}", f.capability, f.instance))
            .collect();
        tracing::info!(
            target: "sandloom::reload",
            trigger = "rotation",
            instances = %names.join(","),
            "secrets rotated: reloading the instances that read them"
        );
        match self.reloader.reload_forced(forced).await {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(
                    target: "sandloom::reload",
                    trigger = "rotation",
                    instances = %names.join(","),
                    codes = ?error.codes(),
                    "the reload for rotated secrets was refused: the instances keep their old values until the next rotation of a secret they read"
                );
                false
            }
        }
    }
}
