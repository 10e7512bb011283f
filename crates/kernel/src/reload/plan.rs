//! What a reload would change, instance by instance.
// integrator: replaced by task E's plan

use std::collections::BTreeSet;

use crate::config::{InfraConfig, InstanceConfig};

/// What happens to one instance.
///
/// ```
/// use sandloom_kernel::reload::plan::Change;
/// let change = Change::Replaced { reasons: vec!["driver `memory` → `redis`".into()] };
/// assert_ne!(change, Change::Kept);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Configured the same: it keeps serving, untouched.
    Kept,
    /// Configured otherwise: a new instance is built beside it and takes over.
    Replaced {
        /// What differs, without any option's value (a value may be a secret).
        reasons: Vec<String>,
    },
    /// Configured only in the new configuration.
    Added,
    /// Configured only in the old configuration.
    Removed,
}

/// One instance and what happens to it.
///
/// ```
/// use sandloom_kernel::reload::plan::{Change, InstanceChange};
/// let change = InstanceChange { capability: "cache".into(), instance: "default".into(), change: Change::Kept };
/// assert_eq!(change.instance, "default");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceChange {
    /// The capability (`cache`).
    pub capability: String,
    /// The instance (`default`).
    pub instance: String,
    /// What happens to it.
    pub change: Change,
}

/// What a reload from one configuration to another changes, sorted by capability and instance.
///
/// ```
/// use sandloom_kernel::InfraConfig;
/// use sandloom_kernel::reload::plan::{Change, ReloadPlan};
///
/// let old = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\n", "old.toml").unwrap();
/// let new = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\ncapacity = 5\n", "new.toml").unwrap();
/// let plan = ReloadPlan::between(&old, &new);
/// assert!(matches!(plan.instances[0].change, Change::Replaced { .. }));
/// assert_eq!(ReloadPlan::between(&old, &old).instances[0].change, Change::Kept);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReloadPlan {
    /// Every instance of either configuration.
    pub instances: Vec<InstanceChange>,
}

impl ReloadPlan {
    /// Compare `old` and `new`: driver, options and the kernel's own keys of each instance;
    /// where they are written does not count.
    pub fn between(old: &InfraConfig, new: &InfraConfig) -> ReloadPlan {
        let mut names: BTreeSet<(&str, &str)> = BTreeSet::new();
        for instance in old.instances().chain(new.instances()) {
            names.insert((&instance.capability, &instance.instance));
        }
        let instances = names
            .into_iter()
            .map(|(capability, instance)| {
                let change = match (
                    old.instance(capability, instance),
                    new.instance(capability, instance),
                ) {
                    (Some(before), Some(after)) => {
                        let reasons = differences(before, after);
                        if reasons.is_empty() {
                            Change::Kept
                        } else {
                            Change::Replaced { reasons }
                        }
                    }
                    (None, Some(_)) => Change::Added,
                    (Some(_) | None, None) => Change::Removed,
                };
                InstanceChange {
                    capability: capability.to_owned(),
                    instance: instance.to_owned(),
                    change,
                }
            })
            .collect();
        ReloadPlan { instances }
    }
}

/// What differs between two configurations of one instance, naming keys, never values.
fn differences(before: &InstanceConfig, after: &InstanceConfig) -> Vec<String> {
    let mut reasons = Vec::new();
    if before.driver != after.driver {
        reasons.push(format!("driver `{}` → `{}`", before.driver, after.driver));
    }
    let keys: BTreeSet<&str> = before.options.keys().chain(after.options.keys()).collect();
    for key in keys {
        let (was, is) = (before.options.0.get(key), after.options.0.get(key));
        let text_was = before.env_strings.get(key);
        let text_is = after.env_strings.get(key);
        if was != is || text_was != text_is {
            reasons.push(match (was, is) {
                (None, Some(_)) => format!("option `{key}` added"),
                (Some(_), None) => format!("option `{key}` removed"),
                _ => format!("option `{key}` changed"),
            });
        }
    }
    if before.settings != after.settings {
        reasons.push("the kernel's keys of the instance changed (start_wait_ms, health_timeout_ms or telemetry)".to_owned());
    }
    reasons
}
