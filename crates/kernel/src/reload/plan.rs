//! What a reload would do: per instance, kept, replaced (and why), added or removed.
//!
//! The one comparison of two configurations: `Running::reload` acts on it and `infra diff`
//! prints it, so the two cannot disagree.

use std::collections::BTreeSet;
use std::time::Duration;

use toml::Value;

use crate::config::{InfraConfig, InstanceConfig};

/// What happens to one instance.
///
/// ```
/// use sandloom_kernel::reload::Change;
///
/// let change = Change::Replaced { reasons: vec!["option `url` changed".into()] };
/// assert_eq!(change.as_str(), "replaced");
/// assert_eq!(Change::Kept.as_str(), "kept");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing the instance is made of changed: it keeps serving, untouched.
    Kept,
    /// Its driver, an option or one of the kernel's keys for it changed: a new instance is built
    /// beside it. `reasons` say what changed, never an option's value.
    Replaced {
        /// What changed, one short line each (``driver `redis` → `memory` ``).
        reasons: Vec<String>,
    },
    /// Configured in the new configuration only.
    Added,
    /// Configured in the old configuration only.
    Removed,
}

impl Change {
    /// `kept`, `replaced`, `added` or `removed`: the word `infra diff` prints and its JSON
    /// carries.
    ///
    /// ```
    /// assert_eq!(sandloom_kernel::reload::Change::Removed.as_str(), "removed");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Kept => "kept",
            Self::Replaced { .. } => "replaced",
            Self::Added => "added",
            Self::Removed => "removed",
        }
    }
}

/// One instance of a [`ReloadPlan`].
///
/// ```
/// use sandloom_kernel::reload::{Change, InstanceChange};
///
/// let kept = InstanceChange { capability: "cache".into(), instance: "default".into(), change: Change::Kept };
/// assert_eq!(kept.qualified_name(), "cache.default");
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

impl InstanceChange {
    /// `capability.instance`.
    ///
    /// ```
    /// # use sandloom_kernel::reload::{Change, InstanceChange};
    /// let added = InstanceChange { capability: "lock".into(), instance: "jobs".into(), change: Change::Added };
    /// assert_eq!(added.qualified_name(), "lock.jobs");
    /// ```
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.capability, self.instance)
    }
}

/// What a reload from one configuration to another would do, per instance.
///
/// Compared for each instance (`capability.instance`): the driver, every option, and the
/// kernel's own keys as they apply to the instance (`start_wait_ms`, `health_timeout_ms` — its
/// own, or the top-level one it inherits — and `telemetry`). Any difference replaces the
/// instance: the running one then always is exactly what its configuration says. Where a value
/// came from does not count: its location, the formatting, a table moved, a comment, or the same
/// value from the file or from a `SANDLOOM__…` override. A value's type does: the integer `1`
/// and the string `"1"` differ. Option values are opaque (a secret reference
/// `{ secret = "…", store = "…" }` is a value like any other) and are never shown: a reason
/// names the option only.
///
/// An instance that reads a secret from a `secrets` instance the plan replaces is replaced too,
/// although its own table did not change (``reads its secrets from secrets.vault, which is
/// replaced``), and so are the readers of a store replaced that way: it was built with a value
/// of the old store, and the new store may hold another. Values are never compared (the kernel
/// keeps none), so it is replaced whether its value changed or not.
///
/// The settings of the whole process (`environment`, `accepted_risks`, `start_timeout_ms`,
/// `stop_timeout_ms`, `health_interval_ms`) replace no instance: none of them is part of what
/// an instance is built from (`environment` and `accepted_risks` decide what the check of the
/// new configuration accepts; the others bound starting, stopping and probing). Neither does a
/// `secrets` instance's `rotation_poll_ms`: it says how often the kernel looks at the store
/// for rotated secrets, so a change restarts that watch and keeps the store. Their changes are
/// listed in [`settings`](Self::settings).
///
/// Instances are in start order: by capability, then instance, as `Kernel::start` starts them
/// (removed ones where they would be if still configured).
///
/// `between` compares what each configuration holds; it does not check them. A configuration
/// with problems ([`InfraConfig::problems`], or refused by [`Kernel::check`](crate::Kernel::check))
/// cannot be reloaded to: check first, as `infra diff` and `Running::reload` do.
///
/// ```
/// use sandloom_kernel::InfraConfig;
/// use sandloom_kernel::reload::{Change, ReloadPlan};
///
/// let old = InfraConfig::from_toml_str(
///     "[cache.default]\ndriver = \"redis\"\nurl = \"redis://a\"\n\
///      [lock.default]\ndriver = \"memory\"\n",
///     "old.toml",
/// ).unwrap();
/// let new = InfraConfig::from_toml_str(
///     "# moved and commented: still the same lock\n\
///      [lock.default]\ndriver = \"memory\"\n\
///      [cache.default]\ndriver = \"memory\"\ncapacity = 100\n",
///     "new.toml",
/// ).unwrap();
/// let plan = ReloadPlan::between(&old, &new);
/// assert_eq!(plan.instances[0].qualified_name(), "cache.default");
/// assert_eq!(plan.instances[0].change, Change::Replaced { reasons: vec![
///     "driver `redis` → `memory`".into(),
///     "option `capacity` added".into(),
///     "option `url` removed".into(),
/// ]});
/// assert_eq!(plan.instances[1].change, Change::Kept);
/// assert!(plan.has_changes());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReloadPlan {
    /// Every instance of either configuration, in start order.
    pub instances: Vec<InstanceChange>,
    /// Changes of the settings of the whole process, one short line each
    /// (`stop_timeout_ms 10000 → 5000`), and of a `secrets` instance's `rotation_poll_ms`
    /// (`secrets.vault rotation_poll_ms 30000 → 5000`); they replace no instance.
    pub settings: Vec<String>,
}

