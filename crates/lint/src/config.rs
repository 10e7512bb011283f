//! `[workspace.metadata.sandloom]`: banned SDKs, known driver crates and layering rules.

use serde::Deserialize;

use crate::error::LintError;
use crate::report::{Code, Role};

/// Backend SDKs a module may never depend on (C004). `banned_sdks` in the workspace
/// configuration extends this list; it cannot shrink it.
pub const BUILTIN_BANNED_SDKS: &[&str] = &[
    "redis",
    "fred",
    "deadpool-redis",
    "bb8-redis",
    "sqlx",
    "tokio-postgres",
    "postgres",
    "diesel",
    "sea-orm",
    "mongodb",
    "lapin",
    "amqprs",
    "async-nats",
    "rdkafka",
    "aws-sdk-s3",
    "object_store",
    "rusoto_s3",
    "lettre",
    "celery",
];

/// Crates whose only purpose is loading shared libraries at run time (E001).
pub const DYNAMIC_LOADING_CRATES: &[&str] = &[
    "libloading",
    "dlopen",
    "dlopen2",
    "dlib",
    "shared_library",
    "sharedlib",
];

/// Functions that load code or look symbols up at run time (E001), whoever declares them.
pub const DYNAMIC_LOADING_SYMBOLS: &[&str] = &[
    "dlopen",
    "dlmopen",
    "dlsym",
    "dlvsym",
    "LoadLibraryA",
    "LoadLibraryW",
    "LoadLibraryExA",
    "LoadLibraryExW",
    "GetProcAddress",
];

/// The driver door: a module never depends on it (C004).
pub const DRIVERKIT: &str = "sandloom-driverkit";

/// The conformance kits, for driver crates' tests: a module never depends on them (C004).
pub const CONFORMANCE: &str = "sandloom-conformance";

/// The kernel: a crate depending on it directly is, unless it says otherwise, an application.
pub const KERNEL: &str = "sandloom-kernel";

/// The module door.
pub const SDK_INFRA: &str = "sandloom-sdk-infra";

/// The application door.
pub const APPLICATION_DOOR: &str = "sandloom";

/// The `infra` command line, which the application door re-exports as `sandloom::cli`.
pub const CLI: &str = "sandloom-cli";

/// Sandloom's own framework crates: given the role `framework` unless they declare one.
pub const FRAMEWORK_CRATES: &[&str] = &[
    APPLICATION_DOOR,
    SDK_INFRA,
    KERNEL,
    DRIVERKIT,
    CONFORMANCE,
    CLI,
];

/// `[workspace.metadata.sandloom]`.
///
/// ```toml
/// [workspace.metadata.sandloom]
/// banned_sdks = ["memcache", "aws-sdk-*"]   # added to the built-in list
/// driver_crates = ["acme-driver-*"]          # drivers from a registry, not parsed
///
/// [[workspace.metadata.sandloom.layering]]
/// crate = "acme-core"
/// must_not_depend_on = ["acme-db", "acme-http-*"]
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Package names (patterns) banned for modules, on top of [`BUILTIN_BANNED_SDKS`].
    #[serde(default)]
    pub banned_sdks: Vec<String>,
    /// Package names (patterns) to treat as driver crates although the lint cannot read them
    /// (they come from a registry or git, and only workspace members are parsed).
    #[serde(default)]
    pub driver_crates: Vec<String>,
    /// Layering rules (L001).
    #[serde(default)]
    pub layering: Vec<LayeringRule>,
    /// Violations expected and allowed, each with its reason (a fixture crate that breaks a
    /// rule on purpose). One that matches nothing is itself a violation (A001).
    #[serde(default)]
    pub allow: Vec<Allowance>,
}

/// `[[workspace.metadata.sandloom.allow]]`: the violations of `code` in the crates matching
/// `crate` are expected. They are listed apart in the report and do not fail the run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowance {
    /// The member(s): a package name or pattern.
    #[serde(rename = "crate")]
    pub krate: String,
    /// The code allowed there (A001 cannot be allowed).
    pub code: Code,
    /// Why: printed with every allowed violation. Required.
    pub reason: String,
}

/// One layering rule: the crates it applies to (one `crate` pattern or one `role`) must not
/// depend on any package matching `must_not_depend_on`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayeringRule {
    /// The member(s) the rule applies to: a package name or pattern.
    #[serde(default, rename = "crate")]
    pub krate: Option<String>,
    /// Or every member of this role.
    #[serde(default)]
    pub role: Option<Role>,
    /// Package names or patterns (`sandloom-*`) the crate must not depend on.
    pub must_not_depend_on: Vec<String>,
    /// Whether dependencies of dependencies count (through workspace members). Default: true.
    #[serde(default = "yes")]
    pub transitive: bool,
    /// Whether the crate's own dev-dependencies count too. Default: false.
    #[serde(default)]
    pub include_dev: bool,
    /// Why the rule exists, printed with each violation.
    #[serde(default)]
    pub reason: Option<String>,
}

fn yes() -> bool {
    true
}

impl Config {
    /// Read the configuration from `cargo metadata`'s `workspace_metadata` value.
    ///
    /// # Errors
    ///
    /// [`LintError::Config`] when `[workspace.metadata.sandloom]` has an unknown key, a value of
    /// the wrong type, or a layering rule without exactly one of `crate` and `role`.
    pub fn from_workspace_metadata(metadata: &serde_json::Value) -> Result<Config, LintError> {
        let Some(value) = metadata.get("sandloom") else {
            return Ok(Config::default());
        };
        let config: Config = serde_json::from_value(value.clone())
            .map_err(|e| LintError::Config(format!("[workspace.metadata.sandloom]: {e}")))?;
        for (i, rule) in config.layering.iter().enumerate() {
            let at = format!("[[workspace.metadata.sandloom.layering]] #{}", i + 1);
            if rule.krate.is_some() == rule.role.is_some() {
                return Err(LintError::Config(format!(
                    "{at}: give exactly one of `crate` and `role`"
                )));
            }
            if rule.must_not_depend_on.is_empty() {
                return Err(LintError::Config(format!(
                    "{at}: `must_not_depend_on` is empty, so the rule checks nothing"
                )));
            }
        }
        for (i, allowance) in config.allow.iter().enumerate() {
            let at = format!("[[workspace.metadata.sandloom.allow]] #{}", i + 1);
            if allowance.reason.trim().is_empty() {
                return Err(LintError::Config(format!(
                    "{at}: `reason` is empty; say why the violation is expected"
                )));
            }
            if allowance.code == Code::A001 {
                return Err(LintError::Config(format!(
                    "{at}: A001 (an allowance that matches nothing) cannot be allowed"
                )));
            }
        }
        Ok(config)
    }

    /// Whether `name` is a banned backend SDK (built-in list or `banned_sdks`).
    pub fn is_banned_sdk(&self, name: &str) -> bool {
        BUILTIN_BANNED_SDKS.contains(&name) || self.banned_sdks.iter().any(|p| matches(p, name))
    }

    /// Whether `name` is declared a driver crate by `driver_crates`.
    pub fn is_declared_driver(&self, name: &str) -> bool {
        self.driver_crates.iter().any(|p| matches(p, name))
    }
}

/// A package-name pattern: an exact name, or a prefix followed by `*`.
///
/// ```
/// use sandloom_lint::config::matches;
/// assert!(matches("sandloom-*", "sandloom-kernel"));
/// assert!(matches("redis", "redis"));
/// assert!(!matches("sandloom-*", "sandloom"));
/// ```
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}
