#![doc = include_str!("../README.md")]

pub mod cli;
pub mod config;
mod error;
mod manifest;
mod report;
mod roles;
mod rules;
mod sink;
mod source;
mod workspace;

use std::path::Path;

pub use error::LintError;
pub use report::{Allowed, Code, CrateRole, Location, Report, Role, RoleOrigin, Violation};

/// Lint the workspace of `manifest_path` (or the one around the current directory).
///
/// ```no_run
/// let report = sandloom_lint::lint(Some("Cargo.toml".as_ref())).expect("the lint ran");
/// for violation in &report.violations {
///     println!("{} {}: {}", violation.code, violation.location, violation.message);
/// }
/// ```
///
/// # Errors
///
/// [`LintError`] when the workspace cannot be read: no manifest there, `cargo metadata`
/// failed, `[workspace.metadata.sandloom]` is invalid, or a source file does not parse.
pub fn lint(manifest_path: Option<&Path>) -> Result<Report, LintError> {
    let workspace = workspace::Workspace::load(manifest_path)?;
    rules::run(&workspace)
}
