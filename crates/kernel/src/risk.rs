//! The risks an application may accept in `INFRA` (`accepted_risks`).
//!
//! Their own home, not `config`'s: a problem's action names the risk to accept, and problems
//! (`error`) must not import `config`, which reports its own problems.

/// The risk that allows experimental capabilities in production.
///
/// ```
/// use sandloom_kernel::config::EXPERIMENTAL_CAPABILITY_RISK;
/// use sandloom_kernel::InfraConfig;
///
/// let toml = format!("environment = \"production\"\naccepted_risks = [\"{EXPERIMENTAL_CAPABILITY_RISK}\"]");
/// let config = InfraConfig::from_toml_str(&toml, "infra.toml").unwrap();
/// assert!(config.accepts(EXPERIMENTAL_CAPABILITY_RISK));
/// ```
pub const EXPERIMENTAL_CAPABILITY_RISK: &str = "experimental_capability";

/// Every risk an application may accept; any other in `accepted_risks` is SANDLOOM-B010.
///
/// ```
/// use sandloom_kernel::config::{EXPERIMENTAL_CAPABILITY_RISK, KNOWN_RISKS};
/// use sandloom_kernel::InfraConfig;
///
/// assert_eq!(KNOWN_RISKS, [EXPERIMENTAL_CAPABILITY_RISK]);
/// let config = InfraConfig::from_toml_str("accepted_risks = [\"yolo\"]", "infra.toml").unwrap();
/// assert_eq!(config.problems()[0].code(), "SANDLOOM-B010");
/// ```
pub const KNOWN_RISKS: &[&str] = &[EXPERIMENTAL_CAPABILITY_RISK];
