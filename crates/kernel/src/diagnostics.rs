//! Guesses that help a person fix a problem, kept apart from the rules that find it: which
//! crate may provide a driver no linked crate provides (SANDLOOM-B020's "may provide it").

use sandloom_sdk_infra::Requirement;

use crate::config::InstanceConfig;
use crate::error::Problem;
use crate::known::provider_of;
use crate::link::LinkedDrivers;
use crate::registry::{CapabilitySpec, DriverEntry};
use crate::suggest::closest;

/// What is linked into the binary, and what the application depends on.
pub(crate) struct Binary<'a> {
    /// The crates named in `link_drivers!`, and the application's manifest.
    pub(crate) crates: &'a LinkedDrivers,
    pub(crate) drivers: &'a [DriverEntry],
    pub(crate) specs: &'a [CapabilitySpec],
    pub(crate) requirements: &'a [Requirement],
}

/// SANDLOOM-B020 for `instance`, whose driver no linked crate provides: with the linked names,
/// the closest one, and the crate that provides it when it is known or may be guessed.
pub(crate) fn no_driver(binary: &Binary<'_>, instance: &InstanceConfig) -> Problem {
    let mut linked: Vec<String> = binary
        .drivers
        .iter()
        .filter(|e| e.capability == instance.capability)
        .map(|e| e.name.to_owned())
        .collect();
    linked.sort();
    linked.dedup();
    let provided_by = provider_of(&instance.capability, &instance.driver);
    let dependency_not_linked = provided_by.is_some_and(|package| {
        !binary.crates.links(package) && binary.crates.is_dependency(package)
    });
    let suggestion =
        closest(&instance.driver, linked.iter().map(String::as_str)).map(str::to_owned);
    let candidates = if provided_by.is_some() {
        Vec::new()
    } else {
        may_provide(binary, &instance.capability, &instance.driver)
    };
    Problem::NoDriver {
        capability: instance.capability.clone(),
        instance: instance.instance.clone(),
        driver: instance.driver.clone(),
        location: instance.driver_location.clone(),
        linked,
        provided_by,
        dependency_not_linked,
        candidates,
        suggestion,
    }
}

/// The application's dependencies that may provide driver `capability.driver`, whose provider no one
/// knows: those not named in `link_drivers!` and not known to provide none. Known to provide
/// none are Sandloom's crates other than drivers, general-purpose crates of the ecosystem (no
/// driver crate is named like them), packages linked already (their drivers or capabilities
/// are in the binary) and modules (they declare requirements). Of the rest, those whose name
/// mentions the driver or the capability when there are any, else all of them.
fn may_provide(binary: &Binary<'_>, capability: &str, driver: &str) -> Vec<String> {
    const NOT_DRIVERS: &[&str] = &[
        "sandloom",
        "sandloom-kernel",
        "sandloom-sdk-infra",
        "sandloom-driverkit",
    ];
    /// Prefixes of ecosystem crates that are never driver crates.
    const GENERAL_PURPOSE: &[&str] = &[
        "anyhow",
        "async-trait",
        "bytes",
        "chrono",
        "clap",
        "criterion",
        "env_logger",
        "futures",
        "insta",
        "jsonschema",
        "linkme",
        "log",
        "once_cell",
        "pretty_assertions",
        "proptest",
        "rand",
        "regex",
        "semver",
        "serde",
        "tempfile",
        "thiserror",
        "time",
        "tokio",
        "toml",
        "tower",
        "tracing",
        "trybuild",
        "url",
        "uuid",
    ];
    let general = |package: &str| {
        GENERAL_PURPOSE.iter().any(|prefix| {
            package == *prefix
                || package
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with(['-', '_']))
        })
    };
    let linked = binary.crates;
    let mut unlinked: Vec<String> = linked
        .dependencies()
        .into_iter()
        .filter(|(_, package)| {
            !NOT_DRIVERS.contains(&package.as_str())
                && !general(package)
                && *package != linked.application()
                && !binary.drivers.iter().any(|e| e.package == package)
                && !binary.specs.iter().any(|s| s.package == package)
                && !binary.requirements.iter().any(|r| r.module() == package)
        })
        .map(|(name, _)| name.replace('-', "_"))
        .filter(|name| !linked.crates().contains(&name.as_str()))
        .collect();
    unlinked.sort();
    unlinked.dedup();
    let words = |name: &str| name.to_ascii_lowercase().replace('-', "_");
    let (driver, capability) = (words(driver), words(capability));
    let named: Vec<String> = unlinked
        .iter()
        .filter(|name| name.contains(&driver) || name.contains(&capability))
        .cloned()
        .collect();
    if named.is_empty() { unlinked } else { named }
}
