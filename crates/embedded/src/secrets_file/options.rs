//! Options of `secrets.file`.

use std::path::PathBuf;

use serde::Deserialize;

use sandloom_driverkit::secrets::MAX_VALUE_BYTES;

/// Options of `secrets.file`.
///
/// ```toml
/// [secrets.default]
/// driver = "file"
/// root = "/var/run/secrets/app"   # required: the directory (a Kubernetes secret volume)
/// max_value_bytes = 65536         # default 1048576 (1 MiB), the contract's maximum
/// poll_interval_ms = 1000         # how often `changes` looks again; default 1000, at least 10
/// ```
///
/// ```
/// let options = sandloom_embedded::FileSecretsOptions::new("/var/run/secrets/app");
/// assert_eq!(options.poll_interval_ms, 1000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSecretsOptions {
    /// The directory holding one file per secret (links in this path itself are followed; none
    /// beneath it is, but Kubernetes' `..data`).
    pub root: PathBuf,
    /// The largest value `get` reads, in bytes: 1 to 1 MiB (the contract's maximum).
    #[serde(default = "default_max_value_bytes")]
    pub max_value_bytes: usize,
    /// How often `changes` reads the tree again while it waits, in milliseconds: 10 or more.
    #[serde(default = "default_poll_interval_ms")]
    pub poll_interval_ms: u64,
}

fn default_max_value_bytes() -> usize {
    MAX_VALUE_BYTES
}

fn default_poll_interval_ms() -> u64 {
    1000
}

impl FileSecretsOptions {
    /// Options reading the tree at `root`, with the defaults.
    ///
    /// ```
    /// let options = sandloom_embedded::FileSecretsOptions::new("/run/secrets");
    /// assert_eq!(options.max_value_bytes, 1024 * 1024);
    /// ```
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            max_value_bytes: MAX_VALUE_BYTES,
            poll_interval_ms: default_poll_interval_ms(),
        }
    }
}
