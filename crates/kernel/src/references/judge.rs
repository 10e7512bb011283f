//! The rules a configuration's references are held to that need more than the text: the option
//! holds a secret (its driver's schema says so), the store is a configured `secrets` instance,
//! and `secrets` instances do not refer to each other in a circle. `check` and `start` both
//! judge here, without reading any value.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use super::reason::instance_of;
use super::{ReferenceReason, Site, problem};
use crate::config::{InfraConfig, InstanceConfig};
use crate::error::Problem;
use crate::registry::DriverEntry;
use crate::suggest::closest;

/// The capability whose instances are stores.
pub(crate) const SECRETS: &str = sandloom_sdk_infra::secrets::NAME;

/// Every SANDLOOM-B025 problem of `config`'s references that needs no value read.
pub(crate) fn judge(config: &InfraConfig, drivers: &[DriverEntry]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let configured: Vec<String> = config
        .instances()
        .filter(|i| i.capability == SECRETS)
        .map(|i| i.instance.clone())
        .collect();
    for instance in config.instances() {
        for (option, reference) in instance.references() {
            let site = Site {
                capability: &instance.capability,
                instance: &instance.instance,
                option,
            };
            let written = (reference.store.clone(), reference.secret.clone());
            let mut refuse = |reason| {
                problems.push(problem(
                    site,
                    written.clone(),
                    reference.location.clone(),
                    reason,
                ));
            };
            if let Some(why) = not_secret_typed(instance, option, drivers) {
                refuse(ReferenceReason::NotSecretTyped { why });
            }
            match reference.store.split_once('.') {
                Some((capability, _)) if capability != SECRETS => {
                    refuse(ReferenceReason::NotSecretsStore {
                        capability: capability.to_owned(),
                    });
                }
                _ => {
                    let store = instance_of(&reference.store);
                    // A store the file configures but could not read is reported already.
                    if config.instance(SECRETS, store).is_none()
                        && !config.is_left_out(SECRETS, Some(store))
                    {
                        refuse(ReferenceReason::NoStore {
                            configured: configured.clone(),
                        });
                    }
                }
            }
        }
    }
    problems.extend(cycles(config));
    problems
}

/// Why `option` of `instance` is not known to hold a secret, or `None` when its driver's
/// options schema marks it `writeOnly` (what `Secret` and `SecretUrl` are). `None` too when no
/// driver of the name is linked: that is SANDLOOM-B020, reported on its own.
fn not_secret_typed(
    instance: &InstanceConfig,
    option: &str,
    drivers: &[DriverEntry],
) -> Option<String> {
    let entry = drivers
        .iter()
        .find(|e| e.capability == instance.capability && e.name == instance.driver)?;
    let driver = format!("`{}.{}`", instance.capability, instance.driver);
    // Driver code: a panic is a schema the kernel cannot read, not a crash.
    let schema = catch_unwind(AssertUnwindSafe(entry.options_schema))
        .ok()
        .flatten();
    let Some(text) = schema else {
        return Some(format!(
            "driver {driver} describes no options schema, so `{option}` is not known to hold one"
        ));
    };
    let Ok(root) = serde_json::from_str::<Value>(&text) else {
        return Some(format!(
            "the options schema of driver {driver} cannot be read, so `{option}` is not known to hold one"
        ));
    };
    let properties = root.get("properties").and_then(Value::as_object);
    let Some(property) = properties.and_then(|p| p.get(option)) else {
        let hint = properties
            .and_then(|p| closest(option, p.keys().map(String::as_str)))
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        return Some(format!("driver {driver} has no option `{option}`{hint}"));
    };
    if write_only(property, &root, 0) {
        None
    } else {
        Some(format!(
            "`{option}` of driver {driver} does not (its schema does not mark it `writeOnly`: it is not a `Secret` or `SecretUrl`)"
        ))
    }
}

