//! Live reconfiguration: what a reload would do ([`ReloadPlan`]), and, with the
//! `reload-triggers` feature, what starts one (a changed `INFRA` file, SIGHUP).
//!
//! ```
//! use sandloom_kernel::InfraConfig;
//! use sandloom_kernel::reload::{Change, ReloadPlan};
//!
//! let old = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "old.toml").unwrap();
//! let new = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\ncapacity = 10", "new.toml").unwrap();
//! let plan = ReloadPlan::between(&old, &new);
//! assert_eq!(plan.instances[0].change, Change::Replaced { reasons: vec!["option `capacity` added".into()] });
//! ```

pub mod plan;
#[cfg(test)]
mod tests;
#[cfg(feature = "reload-triggers")]
pub mod triggers;

pub use plan::{Change, InstanceChange, ReloadPlan};
