//! From `INFRA` and the linked slices to a plan of drivers to build, or every problem found.
//!
//! Resolution constructs nothing: it deserializes options and asks for features, both of which
//! are declared on the driver's type. `check` is resolution alone.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use sandloom_sdk_infra::Requirement;
use semver::{Comparator, Op, Version};

use crate::config::{EXPERIMENTAL_CAPABILITY_RISK, Environment, InfraConfig, InstanceConfig};
use crate::error::{ConflictKind, Problem, UnusableReason};
use crate::known::{BUILTIN_DRIVERS, BUILTIN_OWNER, is_builtin, provider_of};
use crate::link::LinkedDrivers;
use crate::panic_message;
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions, Stability};
use crate::suggest::closest;

/// What resolution selected for one instance.
pub(crate) struct PlannedInstance<'a> {
    /// Which instance: its names, all that startup needs once its options are parsed.
    pub(crate) config: InstanceNames<'a>,
    pub(crate) spec: &'static CapabilitySpec,
    pub(crate) entry: &'static DriverEntry,
    pub(crate) options: ParsedOptions,
}

/// The names of a configured instance, borrowed from the configuration: copying them (or the
/// whole `InstanceConfig`, options and locations included) for each instance was a measurable
/// part of a resolution, for values only an error or the report needs owned.
#[derive(Clone, Copy)]
pub(crate) struct InstanceNames<'a> {
    pub(crate) capability: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) driver: &'a str,
}

impl<'a> InstanceNames<'a> {
    fn of(instance: &'a InstanceConfig) -> Self {
        Self {
            capability: &instance.capability,
            instance: &instance.instance,
            driver: &instance.driver,
        }
    }
}

/// Everything resolution reads.
pub(crate) struct Inputs<'a> {
    pub(crate) config: &'a InfraConfig,
    pub(crate) drivers: &'static [DriverEntry],
    pub(crate) specs: &'static [CapabilitySpec],
    pub(crate) requirements: &'a [Requirement],
    pub(crate) linked: &'a LinkedDrivers,
}

pub(crate) fn resolve<'a>(inputs: &Inputs<'a>) -> Result<Vec<PlannedInstance<'a>>, Vec<Problem>> {
    let config = inputs.config;
    let mut problems = Vec::new();

    let Scan {
        providers,
        claimed_builtins,
    } = scan(inputs, &mut problems);

    let mut planned = Vec::with_capacity(config.instances().size_hint().0);
    for (index, instance) in config.instances().enumerate() {
        let Some(spec) = find_spec(inputs, &instance.capability, &mut problems, instance) else {
            continue;
        };
        if spec.stability == Stability::Experimental
            && config.environment() == Environment::Production
            && !config.accepts(EXPERIMENTAL_CAPABILITY_RISK)
        {
            problems.push(Problem::Experimental {
                capability: instance.capability.clone(),
                instance: instance.instance.clone(),
                location: instance.location.clone(),
            });
        }
        if claimed_builtins
            .iter()
            .any(|&(c, d)| c == instance.capability && d == instance.driver)
        {
            continue; // already reported as a built-in claim
        }
        let mut found = providers
            .iter()
            .filter(|&&(i, _)| i == index)
            .map(|&(_, entry)| entry);
        let entry = match (found.next(), found.next()) {
            (None, _) => {
                problems.push(no_driver(inputs, instance));
                continue;
            }
            (Some(entry), None) => entry,
            (Some(first), Some(second)) => {
                let mut packages: Vec<String> = [first, second]
                    .into_iter()
                    .chain(found)
                    .map(|e| e.package.to_owned())
                    .collect();
                packages.sort();
                problems.push(Problem::Conflict {
                    capability: instance.capability.clone(),
                    name: instance.driver.clone(),
                    packages,
                    kind: ConflictKind::SelectedTwice,
                });
                continue;
            }
        };
        match check_entry(spec, entry, instance) {
            Ok(options) => planned.push(PlannedInstance {
                config: InstanceNames::of(instance),
                spec,
                entry,
                options,
            }),
            Err(reasons) => problems.extend(
                reasons
                    .into_iter()
                    .map(|reason| unusable(&InstanceNames::of(instance), entry, reason)),
            ),
        }
    }

    check_requirements(inputs, &planned, &mut problems);
    if problems.is_empty() {
        Ok(planned)
    } else {
        Err(problems)
    }
}

