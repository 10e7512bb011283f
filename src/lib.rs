//! # Sandloom — infrastructure by capability
//!
//! The application door: everything an application needs to read `INFRA`, link driver crates,
//! start infrastructure and hand it to modules. It re-exports `sandloom-kernel` (every item at
//! the top level here) and `sandloom-sdk-infra` (as [`sdk`]).
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

pub use sandloom_kernel::*;
/// The module door: operation traits, capability keys, `Infra`.
///
/// ```
/// use sandloom::sdk::{Infra, CACHE};
///
/// let infra = Infra::builder().build().unwrap(); // what a module's unit test starts from
/// assert!(infra.capability(&CACHE, "default").is_err());
/// ```
pub use sandloom_sdk_infra as sdk;
#[cfg(feature = "cli")]
pub mod cli;
