//! Options of `cache.memory`.

use serde::Deserialize;

/// Options of `cache.memory`.
///
/// ```toml
/// [cache.default]
/// driver = "memory"
/// capacity = 50000        # entries; default 10 000
/// default_ttl_ms = 60000  # expiry of `set` and new counters; default none
/// ```
///
/// ```
/// let options = sandloom_embedded::MemoryCacheOptions::default();
/// assert_eq!(options.capacity, 10_000);
/// assert_eq!(options.default_ttl_ms, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryCacheOptions {
    /// The most entries kept; beyond it the least useful ones are evicted. At least 1.
    pub capacity: u64,
    /// When set, entries written by `set`, `set_many` and a first `increment` expire after this
    /// many milliseconds. At least 1 when set.
    pub default_ttl_ms: Option<u64>,
}

impl Default for MemoryCacheOptions {
    fn default() -> Self {
        Self {
            capacity: 10_000,
            default_ttl_ms: None,
        }
    }
}
