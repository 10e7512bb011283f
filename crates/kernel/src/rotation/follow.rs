//! The rotation watch follows the running configuration: after a reload, the secrets watched
//! are the new configuration's (new references watched, removed ones forgotten, a changed
//! `rotation_poll_ms` applied), and a `secrets` instance that was rebuilt is watched afresh.
//! When none of that changed, the watchers keep running untouched: a restart forgets what
//! was last seen, and a rotation made while they restart would not be seen.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sandloom_sdk_infra::Infra;

use super::{Mode, Rotations, StoreWatch, Timing, Watcher, plan};
use crate::config::InfraConfig;
use crate::references::uses::{SecretUse, secret_uses};

/// What a running watch is: per store, its mode and its secrets with their dependents.
type Signature = Vec<(String, Mode, BTreeMap<String, Vec<String>>)>;

/// The rotation watchers of a `Running`, and what they need to be planned again.
pub(crate) struct Follow {
    pub(crate) infra: Arc<Infra>,
    /// Secrets named with the interim `Kernel::watch_secret`, watched whatever the
    /// configuration.
    extra: Vec<SecretUse>,
    pub(crate) rotations: Arc<Rotations>,
    timing: Timing,
    state: Mutex<State>,
}

struct State {
    watcher: Option<Watcher>,
    watching: Signature,
    /// The features of each running `secrets` instance: they decide how it is watched.
    features: BTreeMap<String, Vec<&'static str>>,
}

impl Follow {
    /// Plan the watch of `config` and start it.
    pub(crate) fn start(
        infra: Arc<Infra>,
        extra: Vec<SecretUse>,
        config: &InfraConfig,
        features: BTreeMap<String, Vec<&'static str>>,
        timing: Timing,
    ) -> Self {
        let rotations = Arc::new(Rotations::new());
        let stores = plan(&uses(config, &extra), &infra, config, &features);
        let watching = signature(&stores);
        let watcher = Watcher::spawn(stores, &rotations, timing);
        Self {
            infra,
            extra,
            rotations,
            timing,
            state: Mutex::new(State {
                watcher: Some(watcher),
                watching,
                features,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// After an applied reload to `config`, in which the `secrets` instances `rebuilt` (with
    /// their features) were replaced: restart the watch if what it should watch changed.
    /// Returns whether it was restarted. Called under the reload's turn, so never beside
    /// another call or [`take`](Self::take).
    pub(crate) async fn follow(
        &self,
        config: &InfraConfig,
        rebuilt: Vec<(String, Vec<&'static str>)>,
        budget: Duration,
    ) -> bool {
        let (stores, old) = {
            let mut state = self.state();
            let Some(_) = state.watcher else {
                return false; // shut down
            };
            let rebuilt_names: Vec<String> = rebuilt.iter().map(|(s, _)| s.clone()).collect();
            state.features.extend(rebuilt);
            let stores = plan(
                &uses(config, &self.extra),
                &self.infra,
                config,
                &state.features,
            );
            let watching = signature(&stores);
            let restart = watching != state.watching
                || watching
                    .iter()
                    .any(|(store, _, _)| rebuilt_names.contains(store));
            if !restart {
                return false;
            }
            state.watching = watching;
            (stores, state.watcher.take())
        };
        if let Some(old) = old {
            old.stop(budget).await;
        }
        tracing::debug!(
            target: "sandloom::secrets",
            stores = stores.len(),
            "the secrets watched for rotation follow the reloaded configuration"
        );
        let watcher = Watcher::spawn(stores, &self.rotations, self.timing);
        self.state().watcher = Some(watcher);
        true
    }

    /// The watchers, for shutdown to stop; none start after it (the reload turn is closed).
    pub(crate) fn take(&self) -> Option<Watcher> {
        self.state().watcher.take()
    }
}

fn uses(config: &InfraConfig, extra: &[SecretUse]) -> Vec<SecretUse> {
    // The references in INFRA, then any secret a test named with `watch_secret`; `plan` merges
    // the dependents of a secret named twice.
    let mut uses = secret_uses(config);
    uses.extend(extra.iter().cloned());
    uses
}

fn signature(stores: &[StoreWatch]) -> Signature {
    stores
        .iter()
        .map(|s| (s.store.clone(), s.mode, s.watched.clone()))
        .collect()
}

/// The features of each `secrets` instance among started instances, given as (capability,
/// instance, features).
pub(crate) fn store_features<'a>(
    started: impl IntoIterator<Item = (&'a str, &'a str, &'a [&'static str])>,
) -> BTreeMap<String, Vec<&'static str>> {
    started
        .into_iter()
        .filter(|&(capability, _, _)| capability == crate::references::SECRETS)
        .map(|(_, instance, features)| (instance.to_owned(), features.to_vec()))
        .collect()
}
