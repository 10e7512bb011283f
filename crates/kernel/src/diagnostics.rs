//! Guesses that help a person fix a problem, kept apart from the rules that find it: which
//! crate may provide a driver no linked crate provides (SANDLOOM-B020's "may provide it").

use sandloom_sdk_infra::Requirement;

use crate::config::InstanceConfig;
use crate::error::Problem;
use crate::known::provider_of;
use crate::link::LinkedDrivers;
use crate::registry::{CapabilitySpec, DriverEntry};
use crate::specs::WITHOUT_OPERATION_TRAIT;
use crate::suggest::closest;
use crate::survey::{Provides, Survey, survey};

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
    // No crate can provide a driver of a reserved capability without an operation trait:
    // naming one would send people looking for it.
    let reserved = WITHOUT_OPERATION_TRAIT.contains(&instance.capability.as_str());
    let candidates = if provided_by.is_some() || reserved {
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

/// The application's dependencies that may provide driver `capability.driver`, whose provider
/// no one knows: those not named in `link_drivers!` whose sources register drivers
/// ([`survey`](crate::survey)), other than packages linked already (their drivers are in the
/// binary). Of those, the ones whose name mentions the driver or the capability when there are
/// any, else all of them. None when the sources cannot be read: a guess would name crates that
/// cannot help (module or contract crates, general-purpose ones).
fn may_provide(binary: &Binary<'_>, capability: &str, driver: &str) -> Vec<String> {
    let Some(survey) = survey(binary.crates) else {
        return Vec::new();
    };
    let unlinked = unlinked(binary, survey, |provides| provides.drivers);
    let words = |name: &str| name.to_ascii_lowercase().replace('-', "_");
    let (driver, capability) = (words(driver), words(capability));
    let named: Vec<String> = unlinked
        .iter()
        .filter(|name| name.contains(&driver) || name.contains(&capability))
        .cloned()
        .collect();
    if named.is_empty() { unlinked } else { named }
}

/// The application's dependencies, by the name code uses, that are not named in
/// `link_drivers!`, are not linked otherwise, and whose survey passes `wanted`; sorted.
fn unlinked(
    binary: &Binary<'_>,
    survey: &Survey,
    wanted: impl Fn(&Provides) -> bool,
) -> Vec<String> {
    let linked = binary.crates;
    let mut found: Vec<String> = linked
        .dependencies()
        .into_iter()
        .filter(|(_, package)| {
            *package != linked.application()
                && !binary.drivers.iter().any(|e| e.package == package)
                && !binary.specs.iter().any(|s| s.package == package)
                && !binary.requirements.iter().any(|r| r.module() == package)
        })
        .map(|(name, _)| name.replace('-', "_"))
        .filter(|name| !linked.crates().contains(&name.as_str()))
        .filter(|name| survey.get(name).is_some_and(&wanted))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The unlinked dependencies that define capability `capability` (SANDLOOM-B010 names them).
pub(crate) fn defines_capability(binary: &Binary<'_>, capability: &str) -> Vec<String> {
    survey(binary.crates).map_or_else(Vec::new, |survey| {
        unlinked(binary, survey, |provides| {
            provides.capabilities.iter().any(|c| c == capability)
        })
    })
}
