//! Where the application runs: `environment` in `INFRA`.

use std::fmt;
use std::str::FromStr;

/// Where the application runs.
///
/// ```
/// use sandloom_kernel::Environment;
/// assert_eq!("production".parse::<Environment>().unwrap(), Environment::Production);
/// assert!("prod".parse::<Environment>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Environment {
    /// A developer's machine (the default).
    #[default]
    Development,
    /// Automated tests.
    Test,
    /// Serving users: experimental capabilities need an accepted risk.
    Production,
}

impl Environment {
    /// Every environment name, as written in `INFRA`.
    ///
    /// ```
    /// use sandloom_kernel::Environment;
    /// for name in Environment::NAMES {
    ///     assert_eq!(name.parse::<Environment>().unwrap().as_str(), *name);
    /// }
    /// ```
    pub const NAMES: &'static [&'static str] = &["development", "test", "production"];

    /// The name as written in `INFRA`.
    ///
    /// ```
    /// assert_eq!(sandloom_kernel::Environment::Test.as_str(), "test");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Development => "development",
            Self::Test => "test",
            Self::Production => "production",
        }
    }
}

impl FromStr for Environment {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "development" => Ok(Self::Development),
            "test" => Ok(Self::Test),
            "production" => Ok(Self::Production),
            other => {
                let hint = crate::suggest::closest_or_expansion(other, Self::NAMES)
                    .map(|name| format!(" (did you mean `{name}`?)"))
                    .unwrap_or_default();
                Err(format!(
                    "unknown environment `{other}`{hint}; expected one of development, test, production"
                ))
            }
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
