//! Where in the configuration something was written: the place every problem points at.
//!
//! Its own home, not `config`'s: problems (`error`) carry locations, and `config` reports
//! problems, so neither may need the other for this type.

use std::fmt;
use std::sync::Arc;

/// Where in the configuration something was written.
///
/// ```
/// use sandloom_kernel::Location;
/// assert_eq!(Location::at("infra.toml", 3, 9).to_string(), "infra.toml:3:9");
/// assert_eq!(Location::variable("SANDLOOM__ENVIRONMENT").to_string(), "environment variable SANDLOOM__ENVIRONMENT");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A line and column (1-based) of a TOML source.
    Source {
        /// The file path or other name of the source: one text, shared by every location in
        /// the source (a configuration holds three per instance and one per option; a copy in
        /// each was 40% of what dropping the configuration cost).
        origin: Arc<str>,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// A whole source.
    File(Arc<str>),
    /// An override variable.
    Variable(String),
    /// Given in code, with no source.
    Code,
}

impl Location {
    /// A position in a source.
    ///
    /// ```
    /// use sandloom_kernel::Location;
    /// let at = Location::at("infra.toml", 12, 5);
    /// assert_eq!(at, Location::Source { origin: "infra.toml".into(), line: 12, column: 5 });
    /// assert_eq!(at.to_string(), "infra.toml:12:5");
    /// ```
    pub fn at(origin: &str, line: usize, column: usize) -> Self {
        Self::Source {
            origin: Arc::from(origin),
            line,
            column,
        }
    }

    /// A whole file.
    ///
    /// ```
    /// assert_eq!(sandloom_kernel::Location::file("infra.toml").to_string(), "infra.toml");
    /// ```
    pub fn file(origin: &str) -> Self {
        Self::File(Arc::from(origin))
    }

    /// An environment variable.
    ///
    /// ```
    /// let location = sandloom_kernel::Location::variable("SANDLOOM__CACHE__DEFAULT__CAPACITY");
    /// assert_eq!(location.to_string(), "environment variable SANDLOOM__CACHE__DEFAULT__CAPACITY");
    /// ```
    pub fn variable(name: &str) -> Self {
        Self::Variable(name.to_owned())
    }

    /// The position of byte `offset` of `text`.
    pub(crate) fn of_offset(origin: &Arc<str>, text: &str, offset: usize) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Self::Source {
            origin: Arc::clone(origin),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Source {
                origin,
                line,
                column,
            } => write!(f, "{origin}:{line}:{column}"),
            Self::File(origin) => f.write_str(origin),
            Self::Variable(name) => write!(f, "environment variable {name}"),
            Self::Code => f.write_str("configuration given in code"),
        }
    }
}
