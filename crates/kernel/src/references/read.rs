//! Reading references' values from started stores, into the options of the instances that
//! hold them: what startup does between waves.
//!
//! A value passes from the store's `Secret<Vec<u8>>` to the option as UTF-8 text: one copy,
//! held by the configuration of the wave ([`Wave`]), zeroed when the wave is dropped. What the
//! driver deserializes from it (serde and the `toml` table it reads copy it) is not ours to
//! zero; the driver's own `Secret` holds the value it keeps, and zeroes it on drop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::secrets::Secrets;
use zeroize::Zeroize as _;

use super::reason::instance_of;
use super::{ReferenceReason, Site, problem};
use crate::config::InfraConfig;
use crate::error::Problem;

/// The started stores, by `secrets` instance name.
pub(crate) type Stores = BTreeMap<String, Arc<dyn Secrets>>;

/// The part of a configuration one wave starts, its references replaced by their values.
pub(crate) struct Wave {
    pub(crate) config: InfraConfig,
    /// (capability, instance, option) of each value read into `config`.
    substituted: Vec<(String, String, String)>,
}

impl Drop for Wave {
    fn drop(&mut self) {
        for (capability, instance, option) in &self.substituted {
            if let Some(entry) = self.config.instances.get_mut((capability, instance))
                && let Some(toml::Value::String(value)) = entry.options.0.get_mut(option)
            {
                value.zeroize();
            }
        }
    }
}

/// The instances `keys` of `config`, each reference read from `stores` (a store that could
/// not start is in `failed`, with its problem's code), each read bounded by `timeout`, and a
/// SANDLOOM-B025 problem for each value that could not be read. An instance with such a
/// problem is left out of the wave, so that the others are still judged with their values and
/// their problems come with these. The configuration's own problems were reported by the
/// whole configuration's check: the wave has none of them.
pub(crate) async fn read_wave(
    config: &InfraConfig,
    keys: &[(String, String)],
    stores: &Stores,
    failed: &BTreeMap<String, &'static str>,
    timeout: Duration,
) -> (Wave, Vec<Problem>) {
    let mut part = config.clone();
    part.problems.clear();
    part.instances.retain(|i| {
        keys.iter()
            .any(|(capability, instance)| *capability == i.capability && *instance == i.instance)
    });
    let mut wave = Wave {
        config: part,
        substituted: Vec::new(),
    };
    let mut problems = Vec::new();
    let mut unread = Vec::new();
    for entry in wave.config.instances.values_mut() {
        let references = std::mem::take(&mut entry.references);
        for (option, reference) in references {
            let site = Site {
                capability: &entry.capability,
                instance: &entry.instance,
                option: &option,
            };
            let store = instance_of(&reference.store);
            let read = match (stores.get(store), failed.get(store)) {
                (Some(secrets), _) => read_one(secrets.as_ref(), &reference.secret, timeout).await,
                (None, Some(code)) => Err(ReferenceReason::StoreFailed { code }),
                (None, None) => Err(ReferenceReason::ReadFailed {
                    kind: "unavailable".to_owned(),
                    message: "the store was not started before the instance that reads from it"
                        .to_owned(),
                }),
            };
            match read {
                Ok(value) => {
                    entry
                        .options
                        .0
                        .insert(option.clone(), toml::Value::String(value));
                    wave.substituted.push((
                        entry.capability.clone(),
                        entry.instance.clone(),
                        option,
                    ));
                }
                Err(reason) => {
                    unread.push((entry.capability.clone(), entry.instance.clone()));
                    problems.push(problem(
                        site,
                        (reference.store.clone(), reference.secret.clone()),
                        reference.location.clone(),
                        reason,
                    ));
                }
            }
        }
    }
    for key in unread {
        // Its values read so far are zeroed as it drops.
        if let Some(mut entry) = wave.config.instances.remove((&key.0, &key.1)) {
            for (_, value) in &mut entry.options.0 {
                if let toml::Value::String(text) = value {
                    text.zeroize();
                }
            }
        }
    }
    (wave, problems)
}

/// One value as text, or why it cannot be had. The `Secret` read is zeroed when it drops here.
async fn read_one(
    secrets: &dyn Secrets,
    name: &str,
    timeout: Duration,
) -> Result<String, ReferenceReason> {
    let value = match tokio::time::timeout(timeout, secrets.get(name)).await {
        Ok(Ok(value)) => value,
        Ok(Err(error)) if error.kind() == ErrorKind::NotFound => {
            return Err(ReferenceReason::NotFound);
        }
        Ok(Err(error)) => {
            return Err(ReferenceReason::ReadFailed {
                kind: error.kind().to_string(),
                message: error.message().to_owned(),
            });
        }
        Err(_) => {
            return Err(ReferenceReason::ReadFailed {
                kind: ErrorKind::Timeout.to_string(),
                message: format!("no answer within {} ms", timeout.as_millis()),
            });
        }
    };
    value
        .expose_str()
        .map(str::to_owned)
        .map_err(|_| ReferenceReason::NotUtf8)
}
