//! # sandloom-kernel — the runtime
//!
//! Reads `INFRA`, finds the drivers it selects by name among those linked into the binary,
//! refuses to start with coded errors on conflicts or unusable drivers, and runs lifecycles.
//! It never depends on `sandloom-driverkit`: drivers reach it only as the type-erased
//! [`registry::DriverEntry`] values driverkit's macros produce.
//!
//! ## For applications
//!
//! Depend on the `sandloom` crate, which re-exports this one (and `sandloom-sdk-infra` as
//! `sandloom::sdk`). Name your driver crates in [`link_drivers!`], read [`InfraConfig`], start a
//! [`Kernel`], hand [`Running::infra`] to modules, and [`shutdown`](Running::shutdown) at the end;
//! [`Kernel::check`] is a dry run for CI.
//!
//! In operation: [`Running::readiness`] checks every driver, each under `health_timeout_ms`, and
//! folds the answers into a [`Readiness`] (with `health_interval_ms`, a background probe keeps
//! [`Running::last_health`] current and logs every change of state); `start_wait_ms` lets
//! startup wait for backends that are still coming up (see [`StartAttempts`]).
//!
//! ```no_run
//! use sandloom_kernel::{InfraConfig, Kernel};
//!
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     // Name every driver crate here: a crate no code names is not linked.
//!     let linked = sandloom_kernel::link_drivers!(/* sandloom_embedded, my_driver_crate */);
//!     let config = match InfraConfig::from_env() {
//!         Ok(config) => config,
//!         Err(err) => { eprintln!("{err}"); return std::process::ExitCode::FAILURE; }
//!     };
//!     let running = match Kernel::new(config, linked).start().await {
//!         Ok(running) => running,
//!         Err(err) => { eprintln!("{err}"); return std::process::ExitCode::FAILURE; }
//!     };
//!     println!("{}", running.report());
//!     // ... hand running.infra() to modules ...
//!     let _ = running.shutdown().await;
//!     std::process::ExitCode::SUCCESS
//! }
//! ```
//!
//! ## Error codes
//!
//! | code | when |
//! |---|---|
//! | SANDLOOM-B001 | `start` called outside a Tokio runtime, or on one without timers |
//! | SANDLOOM-B010 | `INFRA` malformed: bad TOML, not UTF-8, wrong type or value, unknown key, capability or risk, missing `driver` (with location) |
//! | SANDLOOM-B020 | a selected driver, or an instance a module requires, has no provider (naming the crate to link, or the unlinked dependencies that may provide it) |
//! | SANDLOOM-B021 | a selected name has two providers; a package claims a built-in name |
//! | SANDLOOM-B022 | a selected driver cannot be used (another contract major, a capability with no operation trait yet, options its type or `validate` refuses, an options type accepting unknown keys, features, build/start error — with `start_wait_ms`, after retrying a transient one — panic, timeout, a `start` blocking its thread) |
//! | SANDLOOM-B023 | experimental capability in production without `experimental_capability` |
//! | SANDLOOM-B024 | a module requires a feature its capability does not define |
//! | SANDLOOM-B030 | a driver failed to stop cleanly |
//!
//! Every code is a constant in [`codes`]; every problem carries its code, a description and an
//! action ([`Problem`]). A [`StartupError`] lists every problem at once, ordered by location:
//! a table of `INFRA` that cannot be read (kept in [`InfraConfig::problems`]) hides nothing of
//! the others.
//!
//! ## For modules
//!
//! Nothing here: modules depend on `sandloom-sdk-infra` only (rule L001), declare their needs
//! with its `requires!`, and receive the [`Infra`](sandloom_sdk_infra::Infra) this crate builds.
//! The kernel checks every linked `requires!` before any driver starts.
//!
//! ## For driver authors
//!
//! Nothing here either: drivers depend on `sandloom-driverkit`, whose `register_driver!` produces
//! the [`registry::DriverEntry`] the kernel reads, and which re-exports what a driver needs from
//! this crate ([`Health`], [`registry::Stability`], [`semver::Version`]).

pub mod codes;
pub mod conditions;
pub mod config;
mod construct;
mod contract_version;
mod diagnostics;
mod error;
mod error_text;
mod health;
pub mod known;
mod lifecycle;
mod link;
mod location;
mod options;
pub mod registry;
pub mod reload;
mod report;
mod resolve;
mod risk;
mod runtime;
mod specs;
mod suggest;
mod survey;
pub mod telemetry;
mod transient;
mod wait;

pub use config::{Environment, InfraConfig, InstanceConfig};
pub use error::{
    ConflictKind, Problem, ShutdownError, StartAttempts, StartupError, UnusableReason,
};
pub use health::{HealthReport, InstanceHealth, Readiness};
pub use link::LinkedDrivers;
pub use location::Location;
pub use options::{OptionsError, RawOptions};
pub use registry::Health;
pub use report::{ReportLine, StartupReport};
pub use runtime::{Kernel, Running};

// `crate::panic_message` is what resolve.rs and conditions.rs name; kept so they need no edit.
pub(crate) use error_text::panic_message;

// Not public API: what driverkit's macros expand to, and the helpers driverkit and the kits
// share with the kernel (one copy, so their texts cannot drift apart). Versioned with this crate.
#[doc(hidden)]
pub mod __private {
    pub use crate::error_text::{error_chain, panic_message};
    pub use linkme;

    /// How one instance is made from parsed options, as startup makes it (`construct::make`):
    /// for the conformance kits.
    pub mod construct {
        pub use crate::construct::make;
    }
}

/// The `semver` crate, whose `Version` contract versions are.
///
/// ```
/// use sandloom_kernel::semver::Version;
/// assert_eq!(Version::parse("1.2.0").unwrap(), Version::new(1, 2, 0));
/// ```
pub use semver;
