//! What a capability is to driverkit: a marker type per contract, and which drivers serve it.
//!
//! Every capability, built-in or defined by another package with
//! [`define_capability!`](crate::define_capability), gets the same three things from one macro
//! path: a provider trait whose `CONTRACT_VERSION` is checked against the contract's version at
//! compile time, a feature gate, and a marker type implementing [`Contract`] and [`ProvidedBy`].
//! [`register_driver!`](crate::register_driver) only ever goes through the marker, so there is no
//! second, unchecked way in.

use std::sync::Arc;

use crate::gate::Gate;
use crate::names::{ConstMessage, str_eq};
use crate::route::Route;
use crate::{Driver, Version};

/// A capability contract: its name, its current version and its operation trait.
///
/// Implemented by [`define_capability!`](crate::define_capability) on the marker type it
/// declares (and by driverkit on [`cache::CacheCapability`](crate::cache::CacheCapability) and
/// the other built-ins). Never implement it by hand.
///
/// ```
/// use sandloom_driverkit::cache::CacheCapability;
/// use sandloom_driverkit::Contract;
///
/// assert_eq!(CacheCapability::NAME, "cache");
/// assert_eq!(CacheCapability::VERSION.major, 1);
/// assert_eq!(CacheCapability::FEATURES, ["ttl", "increment", "bulk"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a capability contract",
    note = "name the marker type a package declares with `define_capability!` \
            (e.g. `my_contracts::FulltextCapability`), or a built-in one such as \
            `sandloom_driverkit::cache::CacheCapability`"
)]
pub trait Contract: 'static {
    /// The name used in `INFRA` (`cache`).
    const NAME: &'static str;
    /// The contract's current version. A driver must target the same major (the leftmost
    /// non-zero component: 0.1 and 0.2 are two majors).
    const VERSION: Version;
    /// Every optional feature a driver of this contract may declare.
    const FEATURES: &'static [&'static str];
    /// The operation trait object modules call (`dyn Cache`).
    type Operations: ?Sized + Send + Sync + 'static;
    /// Any driver of the contract behind its gate (`CacheGate<dyn Cache>`): what a route
    /// switches between on a reload.
    #[doc(hidden)]
    type Gated: ?Sized + Send + Sync + 'static;
    /// The route as the operation trait object modules are handed.
    #[doc(hidden)]
    fn routed(route: Arc<Route<Self>>) -> Arc<Self::Operations>
    where
        Self: Sized;
}

/// The driver type `T` serves the contract: implemented by the contract's macro for every type
/// that implements its provider trait, so "does not implement `CacheProvider`" is the compile
/// error for a driver registered under the wrong capability.
///
/// ```
/// use sandloom_driverkit::{Contract, ProvidedBy, Version};
///
/// // What `register_driver!` asks of a driver type and a contract.
/// fn contract_of<T: sandloom_driverkit::Driver, C: ProvidedBy<T>>() -> (&'static str, Version) {
///     (C::NAME, C::DRIVER_CONTRACT)
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{T}` does not serve the contract `{Self}`: it does not implement its provider trait",
    label = "registered for `{Self}`",
    note = "implement the contract's provider trait (e.g. `CacheProvider` for `cache`) for `{T}`, \
            or register it under the capability whose provider trait it implements"
)]
pub trait ProvidedBy<T: Driver>: Contract {
    /// `T` behind the contract's feature gate.
    #[doc(hidden)]
    type Gate: Gate<T>;
    /// The contract version `T` declares (its provider trait's `CONTRACT_VERSION`), checked at
    /// compile time to have the contract's major.
    const DRIVER_CONTRACT: Version;
    /// The gated driver as the operation trait object modules get.
    #[doc(hidden)]
    fn upcast(gated: Arc<Self::Gate>) -> Arc<Self::Operations>;
    /// The gated driver with its driver type erased, as a route serves it.
    #[doc(hidden)]
    fn erase(gated: Arc<Self::Gate>) -> Arc<Self::Gated>;
}

/// Names the runtime defines. A package may not define a capability under one of them.
///
/// ```
/// use sandloom_driverkit::RESERVED_CAPABILITIES;
///
/// let search = RESERVED_CAPABILITIES.iter().find(|r| r.name == "search").unwrap();
/// assert!(!search.has_operations); // defined, not public: no driver can serve it yet
/// ```
pub const RESERVED_CAPABILITIES: &[ReservedCapability] = &[
    ReservedCapability::public("cache"),
    ReservedCapability::public("notifier"),
    ReservedCapability::public("objectstore"),
    ReservedCapability::public("taskqueue"),
    ReservedCapability::public("lock"),
    ReservedCapability::public("secrets"),
    ReservedCapability::not_public("graph_store"),
    ReservedCapability::not_public("workflow"),
    ReservedCapability::not_public("search"),
];