impl ReloadPlan {
    /// The plan from `old` to `new` (see [`ReloadPlan`] for what is compared).
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    /// use sandloom_kernel::reload::ReloadPlan;
    ///
    /// let config = InfraConfig::embedded_defaults();
    /// let plan = ReloadPlan::between(&config, &config.clone());
    /// assert_eq!(plan.instances.len(), 5);
    /// assert!(!plan.has_changes());
    /// ```
    pub fn between(old: &InfraConfig, new: &InfraConfig) -> ReloadPlan {
        // Both maps are keyed by (capability, instance): their union, sorted, is the start order.
        let keys: BTreeSet<(&str, &str)> =
            old.instances.keys().chain(new.instances.keys()).collect();
        let instances = keys
            .into_iter()
            .map(|key| {
                let change = match (old.instances.get(key), new.instances.get(key)) {
                    (Some(before), Some(after)) => {
                        let reasons = instance_reasons((old, before), (new, after));
                        if reasons.is_empty() {
                            Change::Kept
                        } else {
                            Change::Replaced { reasons }
                        }
                    }
                    (Some(_), None) => Change::Removed,
                    (None, _) => Change::Added,
                };
                InstanceChange {
                    capability: key.0.to_owned(),
                    instance: key.1.to_owned(),
                    change,
                }
            })
            .collect();
        let mut plan = ReloadPlan {
            instances,
            settings: setting_reasons(old, new),
        };
        plan.replace_readers_of_rebuilt_stores(new);
        plan
    }

