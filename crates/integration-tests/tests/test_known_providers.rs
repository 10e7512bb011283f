//! The kernel's hand-kept list of which package provides which driver name (what SANDLOOM-B020
//! tells an application to add) against what the driver crates of this repository register:
//! linked all at once here, every driver they register must be listed with its package, and
//! every listed name must be registered by the package the list names.

use std::collections::BTreeSet;

use sandloom_kernel::known::{BUILTIN_OWNER, KNOWN_PROVIDERS, is_builtin, provider_of};
use sandloom_kernel::registry;

/// The packages whose drivers the list names: the built-ins' owner and the backend crates.
const PROVIDING_PACKAGES: [&str; 8] = [
    BUILTIN_OWNER,
    "sandloom-driver-amqp",
    "sandloom-driver-postgres",
    "sandloom-driver-redis",
    "sandloom-driver-s3",
    "sandloom-driver-smtp",
    "sandloom-driver-vault",
    "sandloom-driver-webhook",
];

/// `(capability, driver, package)` of every driver those packages register in this binary.
fn registered() -> BTreeSet<(&'static str, &'static str, &'static str)> {
    let linked = sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_driver_amqp,
        sandloom_driver_postgres,
        sandloom_driver_redis,
        sandloom_driver_s3,
        sandloom_driver_smtp,
        sandloom_driver_vault,
        sandloom_driver_webhook,
    );
    for package in PROVIDING_PACKAGES {
        assert!(linked.links(package), "{package} is not linked here");
    }
    registry::drivers()
        .iter()
        .filter(|entry| PROVIDING_PACKAGES.contains(&entry.package))
        .map(|entry| (entry.capability, entry.name, entry.package))
        .collect()
}

#[test]
fn every_package_of_the_list_registers_drivers_here() {
    let registered = registered();
    for package in PROVIDING_PACKAGES {
        assert!(
            registered.iter().any(|&(_, _, p)| p == package),
            "{package} registers no driver in this binary: is it linked?"
        );
    }
}

#[test]
fn every_registered_driver_is_listed_with_its_package() {
    let missing: Vec<String> = registered()
        .into_iter()
        .filter(|&(capability, driver, package)| provider_of(capability, driver) != Some(package))
        .map(|(capability, driver, package)| {
            format!(
                "`{capability}.{driver}` of `{package}` (listed: {:?})",
                provider_of(capability, driver)
            )
        })
        .collect();
    assert!(
        missing.is_empty(),
        "add these to KNOWN_PROVIDERS in crates/kernel/src/known.rs: {missing:#?}"
    );
}

#[test]
fn every_listed_name_is_registered_by_the_listed_package() {
    let registered = registered();
    let stale: Vec<_> = KNOWN_PROVIDERS
        .iter()
        .filter(|entry| !registered.contains(entry))
        .collect();
    assert!(
        stale.is_empty(),
        "KNOWN_PROVIDERS in crates/kernel/src/known.rs names drivers their package does not register: {stale:#?}"
    );
}

#[test]
fn the_builtins_are_exactly_the_drivers_of_the_builtin_owner() {
    for (capability, driver, package) in registered() {
        assert_eq!(
            is_builtin(capability, driver),
            package == BUILTIN_OWNER,
            "`{capability}.{driver}` of `{package}`"
        );
    }
}
