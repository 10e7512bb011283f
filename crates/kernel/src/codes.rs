//! The stable codes. A code never changes meaning; new problems get new codes.
//!
//! Match on [`Problem::code`] (or [`StartupError::codes`]) against these, not on messages:
//!
//! ```
//! use sandloom_kernel::{codes, InfraConfig, Problem};
//!
//! let config = InfraConfig::from_toml_str("environment = 3", "infra.toml").unwrap();
//! assert_eq!(config.problems()[0].code(), codes::CONFIG);
//! assert_eq!(Problem::NoRuntime.code(), codes::NO_RUNTIME);
//! assert_eq!(
//!     [codes::NO_RUNTIME, codes::CONFIG, codes::NO_DRIVER, codes::CONFLICT],
//!     ["SANDLOOM-B001", "SANDLOOM-B010", "SANDLOOM-B020", "SANDLOOM-B021"]
//! );
//! assert_eq!(
//!     [codes::UNUSABLE, codes::EXPERIMENTAL, codes::INVALID_REQUIREMENT, codes::STOP_FAILED],
//!     ["SANDLOOM-B022", "SANDLOOM-B023", "SANDLOOM-B024", "SANDLOOM-B030"]
//! );
//! ```

/// `start` was called outside a Tokio runtime, or on one built without timers.
pub const NO_RUNTIME: &str = "SANDLOOM-B001";
/// `INFRA` is malformed: bad TOML, a wrong type, an unknown key, capability or risk, a
/// missing `driver`.
pub const CONFIG: &str = "SANDLOOM-B010";
/// A selected driver (or a required instance) has no provider.
pub const NO_DRIVER: &str = "SANDLOOM-B020";
/// Two providers of one selected name, or a package claiming a built-in name.
pub const CONFLICT: &str = "SANDLOOM-B021";
/// A selected driver cannot be used.
pub const UNUSABLE: &str = "SANDLOOM-B022";
/// An experimental capability in production without the accepted risk.
pub const EXPERIMENTAL: &str = "SANDLOOM-B023";
/// A module requires a feature its capability does not define.
pub const INVALID_REQUIREMENT: &str = "SANDLOOM-B024";
/// A driver failed to stop cleanly.
pub const STOP_FAILED: &str = "SANDLOOM-B030";