    /// Replace every instance of `new` that reads a secret from a `secrets` instance this plan
    /// rebuilds (replaced, or added again), and in turn the readers of a store so replaced: an
    /// instance holds the values it read when it was built, from the old store, and the new one
    /// may hold others. The kernel never keeps a value to compare (each is zeroed once the
    /// options are parsed), so a reader is replaced whether its value changed or not.
    pub(crate) fn replace_readers_of_rebuilt_stores(&mut self, new: &InfraConfig) {
        loop {
            let rebuilt: BTreeSet<String> = self
                .instances
                .iter()
                .filter(|line| {
                    line.capability == crate::references::SECRETS
                        && matches!(line.change, Change::Replaced { .. } | Change::Added)
                })
                .map(|line| line.instance.clone())
                .collect();
            let mut changed = false;
            for line in &mut self.instances {
                let Some(reader) = new.instances.get((&line.capability, &line.instance)) else {
                    continue;
                };
                let stores: BTreeSet<&str> = reader
                    .references
                    .values()
                    .map(|r| r.store.as_str())
                    .filter(|store| rebuilt.contains(*store))
                    .collect();
                for store in stores {
                    let reason =
                        format!("reads its secrets from secrets.{store}, which is replaced");
                    match &mut line.change {
                        Change::Kept => {
                            line.change = Change::Replaced {
                                reasons: vec![reason],
                            };
                            changed = true;
                        }
                        Change::Replaced { reasons } if !reasons.contains(&reason) => {
                            reasons.push(reason);
                            changed = true;
                        }
                        _ => {}
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Whether anything changes: an instance replaced, added or removed, or a setting.
    ///
    /// ```
    /// assert!(!sandloom_kernel::reload::ReloadPlan::default().has_changes());
    /// ```
    pub fn has_changes(&self) -> bool {
        !self.settings.is_empty() || self.instances.iter().any(|i| i.change != Change::Kept)
    }
}

/// Why the instance must be replaced; empty when it is kept.
fn instance_reasons(
    (old_infra, old): (&InfraConfig, &InstanceConfig),
    (new_infra, new): (&InfraConfig, &InstanceConfig),
) -> Vec<String> {
    let mut reasons = Vec::new();
    if old.driver != new.driver {
        reasons.push(format!("driver `{}` → `{}`", old.driver, new.driver));
    }
    // Keys of both tables, each once, sorted; a secret reference (`{ secret = "…" }`) is an
    // option's value like a literal, so literal ↔ reference or another secret is a change.
    let mut keys: Vec<&str> = old
        .options
        .keys()
        .chain(new.options.keys())
        .chain(old.references.keys().map(String::as_str))
        .chain(new.references.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        match (option(old, key), option(new, key)) {
            (Some(_), None) => reasons.push(format!("option `{key}` removed")),
            (None, Some(_)) => reasons.push(format!("option `{key}` added")),
            (Some(a), Some(b)) if !same_option(&a, &b) => {
                reasons.push(format!("option `{key}` changed"));
            }
            _ => {}
        }
    }
    // The kernel's keys, as they apply: a top-level `health_timeout_ms` an instance inherits
    // changes it as its own would. They are numbers and booleans, never secrets: shown.
    let millis = |d: Duration| d.as_millis();
    let (before, after) = (
        old.start_wait(old_infra).as_millis(),
        new.start_wait(new_infra).as_millis(),
    );
    if before != after {
        reasons.push(format!("start_wait_ms {before} → {after}"));
    }
    let (before, after) = (
        millis(old.health_timeout(old_infra)),
        millis(new.health_timeout(new_infra)),
    );
    if before != after {
        reasons.push(format!("health_timeout_ms {before} → {after}"));
    }
    if old.telemetry() != new.telemetry() {
        reasons.push(format!(
            "telemetry {} → {}",
            old.telemetry(),
            new.telemetry()
        ));
    }
    // `rotation_poll_ms` is not what the store is built from, only how the kernel watches it:
    // a change restarts that watch (see `setting_reasons`), never the store.
    // Naming every field: a kernel key added to `InstanceSettings` fails to compile here until
    // the plan compares it.
    let crate::config::settings::InstanceSettings {
        start_wait: _,
        health_timeout: _,
        telemetry: _,
        rotation_poll: _,
    } = &new.settings;
    reasons
}

/// An option as the driver would see it: a secret reference, or a value and the raw text of the
/// override that set it when that text is not simply how the value is written
/// (`SANDLOOM__…__PASSWORD=+5` reads as the integer 5, and a string field gets `+5`).
enum Opt<'a> {
    Literal(&'a Value, Option<&'a str>),
    Reference(&'a crate::references::SecretReference),
}

fn option<'a>(instance: &'a InstanceConfig, key: &str) -> Option<Opt<'a>> {
    if let Some(reference) = instance.references.get(key) {
        return Some(Opt::Reference(reference));
    }
    let value = instance.options.0.get(key)?;
    let raw = instance
        .env_strings
        .get(key)
        .map(String::as_str)
        .filter(|raw| *raw != value.to_string());
    Some(Opt::Literal(value, raw))
}

fn same_option(a: &Opt<'_>, b: &Opt<'_>) -> bool {
    match (a, b) {
        (Opt::Literal(a, a_raw), Opt::Literal(b, b_raw)) => same_value(a, b) && a_raw == b_raw,
        // Where each is written does not count.
        (Opt::Reference(a), Opt::Reference(b)) => (&a.store, &a.secret) == (&b.store, &b.secret),
        _ => false,
    }
}

/// Equal values of equal types. Floats by value, and a NaN equal to itself: an unchanged
/// `ratio = nan` must not replace an instance on every reload.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Exactly equal: a float option written the same way is the same value.
        #[allow(clippy::float_cmp)]
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Table(x), Value::Table(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same_value(x, y)))
        }
        (a, b) => a == b,
    }
}

/// Changes of the settings of the whole process.
fn setting_reasons(old: &InfraConfig, new: &InfraConfig) -> Vec<String> {
    let mut reasons = Vec::new();
    if old.environment != new.environment {
        reasons.push(format!(
            "environment {} → {}",
            old.environment, new.environment
        ));
    }
    if old.accepted_risks != new.accepted_risks {
        let list = |config: &InfraConfig| {
            let risks: Vec<&str> = config.accepted_risks().collect();
            format!("[{}]", risks.join(", "))
        };
        reasons.push(format!("accepted_risks {} → {}", list(old), list(new)));
    }
    for (key, before, after) in [
        ("start_timeout_ms", old.start_timeout, new.start_timeout),
        ("stop_timeout_ms", old.stop_timeout, new.stop_timeout),
    ] {
        if before != after {
            reasons.push(format!(
                "{key} {} → {}",
                before.as_millis(),
                after.as_millis()
            ));
        }
    }
    // Per instance, but the kernel's alone: the watch of a store's secrets restarts, the store
    // does not.
    for after in new.instances.values() {
        if let Some(before) = old.instances.get((&after.capability, &after.instance))
            && before.rotation_poll() != after.rotation_poll()
        {
            reasons.push(format!(
                "{}.{} rotation_poll_ms {} → {}",
                after.capability,
                after.instance,
                before.rotation_poll().as_millis(),
                after.rotation_poll().as_millis()
            ));
        }
    }
    if old.health_interval != new.health_interval {
        let show = |interval: Option<Duration>| {
            interval.map_or_else(|| "off".to_owned(), |d| d.as_millis().to_string())
        };
        reasons.push(format!(
            "health_interval_ms {} → {}",
            show(old.health_interval),
            show(new.health_interval)
        ));
    }
    reasons
}
