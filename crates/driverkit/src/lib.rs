//! # sandloom-driverkit — the driver door
//!
//! For people who write drivers: a driver implements the operation trait a module calls
//! ([`cache::Cache`], …) through that capability's provider trait ([`cache::CacheProvider`],
//! …), which adds the [`Driver`] lifecycle, declared features and a required contract version.
//! One [`register_driver!`] call makes it selectable by name in `INFRA`.
//!
//! Modules never depend on this crate (rule C004); applications link driver crates with
//! `sandloom::link_drivers!`.
//!
//! ## For modules
//!
//! Nothing here: depend on `sandloom-sdk-infra` and ask for capabilities by name. Depending on
//! this crate, or on a driver crate, is what `sandloom-lint` refuses as C004.
//!
//! ## For applications
//!
//! Nothing to call here either: add driver crates as dependencies, name each one in
//! `sandloom::link_drivers!`, and select their drivers by name in `INFRA`
//! (`driver = "stdout"` under `[notifier.default]` for the example below).
//!
//! ## For driver authors
//!
//! A driver crate has the same shape as the built-ins in `sandloom-embedded`: `lib.rs` (names,
//! registration), `options.rs` (a `#[serde(deny_unknown_fields)]` options type deriving `Debug`,
//! its secrets typed [`Secret`] or [`SecretUrl`] so they never show), `provider.rs` (the
//! traits), and tests that run the conformance kit. [`redact_url`] and [`error_chain`] turn an
//! address and an error into text fit for messages and logs.
//!
//! ```
//! use std::sync::Mutex;
//! use sandloom_driverkit::{Driver, DriverError, Version};
//! use sandloom_driverkit::notifier::{Message, NotifierOps, NotifierProvider, Receipt};
//! use sandloom_driverkit::sdk::{InfraError, InfraResult};
//!
//! #[derive(Debug, Default, serde::Deserialize)]
//! #[serde(deny_unknown_fields, default)]
//! pub struct StdoutOptions { pub prefix: String }
//!
//! pub struct StdoutNotifier { prefix: String, sent: Mutex<u64> }
//!
//! impl NotifierOps for StdoutNotifier {
//!     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
//!         if message.body.is_empty() {
//!             return Err(InfraError::invalid_input("notifier", "empty message body"));
//!         }
//!         println!("{}{}: {}", self.prefix, message.recipient, message.body);
//!         let mut sent = self.sent.lock().unwrap();
//!         *sent += 1;
//!         Ok(Receipt::new(sent.to_string()))
//!     }
//! }
//!
//! impl Driver for StdoutNotifier {
//!     type Options = StdoutOptions;
//!     fn supported_features() -> &'static [&'static str] { &[] }
//!     fn from_options(options: StdoutOptions) -> Result<Self, DriverError> {
//!         Ok(Self { prefix: options.prefix, sent: Mutex::new(0) })
//!     }
//! }
//!
//! impl NotifierProvider for StdoutNotifier {
//!     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! }
//!
//! sandloom_driverkit::register_driver!(notifier, "stdout", StdoutNotifier);
//! # fn main() {}
//! ```
//!
//! `register_driver!` places a `#[link_section]` static in your crate, which the `unsafe_code`
//! lint counts as unsafe: a crate with `#![forbid(unsafe_code)]` must use `deny` instead.
//!
//! Then prove the driver keeps its contract with the conformance kit of its capability (the
//! `sandloom-conformance` crate, as a dev-dependency: `cache_conformance!` and its siblings, one
//! `#[test]` per obligation), and define capabilities of your own with [`define_capability!`].

mod changes;
mod contract;
mod driver;
mod erase;
mod gate;
mod macros;
mod names;
mod providers;
mod redact;
mod route;
mod secret;

