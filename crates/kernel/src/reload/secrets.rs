//! Building a reload's instances with their secret references read: the values come from the
//! `secrets` instances that serve once the reload is applied — a store the reload rebuilds
//! gives its new instance's values, any other the running one's. As at startup, the stores are
//! built first, in the order of the references between them, then the other instances.
//!
//! The check before (the same resolution as `check`) saw each reference as a placeholder; an
//! instance with references is resolved again here with its values, so an option that refuses
//! the value read refuses the reload (SANDLOOM-B022), and a value that cannot be read refuses it
//! too (SANDLOOM-B025). A rotated secret is read here: a reload that replaces an instance hands
//! it the value its store holds now.

use std::collections::BTreeMap;
use std::sync::Arc;

use sandloom_sdk_infra::{Requirement, SECRETS};

use super::{Fresh, Shared, build_beside};
use crate::config::InfraConfig;
use crate::error::Problem;
use crate::lifecycle::{Attempted, Attempts};
use crate::references::{self, Stores, read_wave};
use crate::registry;
use crate::resolve::{Inputs, PlannedInstance, resolve};

/// Build and start `planned` (instances of `new`) beside the running ones, store waves first.
/// On any problem every instance this started is stopped and the problems are returned.
pub(super) async fn build_reading_secrets(
    shared: &Shared,
    new: &InfraConfig,
    planned: Vec<PlannedInstance<'_>>,
) -> Result<Vec<Fresh>, Vec<Problem>> {
    if new.instances().all(|i| i.references.is_empty()) {
        return build_beside(new, planned).await;
    }
    let waves = references::instance_waves(new);
    // The stores serving now; a store this reload rebuilds is replaced by its new instance
    // once built, before any instance that reads from it is.
    let mut stores = running_stores(shared, new);
    let mut by_key: BTreeMap<(String, String), PlannedInstance<'_>> = planned
        .into_iter()
        .map(|p| {
            (
                (p.config.capability.to_owned(), p.config.instance.to_owned()),
                p,
            )
        })
        .collect();
    let mut fresh: Vec<Fresh> = Vec::new();
    for keys in waves {
        let mut to_build = Vec::new();
        let mut referring = Vec::new();
        for key in keys {
            let Some(plan) = by_key.remove(&key) else {
                continue; // kept: nothing to build
            };
            if new
                .instances
                .get((&key.0, &key.1))
                .is_some_and(|i| !i.references.is_empty())
            {
                referring.push(key);
            } else {
                to_build.push(plan);
            }
        }
        // Read, then resolved again with the values; `read` zeroes them when it drops.
        let (read, mut problems) = read_wave(
            new,
            &referring,
            &stores,
            &BTreeMap::new(),
            new.start_timeout(),
        )
        .await;
        let requirements: Vec<Requirement> = shared
            .requirements
            .iter()
            .filter(|r| {
                referring
                    .iter()
                    .any(|(c, i)| c == r.capability() && i == r.instance())
                    && read.config.instance(r.capability(), r.instance()).is_some()
            })
            .copied()
            .collect();
        match resolve(&Inputs {
            config: &read.config,
            drivers: registry::drivers(),
            specs: registry::capabilities(),
            requirements: &requirements,
            linked: &shared.linked,
        }) {
            Ok(planned) => to_build.extend(planned),
            Err(found) => problems.extend(found),
        }
        if !problems.is_empty() {
            drop(to_build);
            return Err(stop_fresh(fresh, new, problems).await);
        }
        match build_beside(new, to_build).await {
            Ok(built) => {
                for f in &built {
                    if let Some(secrets) = &f.secrets {
                        stores.insert(f.instance.to_string(), Arc::clone(secrets));
                    }
                }
                fresh.extend(built);
            }
            Err(problems) => return Err(stop_fresh(fresh, new, problems).await),
        }
    }
    Ok(fresh)
}

/// The `secrets` instances of `new` that run now.
fn running_stores(shared: &Shared, new: &InfraConfig) -> Stores {
    new.instances()
        .filter(|i| i.capability == references::SECRETS)
        .filter_map(|i| {
            shared
                .rotation
                .infra
                .capability_arc(&SECRETS, &i.instance)
                .ok()
                .map(|secrets| (i.instance.clone(), secrets))
        })
        .collect()
}

/// Stop the instances built so far (in reverse order), and return `problems` with theirs.
async fn stop_fresh(
    fresh: Vec<Fresh>,
    new: &InfraConfig,
    mut problems: Vec<Problem>,
) -> Vec<Problem> {
    let mut attempts = Attempts {
        drivers: fresh
            .into_iter()
            .map(|f| Attempted {
                capability: f.capability,
                instance: f.instance,
                driver: f.driver,
                lifecycle: f.lifecycle,
            })
            .collect(),
        stop_timeout: new.stop_timeout(),
    };
    problems.extend(attempts.stop_all().await);
    problems
}
