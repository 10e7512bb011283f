//! The stable codes. A code never changes meaning; new problems get new codes.
//!
//! Match on [`Problem::code`](crate::Problem::code) (or
//! [`StartupError::codes`](crate::StartupError::codes)) against these, not on messages:
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
//!
//! Each code has a long explanation, like `rustc --explain`: when it happens, an example that
//! triggers it, and how to fix it. It is the documentation of the code's constant below and the
//! text [`explain`] returns (one source: a Markdown file per code), and what the command line's
//! `infra explain CODE` prints.
//!
//! ```
//! use sandloom_kernel::codes;
//!
//! for code in codes::ALL {
//!     assert!(codes::explain(code).is_some());
//! }
//! ```

/// `start` was called outside a Tokio runtime, or on one built without timers.
///
#[doc = include_str!("codes/B001.md")]
pub const NO_RUNTIME: &str = "SANDLOOM-B001";
/// `INFRA` is malformed: bad TOML, a wrong type, an unknown key, capability or risk, a
/// missing `driver`.
///
#[doc = include_str!("codes/B010.md")]
pub const CONFIG: &str = "SANDLOOM-B010";
/// A selected driver (or a required instance) has no provider.
///
#[doc = include_str!("codes/B020.md")]
pub const NO_DRIVER: &str = "SANDLOOM-B020";
/// Two providers of one selected name, or a package claiming a built-in name.
///
#[doc = include_str!("codes/B021.md")]
pub const CONFLICT: &str = "SANDLOOM-B021";
/// A selected driver cannot be used.
///
#[doc = include_str!("codes/B022.md")]
pub const UNUSABLE: &str = "SANDLOOM-B022";
/// An experimental capability in production without the accepted risk.
///
#[doc = include_str!("codes/B023.md")]
pub const EXPERIMENTAL: &str = "SANDLOOM-B023";
/// A module requires a feature its capability does not define.
///
#[doc = include_str!("codes/B024.md")]
pub const INVALID_REQUIREMENT: &str = "SANDLOOM-B024";
/// A secret reference in `INFRA` cannot be resolved: malformed, in an option that holds no
/// secret, to a store that is not configured or could not start, to a secret the store does
/// not have, or in a circle of `secrets` instances.
///
#[doc = include_str!("codes/B025.md")]
pub const REFERENCE: &str = "SANDLOOM-B025";
/// A driver failed to stop cleanly.
///
#[doc = include_str!("codes/B030.md")]
pub const STOP_FAILED: &str = "SANDLOOM-B030";

/// Every code, in order.
///
/// ```
/// assert_eq!(sandloom_kernel::codes::ALL.first(), Some(&"SANDLOOM-B001"));
/// ```
pub const ALL: &[&str] = &[
    NO_RUNTIME,
    CONFIG,
    NO_DRIVER,
    CONFLICT,
    UNUSABLE,
    EXPERIMENTAL,
    INVALID_REQUIREMENT,
    REFERENCE,
    STOP_FAILED,
];

/// The long explanation of each code, from the same files as the constants' documentation.
const EXPLANATIONS: &[(&str, &str)] = &[
    (NO_RUNTIME, include_str!("codes/B001.md")),
    (CONFIG, include_str!("codes/B010.md")),
    (NO_DRIVER, include_str!("codes/B020.md")),
    (CONFLICT, include_str!("codes/B021.md")),
    (UNUSABLE, include_str!("codes/B022.md")),
    (EXPERIMENTAL, include_str!("codes/B023.md")),
    (INVALID_REQUIREMENT, include_str!("codes/B024.md")),
    (REFERENCE, include_str!("codes/B025.md")),
    (STOP_FAILED, include_str!("codes/B030.md")),
];

/// The code `text` names, written in full (`SANDLOOM-B020`) or short (`B020`), in any case.
///
/// ```
/// use sandloom_kernel::codes;
///
/// assert_eq!(codes::parse("b020"), Some(codes::NO_DRIVER));
/// assert_eq!(codes::parse(" Sandloom-B021 "), Some(codes::CONFLICT));
/// assert_eq!(codes::parse("B999"), None);
/// ```
pub fn parse(text: &str) -> Option<&'static str> {
    let text = text.trim();
    let short = match text.get(..9) {
        Some(prefix) if prefix.eq_ignore_ascii_case("SANDLOOM-") => &text[9..],
        _ => text,
    };
    ALL.iter()
        .copied()
        .find(|code| code["SANDLOOM-".len()..].eq_ignore_ascii_case(short))
}

/// The long explanation of `code` (Markdown: when it happens, an example that triggers it, how
/// to fix it), accepting what [`parse`] accepts; `None` for a code that does not exist.
///
/// ```
/// use sandloom_kernel::codes;
///
/// let text = codes::explain("B023").unwrap();
/// assert!(text.contains("accepted_risks = [\"experimental_capability\"]"));
/// assert_eq!(codes::explain("SANDLOOM-B023"), Some(text));
/// assert!(codes::explain("E0308").is_none());
/// ```
pub fn explain(code: &str) -> Option<&'static str> {
    let code = parse(code)?;
    EXPLANATIONS
        .iter()
        .find(|(known, _)| *known == code)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::{ALL, EXPLANATIONS, explain};

    #[test]
    fn every_code_has_an_explanation_with_its_three_parts() {
        assert_eq!(ALL.len(), EXPLANATIONS.len());
        for code in ALL {
            let text = explain(code).unwrap_or_else(|| panic!("{code} has no explanation"));
            for part in ["## When it happens", "## Example", "## How to fix it"] {
                assert!(text.contains(part), "{code} lacks `{part}`");
            }
            let example = text
                .split("## Example")
                .nth(1)
                .and_then(|rest| rest.split("## How to fix it").next())
                .unwrap_or_default();
            assert!(
                example.contains("```"),
                "{code}'s example has no code block"
            );
        }
    }
}