pub use contract::{Contract, ProvidedBy, RESERVED_CAPABILITIES, ReservedCapability};
pub use driver::{Driver, DriverError};
pub use providers::{cache, lock, notifier, objectstore, secrets, taskqueue};
pub use redact::redact_url;
/// `error`'s message followed by each of its sources', joined with `: `, for a log line or an
/// error message that must say more than the outer layer ("db error", "error sending request")
/// while the useful part is deeper in the chain.
///
/// A source whose message the line already ends with is skipped: many wrappers repeat their
/// cause's text, and the line should not say everything twice. Only `Display` texts are used,
/// so the result carries no more than the errors themselves show; keep secrets out of those.
///
/// The kernel words a driver's failed `start` or `stop` with this same function, so a driver's
/// own message and the kernel's report of the same error read alike.
///
/// ```
/// use sandloom_driverkit::{DriverError, error_chain};
///
/// let refused = std::io::Error::other("connection refused");
/// let err = DriverError::new("cannot reach 127.0.0.1:6379").with_source(refused);
/// assert_eq!(error_chain(&err), "cannot reach 127.0.0.1:6379: connection refused");
///
/// // A wrapper that already says its cause's text does not say it twice.
/// let refused = std::io::Error::other("connection refused");
/// let err = DriverError::new("cannot reach 127.0.0.1:6379: connection refused").with_source(refused);
/// assert_eq!(error_chain(&err), "cannot reach 127.0.0.1:6379: connection refused");
/// ```
pub use sandloom_kernel::__private::error_chain;
/// What [`Driver::health`] reports (re-exported from the kernel, which drivers never name).
///
/// ```
/// use sandloom_driverkit::Health;
/// assert!(!Health::Degraded("replica lag 12 s".into()).is_healthy());
/// ```
pub use sandloom_kernel::Health;
/// A capability's stability, as [`define_capability!`] takes it (re-exported from the kernel).
///
/// ```
/// use sandloom_driverkit::Stability;
/// assert_eq!(Stability::Experimental.to_string(), "experimental");
/// ```
pub use sandloom_kernel::registry::Stability;
/// The type of contract versions, such as `CONTRACT_VERSION` of the provider traits
/// (re-exported from the `semver` crate).
///
/// ```
/// use sandloom_driverkit::Version;
/// const CONTRACT: Version = Version::new(1, 0, 0);
/// assert_eq!(CONTRACT.to_string(), "1.0.0");
/// ```
pub use sandloom_kernel::semver::Version;
/// The module door, re-exported for drivers: operation traits, errors, values.
pub use sandloom_sdk_infra as sdk;
pub use secret::{Secret, SecretUrl};

/// Options for a driver that takes none: refuses every key.
///
/// ```
/// use sandloom_driverkit::NoOptions;
/// use serde::Deserialize;
/// use serde::de::value::{Error, MapDeserializer};
///
/// // What the kernel does with `[cache.default]` holding `driver = "…"` and nothing else:
/// let empty = MapDeserializer::<_, Error>::new(std::iter::empty::<(&str, i64)>());
/// assert_eq!(NoOptions::deserialize(empty).unwrap(), NoOptions {});
/// // … and with `anything = 1` added:
/// let extra = MapDeserializer::<_, Error>::new([("anything", 1)].into_iter());
/// assert!(NoOptions::deserialize(extra).is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

// Not public API: what the macros expand to. Versioned with this crate, never semver-stable.
#[doc(hidden)]
pub mod __private {
    pub use crate::contract::{checked_contract, is_reserved};
    pub use crate::driver::{
        DescribedOptions, SchemaProbe, UndescribedOptions, options_schema_unknown,
    };
    pub use crate::erase::{build, lifecycle, parse_options};
    pub use crate::gate::exit::{GateExit, may_run_elsewhere, poll_gated};
    pub use crate::gate::{Gate, GateContext, GateState, misrouted, refuse};
    pub use crate::names::{
        declared_bits, disjoint, feature_bit, feature_bit_quiet, operation_index,
    };
    pub use crate::route::{Held, Route};
    pub use sandloom_kernel::__private::linkme;
    pub use sandloom_kernel::registry::{
        BoxError, BoxFuture, BuildContext, BuiltDriver, CAPABILITIES, CapabilitySpec, DRIVERS,
        DriverEntry, ErasedLifecycle, LifecycleFuture, ParsedOptions, accepts_unknown_keys,
    };

    pub use sandloom_sdk_infra::__private::valid_name;
}