/// Whether `schema` is `writeOnly`, directly, through a `$ref`, or in any branch of an
/// `anyOf`/`oneOf`/`allOf` (`Option<Secret<String>>` is `anyOf: [secret string, null]`).
fn write_only(schema: &Value, root: &Value, depth: usize) -> bool {
    if depth > 16 {
        return false;
    }
    if schema.get("writeOnly") == Some(&Value::Bool(true)) {
        return true;
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        && write_only(target, root, depth + 1)
    {
        return true;
    }
    ["anyOf", "oneOf", "allOf"].iter().any(|key| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| write_only(b, root, depth + 1)))
    })
}

/// The stores each `secrets` instance reads its own references from, by instance.
fn store_graph(config: &InfraConfig) -> BTreeMap<&str, BTreeSet<&str>> {
    config
        .instances()
        .filter(|i| i.capability == SECRETS)
        .map(|i| {
            let stores = i
                .references()
                .filter(|(_, r)| r.store.split_once('.').is_none_or(|(c, _)| c == SECRETS))
                .map(|(_, r)| instance_of(&r.store))
                .collect();
            (i.instance.as_str(), stores)
        })
        .collect()
}

/// A SANDLOOM-B025 problem for each reference of a `secrets` instance that leads back to it.
fn cycles(config: &InfraConfig) -> Vec<Problem> {
    let graph = store_graph(config);
    let mut problems = Vec::new();
    for instance in config.instances().filter(|i| i.capability == SECRETS) {
        for (option, reference) in instance.references() {
            let store = instance_of(&reference.store);
            let Some(path) = path_to(&graph, store, &instance.instance) else {
                continue;
            };
            let mut circle = vec![format!("{SECRETS}.{}", instance.instance)];
            circle.extend(path.iter().map(|s| format!("{SECRETS}.{s}")));
            problems.push(problem(
                Site {
                    capability: &instance.capability,
                    instance: &instance.instance,
                    option,
                },
                (reference.store.clone(), reference.secret.clone()),
                reference.location.clone(),
                ReferenceReason::Cycle { path: circle },
            ));
        }
    }
    problems
}

/// The stores from `from` to `to` along references, both included, or `None`.
fn path_to<'a>(
    graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    from: &'a str,
    to: &str,
) -> Option<Vec<&'a str>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![from]];
    while let Some(path) = stack.pop() {
        let last = *path.last()?;
        if last == to {
            return Some(path);
        }
        if !seen.insert(last) {
            continue;
        }
        for next in graph.get(last).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next);
            stack.push(longer);
        }
    }
    None
}

/// The `secrets` instances in the order they start: each wave only reads from stores of the
/// waves before it. Instances in a circle (refused by [`judge`]) are in none.
pub(crate) fn store_waves(config: &InfraConfig) -> Vec<Vec<String>> {
    let graph = store_graph(config);
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    let mut waves = Vec::new();
    loop {
        let wave: Vec<&str> = graph
            .iter()
            .filter(|(name, stores)| {
                !placed.contains(*name)
                    // A store that is not configured is refused by `judge`: it orders nothing.
                    && stores.iter().all(|s| placed.contains(s) || !graph.contains_key(s))
            })
            .map(|(name, _)| *name)
            .collect();
        if wave.is_empty() {
            return waves;
        }
        placed.extend(wave.iter().copied());
        waves.push(wave.into_iter().map(str::to_owned).collect());
    }
}

/// Every instance of `config`, keyed `(capability, instance)`, in the waves they start in: the
/// `secrets` instances in [`store_waves`] order, then one last wave of every other instance
/// (also a store in a circle, which `judge` refuses). Startup and a reload both build in this
/// order.
pub(crate) fn instance_waves(config: &InfraConfig) -> Vec<Vec<(String, String)>> {
    let mut waves: Vec<Vec<(String, String)>> = store_waves(config)
        .into_iter()
        .map(|wave| {
            wave.into_iter()
                .map(|store| (SECRETS.to_owned(), store))
                .collect()
        })
        .collect();
    let rest = config
        .instances
        .keys()
        .filter(|&(capability, instance)| {
            !waves
                .iter()
                .flatten()
                .any(|(c, i)| c == capability && i == instance)
        })
        .map(|(capability, instance)| (capability.to_owned(), instance.to_owned()))
        .collect();
    waves.push(rest);
    waves
}
