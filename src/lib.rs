//! # Sandloom — infrastructure by capability
//!
//! The application door: everything an application needs to read `INFRA`, link driver crates,
//! start infrastructure and hand it to modules. It re-exports, by name, the part of
//! `sandloom-kernel` an application uses, `sandloom-sdk-infra` (as [`sdk`]) and, with the `cli`
//! feature, `sandloom-cli` (as `cli`: the `infra` command line); it holds no code of its own.
//! The kernel's registry of linked drivers and capabilities, and what driverkit's macros expand
//! to, are not here: they are for driver authors, through `sandloom-driverkit`.
//!
//! ## For applications
//!
//! Name every driver crate in [`link_drivers!`] (a Cargo dependency that no code names is not
//! linked, and its drivers do not exist at run time), read [`InfraConfig`], start a [`Kernel`],
//! hand [`Running::infra`] to modules, and [`shutdown`](Running::shutdown) before exiting:
//!
//! ```no_run
//! # #[tokio::main] async fn main() {
//! let linked = sandloom::link_drivers!(/* sandloom_embedded, my_driver_crate */);
//! let config = sandloom::InfraConfig::from_env().expect("valid INFRA");
//! let running = sandloom::Kernel::new(config, linked).start().await.expect("started");
//! println!("{}", running.report());
//! running.shutdown().await.expect("stopped cleanly");
//! # }
//! ```
//!
//! A whole run on the in-memory drivers of `sandloom-embedded`, with two named cache instances:
//!
//! ```
//! use sandloom::sdk::CACHE;
//! use sandloom::{InfraConfig, Kernel};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let linked = sandloom::link_drivers!(sandloom_embedded);
//! let config = InfraConfig::from_toml_str(
//!     r#"
//!     [cache.default]
//!     driver = "memory"
//!
//!     [cache.sessions]
//!     driver = "memory"
//!     capacity = 100
//!     "#,
//!     "infra.toml",
//! )
//! .unwrap();
//! let running = Kernel::new(config, linked).start().await.unwrap();
//! assert_eq!(running.report().lines.len(), 2);
//!
//! // What a module does with the handle:
//! let infra = running.infra();
//! infra.cache().unwrap().set("greeting", "hello".into()).await.unwrap();
//! let sessions = infra.capability(&CACHE, "sessions").unwrap();
//! assert!(sessions.get("greeting").await.unwrap().is_none()); // another instance
//!
//! running.shutdown().await.unwrap();
//! # }
//! ```
//!
//! [`Kernel::check`] is the same resolution as a dry run, for CI; every refusal is a
//! [`StartupError`] listing each problem with its stable code (see [`codes`]).
//!
//! ## For modules
//!
//! Depend on `sandloom-sdk-infra`, not on this crate: a module asks for capabilities by name
//! (`requires!`, [`sdk::Infra`]) and never sees the kernel or a driver.
//!
//! ## For driver authors
//!
//! Depend on `sandloom-driverkit`: implement a provider trait and `register_driver!` the type.
//! Applications then link your crate with [`link_drivers!`] and select the driver in `INFRA`.

// Starting: link the driver crates, read `INFRA`, start, and stop.
pub use sandloom_kernel::{Kernel, LinkedDrivers, Running, link_drivers};

// `INFRA`: the configuration read, and where each part of it was written.
pub use sandloom_kernel::config;
pub use sandloom_kernel::{Environment, InfraConfig, InstanceConfig, Location, RawOptions};

// What a start reports, health in operation, and rotated secrets.
pub use sandloom_kernel::{
    Health, HealthReport, InstanceHealth, Readiness, ReportLine, SecretRotation, StartAttempts,
    StartupReport,
};

// Live reconfiguration: `Running::reload`, its report and error, the `Reloader` handle, what a
// reload would do (`ReloadPlan`), and (feature `reload-triggers`) the file watch and SIGHUP that
// start one.
pub use sandloom_kernel::reload;

// Refusals: every problem with its stable code, and the reasons they carry.
pub use sandloom_kernel::codes;
// Why an instance got the driver it got, or none (`infra why`).
pub use sandloom_kernel::conditions;
pub use sandloom_kernel::{
    ConflictKind, OptionsError, Problem, ShutdownError, StartupError, UnusableReason,
};

// The names of the spans and metrics the drivers' operations emit, for the application's
// subscriber and exporter.
pub use sandloom_kernel::telemetry;

/// The module door: operation traits, capability keys, `Infra`.
///
/// ```
/// use sandloom::sdk::{Infra, CACHE};
///
/// let infra = Infra::builder().build().unwrap(); // what a module's unit test starts from
/// assert!(infra.capability(&CACHE, "default").is_err());
/// ```
pub use sandloom_sdk_infra as sdk;

/// The `infra` command line (feature `cli`): the crate `sandloom-cli`, re-exported. Dispatch to
/// [`cli::run`] when the first argument is `infra`:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let linked = sandloom::link_drivers!(/* sandloom_embedded, my_driver_crate */);
///     if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
///         return sandloom::cli::run(linked);
///     }
///     // ... the application itself ...
///     std::process::ExitCode::SUCCESS
/// }
/// ```
#[cfg(feature = "cli")]
pub use sandloom_cli as cli;