/// What the pass over the linked entries found.
struct Scan {
    /// A provider of each instance's driver name, with the index of the instance in
    /// `InfraConfig::instances`.
    providers: Vec<(usize, &'static DriverEntry)>,
    /// Built-in names another package claims, each reported once in `problems`.
    claimed_builtins: Vec<(&'static str, &'static str)>,
}

/// One pass over every linked entry: the few selected names collect their providers, and any
/// claim on a built-in name by another package is a conflict whether selected or not.
///
/// Only an entry named like a selected or a built-in driver can matter, and nearly all are not:
/// the pass tells them apart by the length of their name, which reads no string, so it costs
/// less than a bare scan comparing every entry with the selected names, and allocates nothing
/// for an entry that does not matter (`BENCHMARKS.md`).
fn scan(inputs: &Inputs<'_>, problems: &mut Vec<Problem>) -> Scan {
    let selected: Vec<(&str, &str)> = inputs
        .config
        .instances()
        .map(|i| (i.capability.as_str(), i.driver.as_str()))
        .collect();
    let lengths = NameLengths::of(selected.iter().chain(BUILTIN_DRIVERS).map(|&(_, d)| d));
    let mut providers: Vec<(usize, &'static DriverEntry)> = Vec::new();
    let mut claimed_builtins: Vec<(&'static str, &'static str)> = Vec::new();
    let mut entries = inputs.drivers.iter();
    // `find` keeps the walk over the entries that do not matter a loop of a few instructions.
    while let Some(entry) = entries.find(|entry| lengths.may_be(entry.name)) {
        if is_builtin(entry.capability, entry.name) && entry.package != BUILTIN_OWNER {
            let problem = builtin_claim(inputs.drivers, entry);
            if !problems.contains(&problem) {
                problems.push(problem);
            }
            claimed_builtins.push((entry.capability, entry.name));
        }
        for (index, &(capability, driver)) in selected.iter().enumerate() {
            if entry.name == driver && entry.capability == capability {
                providers.push((index, entry));
            }
        }
    }
    Scan {
        providers,
        claimed_builtins,
    }
}

/// The lengths of a few names modulo 64, as a bit set: a name whose length is not in it is none
/// of them. Testing a name is a shift and a mask of its length, reading no string; a name that
/// passes (one of as many lengths as there are names) is compared in full.
struct NameLengths(u64);

impl NameLengths {
    fn bit(name: &str) -> u64 {
        1 << (name.len() % 64)
    }

    fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        Self(names.into_iter().fold(0, |set, name| set | Self::bit(name)))
    }

    /// Whether `name` may be one of the names.
    fn may_be(&self, name: &str) -> bool {
        self.0 & Self::bit(name) != 0
    }
}

fn find_spec(
    inputs: &Inputs<'_>,
    capability: &str,
    problems: &mut Vec<Problem>,
    instance: &InstanceConfig,
) -> Option<&'static CapabilitySpec> {
    let mut matching = inputs.specs.iter().filter(|spec| spec.name == capability);
    let first = matching.next();
    let Some(spec) = first else {
        let mut names: Vec<&str> = inputs.specs.iter().map(|spec| spec.name).collect();
        names.sort_unstable();
        names.dedup();
        let hint = closest(capability, names.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        problems.push(Problem::config(
            instance.location.clone(),
            format!("unknown capability `{capability}`{hint}"),
            format!(
                "known capabilities are {}; a third-party capability is known once the crate defining it is linked",
                names.join(", ")
            ),
        ));
        return None;
    };
    let others: Vec<&CapabilitySpec> = matching.collect();
    if others.is_empty() {
        return Some(spec);
    }
    let mut packages: Vec<String> = std::iter::once(spec)
        .chain(others)
        .map(|s| s.package.to_owned())
        .collect();
    packages.sort();
    let problem = Problem::Conflict {
        capability: capability.to_owned(),
        name: capability.to_owned(),
        packages,
        kind: ConflictKind::CapabilityDefinedTwice,
    };
    if !problems.contains(&problem) {
        problems.push(problem);
    }
    None
}

fn builtin_claim(drivers: &'static [DriverEntry], claimer: &DriverEntry) -> Problem {
    let mut packages: Vec<String> = drivers
        .iter()
        .filter(|e| e.capability == claimer.capability && e.name == claimer.name)
        .map(|e| e.package.to_owned())
        .collect();
    if !packages.iter().any(|p| p == BUILTIN_OWNER) {
        packages.push(BUILTIN_OWNER.to_owned());
    }
    packages.sort();
    packages.dedup();
    Problem::Conflict {
        capability: claimer.capability.to_owned(),
        name: claimer.name.to_owned(),
        packages,
        kind: ConflictKind::BuiltinClaimed {
            owner: BUILTIN_OWNER,
        },
    }
}

fn no_driver(inputs: &Inputs<'_>, instance: &InstanceConfig) -> Problem {
    let mut linked: Vec<String> = inputs
        .drivers
        .iter()
        .filter(|e| e.capability == instance.capability)
        .map(|e| e.name.to_owned())
        .collect();
    linked.sort();
    linked.dedup();
    let provided_by = provider_of(&instance.capability, &instance.driver);
    let dependency_not_linked = provided_by.is_some_and(|package| {
        !inputs.linked.links(package) && inputs.linked.is_dependency(package)
    });
    let suggestion =
        closest(&instance.driver, linked.iter().map(String::as_str)).map(str::to_owned);
    Problem::NoDriver {
        capability: instance.capability.clone(),
        instance: instance.instance.clone(),
        driver: instance.driver.clone(),
        location: instance.driver_location.clone(),
        linked,
        provided_by,
        dependency_not_linked,
        suggestion,
    }
}

/// SANDLOOM-B022 for `instance`, whose driver `entry` cannot be used for `reason`.
pub(crate) fn unusable(
    instance: &InstanceNames<'_>,
    entry: &'static DriverEntry,
    reason: UnusableReason,
) -> Problem {
    Problem::Unusable {
        capability: instance.capability.to_owned(),
        instance: instance.instance.to_owned(),
        driver: instance.driver.to_owned(),
        package: entry.package,
        reason,
    }
}

/// A driver targeting contract `driver` works on runtime contract `runtime` when `runtime`
/// matches `^driver`: same major (same minor under 1.0), and not older than the driver needs.
pub(crate) fn contract_compatible(driver: &Version, runtime: &Version) -> bool {
    Comparator {
        op: Op::Caret,
        major: driver.major,
        minor: Some(driver.minor),
        patch: Some(driver.patch),
        pre: driver.pre.clone(),
    }
    .matches(runtime)
}

fn check_entry(
    spec: &CapabilitySpec,
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, Vec<UnusableReason>> {
    let mut reasons = Vec::new();
    if !contract_compatible(&entry.contract_version, &spec.contract_version) {
        reasons.push(UnusableReason::ContractVersion {
            driver: entry.contract_version.clone(),
            runtime: spec.contract_version.clone(),
        });
    }
    let parsed = match parse_options(entry, instance) {
        Ok(parsed) => Some(parsed),
        Err(reason) => {
            reasons.push(reason);
            None
        }
    };
    let supported = match guarded("supported_features", entry.supported_features) {
        Ok(supported) => supported,
        Err(reason) => {
            reasons.push(reason);
            return Err(reasons);
        }
    };
    for &feature in supported {
        if spec.required_operations.contains(&feature) {
            reasons.push(UnusableReason::UndeclaredFeature {
                feature,
                why: format!(
                    "is a required operation of `{}`, never a feature",
                    spec.name
                ),
            });
        } else if !spec.features.contains(&feature) {
            reasons.push(UnusableReason::UndeclaredFeature {
                feature,
                why: format!(
                    "is not a feature of `{}` (its features: {})",
                    spec.name,
                    if spec.features.is_empty() {
                        "none".to_owned()
                    } else {
                        spec.features.join(", ")
                    }
                ),
            });
        }
    }
    if let Some(parsed) = &parsed {
        for &feature in &parsed.features {
            if !supported.contains(&feature) {
                reasons.push(UnusableReason::UndeclaredFeature {
                    feature,
                    why: "is missing from its `supported_features`".to_owned(),
                });
            }
        }
    }
    match parsed {
        Some(parsed) if reasons.is_empty() => Ok(parsed),
        _ => Err(reasons),
    }
}

/// Deserialize the instance's options, catching panics, letting environment overrides be
/// strings where the driver wants strings, and refusing types that accept unknown fields.
fn parse_options(
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, UnusableReason> {
    // Copied only when an override has to be made a string, which is rare.
    let mut options = Cow::Borrowed(&instance.options);
    let parsed = loop {
        match guarded("option parsing", || (entry.parse_options)(&options))? {
            Ok(parsed) => break parsed,
            Err(error) => {
                // `SANDLOOM__…__PASSWORD=123456` reads as an integer; a string field wants text.
                let key = error.key_path().into_iter().next();
                if let Some((key, raw)) = key.and_then(|k| instance.env_strings.get_key_value(&k))
                    && !options.is_str(key)
                {
                    options.to_mut().set_str(key, raw);
                    continue;
                }
                let key = error.key_path();
                let location = key.first().map_or_else(
                    || instance.location.clone(),
                    |k| instance.option_location(k).clone(),
                );
                return Err(UnusableReason::Options { error, location });
            }
        }
    };
    if guarded("option parsing", || (entry.accepts_unknown_keys)(&options))? {
        return Err(UnusableReason::AcceptsUnknownOptions);
    }
    Ok(parsed)
}

/// Call driver code, turning a panic into a reason the instance is unusable.
fn guarded<T>(phase: &'static str, call: impl FnOnce() -> T) -> Result<T, UnusableReason> {
    catch_unwind(AssertUnwindSafe(call)).map_err(|payload| UnusableReason::Panicked {
        phase,
        message: panic_message(payload.as_ref()),
    })
}

fn check_requirements(
    inputs: &Inputs<'_>,
    planned: &[PlannedInstance<'_>],
    problems: &mut Vec<Problem>,
) {
    let mut requirements: Vec<&Requirement> = inputs.requirements.iter().collect();
    requirements.sort_by_key(|r| (r.capability(), r.instance(), r.module()));
    requirements.dedup();
    for requirement in requirements {
        let configured = inputs
            .config
            .instance(requirement.capability(), requirement.instance());
        if configured.is_none() {
            let mut names: Vec<String> = inputs
                .config
                .instances()
                .filter(|i| i.capability == requirement.capability())
                .map(|i| i.instance.clone())
                .collect();
            names.sort();
            problems.push(Problem::NoInstance {
                capability: requirement.capability().to_owned(),
                instance: requirement.instance().to_owned(),
                module: requirement.module(),
                configured: names,
            });
            continue;
        }
        // An instance with its own problems was reported already.
        let Some(plan) = planned.iter().find(|p| {
            p.config.capability == requirement.capability()
                && p.config.instance == requirement.instance()
        }) else {
            continue;
        };
        for feature in requirement.features() {
            if !plan.spec.features.contains(feature) {
                problems.push(Problem::InvalidRequirement {
                    capability: requirement.capability().to_owned(),
                    feature: (*feature).to_owned(),
                    module: requirement.module(),
                    known: plan.spec.features.to_vec(),
                });
            } else if !plan.options.features.contains(feature) {
                problems.push(unusable(
                    &plan.config,
                    plan.entry,
                    UnusableReason::MissingFeature {
                        feature: (*feature).to_owned(),
                        module: requirement.module(),
                        declared: plan.options.features.clone(),
                    },
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::contract_compatible;
    use semver::Version;

    #[test]
    fn contract_versions_follow_semver_caret() {
        let v = |s: &str| Version::parse(s).unwrap();
        assert!(contract_compatible(&v("1.0.0"), &v("1.0.0")));
        assert!(
            contract_compatible(&v("1.0.0"), &v("1.3.0")),
            "older minor driver works"
        );
        assert!(
            !contract_compatible(&v("1.4.0"), &v("1.3.0")),
            "driver needs a newer runtime"
        );
        assert!(
            !contract_compatible(&v("2.0.0"), &v("1.3.0")),
            "other major"
        );
        assert!(
            !contract_compatible(&v("0.2.0"), &v("0.1.0")),
            "0.x minors are majors"
        );
    }
}
