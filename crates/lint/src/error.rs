//! Why the lint could not run (exit status 2). Violations are not errors: they are the report.

use std::path::PathBuf;

/// The lint could not check the workspace.
///
/// ```
/// let err = sandloom_lint::LintError::Config("bad".into());
/// assert!(err.to_string().contains("bad"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LintError {
    /// The manifest path does not exist or is not a `Cargo.toml`.
    #[error("no Cargo manifest at `{0}`: pass --manifest-path PATH/Cargo.toml")]
    NoManifest(PathBuf),
    /// `cargo metadata` failed.
    #[error("`cargo metadata` failed, so the workspace could not be read:\n{0}")]
    Metadata(String),
    /// `[workspace.metadata.sandloom]` is invalid.
    #[error("invalid lint configuration: {0}")]
    Config(String),
    /// A source file could not be read or parsed.
    #[error("cannot read `{file}`: {message}")]
    Source {
        /// The file.
        file: PathBuf,
        /// What went wrong (with line and column for a syntax error).
        message: String,
    },
}
