//! Options of `secrets.env`.

use serde::Deserialize;

use sandloom_driverkit::secrets::MAX_VALUE_BYTES;

/// Options of `secrets.env`.
///
/// ```toml
/// [secrets.default]
/// driver = "env"
/// prefix = "APP_SECRET_"     # required: only variables starting with it are read
/// max_value_bytes = 65536    # default 1048576 (1 MiB), the contract's maximum
/// ```
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_embedded::{EnvSecrets, EnvSecretsOptions};
///
/// let options = EnvSecretsOptions::new("APP_SECRET_");
/// assert!(EnvSecrets::validate(&options).is_ok());
/// assert!(EnvSecrets::validate(&EnvSecretsOptions::new("")).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvSecretsOptions {
    /// What every variable read starts with: ASCII letters, digits and `_`, not starting with a
    /// digit, not empty. Nothing outside it can be read.
    pub prefix: String,
    /// The largest value `get` reads, in bytes: 1 to 1 MiB (the contract's maximum).
    #[serde(default = "default_max_value_bytes")]
    pub max_value_bytes: usize,
}

fn default_max_value_bytes() -> usize {
    MAX_VALUE_BYTES
}

impl EnvSecretsOptions {
    /// Options reading the variables under `prefix`, with the default limit.
    ///
    /// ```
    /// let options = sandloom_embedded::EnvSecretsOptions::new("APP_SECRET_");
    /// assert_eq!(options.max_value_bytes, 1024 * 1024);
    /// ```
    #[must_use]
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            max_value_bytes: MAX_VALUE_BYTES,
        }
    }
}