/// A capability name the runtime defines, and how far it is.
///
/// ```
/// use sandloom_driverkit::RESERVED_CAPABILITIES;
/// assert!(RESERVED_CAPABILITIES.iter().any(|r| r.name == "cache" && r.has_operations));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedCapability {
    /// The name.
    pub name: &'static str,
    /// Whether it has an operation trait, so drivers can be registered for it.
    pub has_operations: bool,
    /// Its state, for people.
    pub state: &'static str,
}

impl ReservedCapability {
    const fn public(name: &'static str) -> Self {
        Self {
            name,
            has_operations: true,
            state: "public: operation trait, provider trait and conformance kit",
        }
    }

    const fn not_public(name: &'static str) -> Self {
        Self {
            name,
            has_operations: false,
            state: "defined, not public: no operation trait yet, so no driver can serve it",
        }
    }
}

/// Whether `name` is one the runtime defines.
#[doc(hidden)]
#[must_use]
pub const fn is_reserved(name: &str) -> bool {
    let mut i = 0;
    while i < RESERVED_CAPABILITIES.len() {
        if str_eq(RESERVED_CAPABILITIES[i].name, name) {
            return true;
        }
        i += 1;
    }
    false
}

/// `driver` when it runs on `contract` (the same major, the leftmost non-zero component, as the
/// kernel judges it: [`contract_compatible`](sandloom_kernel::registry::contract_compatible));
/// a compile error naming the contract and both versions otherwise (evaluated when
/// `register_driver!` reads [`ProvidedBy::DRIVER_CONTRACT`]).
#[doc(hidden)]
#[must_use]
pub const fn checked_contract(name: &str, driver: Version, contract: Version) -> Version {
    if !sandloom_kernel::registry::contract_compatible(&driver, &contract) {
        let message = ConstMessage::new()
            .push("the driver's CONTRACT_VERSION is ")
            .version(&driver)
            .push(", and the contract `")
            .push(name)
            .push("` it is compiled against is ")
            .version(&contract)
            .push(
                ": another major (the major is the leftmost non-zero component, as Cargo reads \
                 it: 0.1 and 0.2 differ, 1.2 and 1.9 do not). Implement the contract's current \
                 major, and write its version there",
            );
        panic!("{}", message.as_str());
    }
    // `Version` owns (empty) pre-release and build strings, which a const fn may not drop.
    std::mem::forget(contract);
    driver
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_are_the_runtime_s() {
        for name in [
            "cache",
            "notifier",
            "objectstore",
            "taskqueue",
            "lock",
            "graph_store",
            "workflow",
            "search",
            "secrets",
        ] {
            assert!(is_reserved(name), "{name}");
        }
        assert!(!is_reserved("fulltext"));
        assert!(!is_reserved("cach"));
    }

    #[test]
    fn a_contract_of_the_same_major_is_kept() {
        assert_eq!(
            checked_contract("cache", Version::new(1, 4, 0), Version::new(1, 2, 3)),
            Version::new(1, 4, 0)
        );
        assert_eq!(
            checked_contract("cache", Version::new(0, 1, 4), Version::new(0, 1, 0)),
            Version::new(0, 1, 4)
        );
    }

    #[test]
    #[should_panic(
        expected = "the driver's CONTRACT_VERSION is 2.0.0, and the contract `cache` it is compiled against is 1.0.0: another major"
    )]
    fn another_major_is_refused() {
        let _ = checked_contract("cache", Version::new(2, 0, 0), Version::new(1, 0, 0));
    }

    #[test]
    #[should_panic(
        expected = "the driver's CONTRACT_VERSION is 0.2.0, and the contract `fulltext` it is compiled against is 0.1.0: another major"
    )]
    fn under_1_0_the_minor_is_the_major() {
        let _ = checked_contract("fulltext", Version::new(0, 2, 0), Version::new(0, 1, 0));
    }

    #[test]
    fn numbers_are_written_in_full() {
        let message = ConstMessage::new()
            .version(&Version::new(0, 10, u64::MAX))
            .push(" ")
            .number(1_000);
        assert_eq!(message.as_str(), "0.10.18446744073709551615 1000");
        // 1 + 300 × 2 bytes: cut at 512, inside an `é`, which goes.
        let long = ConstMessage::new().push("a").push(&"é".repeat(300));
        assert_eq!(long.as_str(), format!("a{}", "é".repeat(255)));
    }
}
