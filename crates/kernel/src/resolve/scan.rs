//! What is linked: the providers of the names `INFRA` selects, claims on built-in names, and
//! the spec of each configured capability.

use std::sync::OnceLock;

use crate::config::InstanceConfig;
use crate::diagnostics::defines_capability;
use crate::error::{ConflictKind, Problem};
use crate::known::{BUILTIN_DRIVERS, BUILTIN_OWNER, is_builtin};
use crate::registry::{self, CapabilitySpec, DriverEntry};
use crate::specs::WITHOUT_OPERATION_TRAIT;
use crate::suggest::closest;

use super::plan::Inputs;

/// The providers of each instance's driver name: looked up in the linked slice's [`Index`], or,
/// for another slice (resolution's tests), found by one pass over it, each with the index of
/// the instance in `InfraConfig::instances`.
pub(super) enum Providers {
    Indexed(&'static Index),
    Scanned(Vec<(usize, &'static DriverEntry)>),
}

impl Providers {
    /// The providers of `capability.driver`, selected by the instance at `index`, in the
    /// slice's order, added to `found`.
    pub(super) fn of(
        &self,
        (index, capability, driver): (usize, &str, &str),
        found: &mut Vec<&'static DriverEntry>,
    ) {
        match self {
            Self::Indexed(linked) => found.extend(linked.providers(capability, driver)),
            Self::Scanned(providers) => found.extend(
                providers
                    .iter()
                    .filter(|&&(i, _)| i == index)
                    .map(|&(_, entry)| entry),
            ),
        }
    }
}

/// What resolution needs of the linked slice, which cannot change while the process runs: its
/// entries keyed by a hash of their capability and name (for a lookup of the few selected
/// names), and the claims on built-in names by other packages. Made by the first resolution,
/// and kept: the scan over every linked entry was a third of a resolution's cost at 100 entries
/// (`BENCHMARKS.md`).
pub(super) struct Index {
    /// Every entry with the [`key`] of its names, sorted by key; entries of one key in the
    /// slice's order.
    keyed: Vec<(u64, &'static DriverEntry)>,
    /// SANDLOOM-B021 for each built-in name another package claims, in the slice's order.
    claims: Vec<Problem>,
}

/// A hash of `capability.name` (FNV-1a): comparing it reads no string, so a lookup compares the
/// names of the entries that have it only.
fn key(capability: &str, name: &str) -> u64 {
    fn add(hash: u64, bytes: &[u8]) -> u64 {
        bytes.iter().fold(hash, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
    }
    // The separator keeps `ab.c` and `a.bc` apart.
    add(
        add(add(0xcbf2_9ce4_8422_2325, capability.as_bytes()), b"."),
        name.as_bytes(),
    )
}

impl Index {
    fn of(drivers: &'static [DriverEntry]) -> Self {
        let mut keyed: Vec<(u64, &'static DriverEntry)> = drivers
            .iter()
            .map(|entry| (key(entry.capability, entry.name), entry))
            .collect();
        // Stable: the entries of one name keep the slice's order, as the pass gave them.
        keyed.sort_by_key(|&(key, _)| key);
        let mut claims = Vec::new();
        for entry in drivers {
            if is_builtin(entry.capability, entry.name) && entry.package != BUILTIN_OWNER {
                let problem = builtin_claim(drivers, entry);
                if !claims.contains(&problem) {
                    claims.push(problem);
                }
            }
        }
        Self { keyed, claims }
    }

    /// The entries registering `capability.driver`, in the slice's order.
    fn providers<'i>(
        &'i self,
        capability: &'i str,
        driver: &'i str,
    ) -> impl Iterator<Item = &'static DriverEntry> + 'i {
        let wanted = key(capability, driver);
        let from = self.keyed.partition_point(|&(key, _)| key < wanted);
        self.keyed[from..]
            .iter()
            .take_while(move |&&(key, _)| key == wanted)
            .map(|&(_, entry)| entry)
            .filter(move |entry| entry.name == driver && entry.capability == capability)
    }
}

/// The index of `drivers` when it is the linked slice ([`registry::drivers`]), made once.
fn linked_index(drivers: &'static [DriverEntry]) -> Option<&'static Index> {
    static LINKED: OnceLock<Index> = OnceLock::new();
    std::ptr::eq(drivers, registry::drivers()).then(|| LINKED.get_or_init(|| Index::of(drivers)))
}

/// The providers of the names the instances select, and any claim on a built-in name by another
/// package, selected or not (reported once in `problems`).
pub(super) fn scan(inputs: &Inputs<'_>, problems: &mut Vec<Problem>) -> Providers {
    let Some(linked) = linked_index(inputs.drivers) else {
        return Providers::Scanned(scan_all(inputs, problems));
    };
    for claim in &linked.claims {
        if !problems.contains(claim) {
            problems.push(claim.clone());
        }
    }
    Providers::Indexed(linked)
}

/// One pass over every entry of a slice that is not the linked one: the few selected names
/// collect their providers, and any claim on a built-in name by another package is a conflict
/// whether selected or not (reported once in `problems`).
///
/// Only an entry named like a selected or a built-in driver can matter, and nearly all are not:
/// the pass tells them apart by the length of their name, which reads no string, so it costs
/// less than a bare scan comparing every entry with the selected names, and allocates nothing
/// for an entry that does not matter (`BENCHMARKS.md`).
fn scan_all(
    inputs: &Inputs<'_>,
    problems: &mut Vec<Problem>,
) -> Vec<(usize, &'static DriverEntry)> {
    let selected: Vec<(&str, &str)> = inputs
        .config
        .instances()
        .map(|i| (i.capability.as_str(), i.driver.as_str()))
        .collect();
    let lengths = NameLengths::of(selected.iter().chain(BUILTIN_DRIVERS).map(|&(_, d)| d));
    let mut providers = Vec::new();
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
