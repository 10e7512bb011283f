//! What is linked: the providers of the names `INFRA` selects, claims on built-in names, and
//! the spec of each configured capability.

use crate::config::InstanceConfig;
use crate::diagnostics::defines_capability;
use crate::error::{ConflictKind, Problem};
use crate::known::{BUILTIN_DRIVERS, BUILTIN_OWNER, is_builtin};
use crate::registry::{CapabilitySpec, DriverEntry};
use crate::specs::WITHOUT_OPERATION_TRAIT;
use crate::suggest::closest;

use super::plan::Inputs;

/// A provider of each instance's driver name, with the index of the instance in
/// `InfraConfig::instances`.
pub(super) type Providers = Vec<(usize, &'static DriverEntry)>;

/// One pass over every linked entry: the few selected names collect their providers, and any
/// claim on a built-in name by another package is a conflict whether selected or not (reported
/// once in `problems`).
///
/// Only an entry named like a selected or a built-in driver can matter, and nearly all are not:
/// the pass tells them apart by the length of their name, which reads no string, so it costs
/// less than a bare scan comparing every entry with the selected names, and allocates nothing
/// for an entry that does not matter (`BENCHMARKS.md`).
pub(super) fn scan(inputs: &Inputs<'_>, problems: &mut Vec<Problem>) -> Providers {
    let selected: Vec<(&str, &str)> = inputs
        .config
        .instances()
        .map(|i| (i.capability.as_str(), i.driver.as_str()))
        .collect();
    let lengths = NameLengths::of(selected.iter().chain(BUILTIN_DRIVERS).map(|&(_, d)| d));
    let mut providers: Providers = Vec::new();
    let mut entries = inputs.drivers.iter();
    // `find` keeps the walk over the entries that do not matter a loop of a few instructions.
    while let Some(entry) = entries.find(|entry| lengths.may_be(entry.name)) {
        if is_builtin(entry.capability, entry.name) && entry.package != BUILTIN_OWNER {
            let problem = builtin_claim(inputs.drivers, entry);
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        for (index, &(capability, driver)) in selected.iter().enumerate() {
            if entry.name == driver && entry.capability == capability {
                providers.push((index, entry));
            }
        }
    }
    providers
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

/// The spec of `instance`'s capability, or `None` with the problem (unknown, or defined by two
/// packages) in `problems`.
pub(super) fn find_spec(
    inputs: &Inputs<'_>,
    problems: &mut Vec<Problem>,
    instance: &InstanceConfig,
) -> Option<&'static CapabilitySpec> {
    let capability = instance.capability.as_str();
    let mut matching = inputs.specs.iter().filter(|spec| spec.name == capability);
    let first = matching.next();
    let Some(spec) = first else {
        // Not the reserved names with no operation trait: INFRA cannot use them, so listing or
        // suggesting one would lead into another refusal.
        let mut names: Vec<&str> = inputs
            .specs
            .iter()
            .map(|spec| spec.name)
            .filter(|name| !WITHOUT_OPERATION_TRAIT.contains(name))
            .collect();
        names.sort_unstable();
        names.dedup();
        let hint = closest(capability, names.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        let definers = defines_capability(&super::binary(inputs), capability);
        let action = match definers.as_slice() {
            [] => format!(
                "known capabilities are {}; a third-party capability is known once the crate defining it is linked",
                names.join(", ")
            ),
            [one] => format!(
                "link the crate that defines it: `{one}`, a dependency of this application, defines `{capability}` but no code names it, so it is not linked into the binary; add it to the application's `sandloom::link_drivers!(…)` call"
            ),
            several => format!(
                "link the crate that defines it: dependencies of this application that define `{capability}` but are not linked into the binary: {}; add the one you mean to the application's `sandloom::link_drivers!(…)` call",
                several
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        problems.push(Problem::config(
            instance.capability_location.clone(),
            format!("unknown capability `{capability}`{hint}"),
            action,
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
