//! Options of `secrets.memory`.

use serde::Deserialize;

use sandloom_driverkit::secrets::MAX_VALUE_BYTES;

/// Options of `secrets.memory`.
///
/// ```toml
/// [secrets.default]
/// driver = "memory"
/// store = "app-tests"        # shared with MemorySecretStore::named("app-tests"); default: private
/// max_value_bytes = 65536    # default 1048576 (1 MiB), the contract's maximum
/// ```
///
/// ```
/// let options = sandloom_embedded::MemorySecretsOptions::default();
/// assert_eq!(options.max_value_bytes, 1024 * 1024);
/// assert!(options.store.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemorySecretsOptions {
    /// The name of a store shared with `MemorySecretStore::named` (how tests put values in) and
    /// with other instances naming it, in this process; without it, the instance has a store of
    /// its own, reached with `MemorySecrets::store`.
    pub store: Option<String>,
    /// The largest value `get` reads, in bytes: 1 to 1 MiB (the contract's maximum).
    pub max_value_bytes: usize,
}

impl Default for MemorySecretsOptions {
    fn default() -> Self {
        Self {
            store: None,
            max_value_bytes: MAX_VALUE_BYTES,
        }
    }
}
