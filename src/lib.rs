//! # Sandloom — infrastructure by capability
//!
//! The application door: everything an application needs to read `INFRA`, link driver crates,
//! start infrastructure and hand it to modules. Modules use `sandloom-sdk-infra` (re-exported as
//! [`sdk`]); driver authors use `sandloom-driverkit`.
//!
//! ```no_run
//! # #[tokio::main] async fn main() {
//! let linked = sandloom::link_drivers!(/* sandloom_embedded */);
//! let config = sandloom::InfraConfig::from_env().expect("valid INFRA");
//! let running = sandloom::Kernel::new(config, linked).start().await.expect("started");
//! println!("{}", running.report());
//! running.shutdown().await.expect("stopped cleanly");
//! # }
//! ```

pub use sandloom_kernel::*;
/// The module door: operation traits, capability keys, `Infra`.
pub use sandloom_sdk_infra as sdk;
