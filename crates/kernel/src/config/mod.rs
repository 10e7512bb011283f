//! `INFRA`: which driver serves each capability instance, with which options, where.
//!
//! ```toml
//! environment = "production"            # development | test | production
//! accepted_risks = ["experimental_capability"]
//! start_timeout_ms = 30000              # per driver; default 30 s
//! stop_timeout_ms = 10000               # per driver; default 10 s
//! start_wait_ms = 60000                 # retry a transient start failure this long; default 0
//! health_timeout_ms = 2000              # per health check; default 2 s
//! health_interval_ms = 10000            # probe health in the background; default: off
//!
//! [cache.default]
//! driver = "memory"
//! start_wait_ms = 0                     # the kernel's keys: `driver`, `start_wait_ms`,
//! health_timeout_ms = 500               # `health_timeout_ms`, `telemetry` (default true)
//! telemetry = false
//! capacity = 10000                      # every other key is the driver's own option
//!
//! [cache.sessions]
//! driver = "memory"
//! ```
//!
//! Sources, later ones winning: embedded defaults (only when no file is given), the TOML file,
//! then environment variables `SANDLOOM__<KEY>` or `SANDLOOM__<CAPABILITY>__<INSTANCE>__<KEY>`
//! (double underscores separate levels; names are lower-cased; a value is read as a TOML value
//! when it is one — `10`, `true`, `["a"]` — and as a string otherwise).

mod env;
mod environment;
mod instance;
mod load;
mod order;
mod parse;
pub(crate) mod settings;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::time::Duration;

pub use crate::location::Location;
pub use crate::risk::{EXPERIMENTAL_CAPABILITY_RISK, KNOWN_RISKS};
pub use settings::{
    DEFAULT_HEALTH_TIMEOUT, DEFAULT_ROTATION_POLL, DEFAULT_START_WAIT, RESERVED_INSTANCE_KEYS,
};

pub use environment::Environment;

/// Whether `name` may name an instance (`default` in `[cache.default]`): the rule `INFRA`'s
/// tables and `SANDLOOM__…` overrides are held to (SANDLOOM-B010 otherwise), with the message
/// that states it.
///
/// ```
/// use sandloom_kernel::config::check_instance_name;
///
/// assert!(check_instance_name("sessions-eu_2").is_ok());
/// assert_eq!(
///     check_instance_name("Default").unwrap_err(),
///     "instance name `Default` must be non-empty lowercase ASCII letters, digits, `_` or `-`"
/// );
/// // `__` separates the levels of an override, so no override could reach these.
/// assert!(check_instance_name("eu_").is_err());
/// assert!(check_instance_name("eu__west").is_err());
/// ```
///
/// # Errors
///
/// The rule, stated for `name`, when `name` breaks it.
pub fn check_instance_name(name: &str) -> Result<(), String> {
    parse::check_name(name)
}

pub use crate::references::{DEFAULT_STORE as DEFAULT_SECRET_STORE, SecretReference};
pub use instance::InstanceConfig;
pub(crate) use instance::Instances;

/// The longest secret name a reference may have, in bytes: the `secrets` naming rule's
/// (`infra schema` states it for editors).
///
/// ```
/// assert_eq!(sandloom_kernel::config::MAX_SECRET_NAME_BYTES, 256);
/// ```
pub const MAX_SECRET_NAME_BYTES: usize = sandloom_sdk_infra::secrets::MAX_NAME_BYTES;
pub(crate) use order::order_by_location;

use crate::error::Problem;

/// The environment variable naming the `INFRA` file, read by [`InfraConfig::from_env`].
///
/// ```
/// use sandloom_kernel::config::INFRA_FILE_VAR;
/// assert_eq!(INFRA_FILE_VAR, "SANDLOOM_INFRA");
/// match std::env::var_os(INFRA_FILE_VAR) {
///     Some(path) => println!("INFRA from {}", path.to_string_lossy()),
///     None => println!("INFRA from the embedded defaults"),
/// }
/// ```
pub const INFRA_FILE_VAR: &str = "SANDLOOM_INFRA";
/// The prefix of override variables (see [`InfraConfig::with_overrides`]).
///
/// ```
/// use sandloom_kernel::config::OVERRIDE_PREFIX;
/// use sandloom_kernel::{Environment, InfraConfig};
///
/// let var = format!("{OVERRIDE_PREFIX}ENVIRONMENT");
/// assert_eq!(var, "SANDLOOM__ENVIRONMENT");
/// let config = InfraConfig::embedded_defaults().with_overrides([(var, "test".into())]).unwrap();
/// assert_eq!(config.environment(), Environment::Test);
/// ```
pub const OVERRIDE_PREFIX: &str = "SANDLOOM__";

/// A whole `INFRA` configuration, validated for shape (not yet against linked drivers).
///
/// ```
/// use sandloom_kernel::{Environment, InfraConfig};
///
/// let config = InfraConfig::from_toml_str(
///     r#"
///     environment = "test"
///     [cache.default]
///     driver = "memory"
///     capacity = 100
///     "#,
///     "inline",
/// )
/// .unwrap();
/// assert_eq!(config.environment(), Environment::Test);
/// let cache = config.instance("cache", "default").unwrap();
/// assert_eq!(cache.driver, "memory");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InfraConfig {
    pub(crate) environment: Environment,
    pub(crate) accepted_risks: BTreeSet<String>,
    pub(crate) start_timeout: Duration,
    pub(crate) stop_timeout: Duration,
    pub(crate) start_wait: Duration,
    pub(crate) health_timeout: Duration,
    pub(crate) health_interval: Option<Duration>,
    pub(crate) instances: Instances,
    /// Shared with the locations read from it.
    pub(crate) origin: std::sync::Arc<str>,
    /// SANDLOOM-B010 problems found while reading, each at its place.
    pub(crate) problems: Vec<Problem>,
    /// What those problems left out: top-level keys (`accepted_risks`, a capability `cache`)
    /// and instances (`cache.sessions`).
    pub(crate) left_out: BTreeSet<String>,
}

/// The default time a driver's `start` may take (`start_timeout_ms` in `INFRA` overrides it).
///
/// ```
/// use std::time::Duration;
/// use sandloom_kernel::config::DEFAULT_START_TIMEOUT;
/// use sandloom_kernel::InfraConfig;
///
/// assert_eq!(DEFAULT_START_TIMEOUT, Duration::from_secs(30));
/// assert_eq!(InfraConfig::embedded_defaults().start_timeout(), DEFAULT_START_TIMEOUT);
/// ```
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a driver's `stop` may take (`stop_timeout_ms` in `INFRA` overrides it).
///
/// ```
/// use std::time::Duration;
/// use sandloom_kernel::config::DEFAULT_STOP_TIMEOUT;
/// use sandloom_kernel::InfraConfig;
///
/// assert_eq!(DEFAULT_STOP_TIMEOUT, Duration::from_secs(10));
/// assert_eq!(InfraConfig::embedded_defaults().stop_timeout(), DEFAULT_STOP_TIMEOUT);
/// ```
pub const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The embedded defaults: one working instance of each public capability, no services needed.
/// Their drivers are in `sandloom-embedded`, which the application must link.
///
/// ```
/// use sandloom_kernel::config::EMBEDDED_DEFAULTS;
/// use sandloom_kernel::InfraConfig;
///
/// let parsed = InfraConfig::from_toml_str(EMBEDDED_DEFAULTS, "embedded defaults").unwrap();
/// assert_eq!(parsed, InfraConfig::embedded_defaults());
/// ```
pub const EMBEDDED_DEFAULTS: &str = r#"
[cache.default]
driver = "memory"

[notifier.default]
driver = "log"

[objectstore.default]
driver = "fs"
root = ".sandloom/objects"

[taskqueue.default]
driver = "memory"

[lock.default]
driver = "memory"
"#;

impl InfraConfig {
    /// The SANDLOOM-B010 problems found while reading this configuration (from text and from
    /// overrides), ordered by location. What each concerns is left out of the
    /// configuration; [`Kernel::check`](crate::Kernel::check) and
    /// [`Kernel::start`](crate::Kernel::start) report them together with every other problem,
    /// ordered by location, and start nothing while there are any.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("start_timeout_ms = 0", "infra.toml").unwrap();
    /// assert_eq!(config.problems().len(), 1);
    /// assert_eq!(
    ///     config.problems()[0].description(),
    ///     "`start_timeout_ms` must be a positive integer of milliseconds, found `0` (at infra.toml:1:1)"
    /// );
    /// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Keep `problem`, and leave out what it concerns: `path` is a top-level key or
    /// `capability.instance`.
    pub(crate) fn leave_out(&mut self, path: &str, problem: Problem) {
        if let Some((capability, instance)) = path.split_once('.') {
            self.instances.remove((capability, instance));
        }
        self.left_out.insert(path.to_owned());
        self.problems.push(problem);
    }

    /// Order the problems by location.
    pub(crate) fn order_problems(&mut self) {
        let mut problems = std::mem::take(&mut self.problems);
        order_by_location(&mut problems, self);
        self.problems = problems;
    }

    /// Whether a problem left out `key` (a top-level key) or `capability.instance`.
    pub(crate) fn is_left_out(&self, capability: &str, instance: Option<&str>) -> bool {
        self.left_out.contains(capability)
            || instance
                .is_some_and(|instance| self.left_out.contains(&format!("{capability}.{instance}")))
    }

    /// The environment.
    ///
    /// ```
    /// use sandloom_kernel::{Environment, InfraConfig};
    /// assert_eq!(InfraConfig::embedded_defaults().environment(), Environment::Development);
    /// ```
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// The accepted risks.
    ///
    /// ```
    /// let toml = r#"accepted_risks = ["experimental_capability"]"#;
    /// let config = sandloom_kernel::InfraConfig::from_toml_str(toml, "infra.toml").unwrap();
    /// assert_eq!(config.accepted_risks().collect::<Vec<_>>(), ["experimental_capability"]);
    /// ```
    pub fn accepted_risks(&self) -> impl Iterator<Item = &str> {
        self.accepted_risks.iter().map(String::as_str)
    }

    /// Whether `risk` was accepted.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// assert!(!config.accepts("experimental_capability"));
    /// ```
    pub fn accepts(&self, risk: &str) -> bool {
        self.accepted_risks.contains(risk)
    }

    /// How long one driver's `start` may take.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = sandloom_kernel::InfraConfig::from_toml_str("start_timeout_ms = 2500", "infra.toml").unwrap();
    /// assert_eq!(config.start_timeout(), Duration::from_millis(2500));
    /// ```
    pub fn start_timeout(&self) -> Duration {
        self.start_timeout
    }

    /// How long one driver's `stop` may take.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = sandloom_kernel::InfraConfig::from_toml_str("stop_timeout_ms = 500", "infra.toml").unwrap();
    /// assert_eq!(config.stop_timeout(), Duration::from_millis(500));
    /// ```
    pub fn stop_timeout(&self) -> Duration {
        self.stop_timeout
    }

    /// How long startup keeps retrying a driver whose `start` fails with a transient error
    /// (`start_wait_ms`; an instance may set its own, see [`InstanceConfig::start_wait`]).
    /// Zero, the default, means no retry.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = sandloom_kernel::InfraConfig::from_toml_str("start_wait_ms = 60000", "infra.toml").unwrap();
    /// assert_eq!(config.start_wait(), Duration::from_secs(60));
    /// ```
    pub fn start_wait(&self) -> Duration {
        self.start_wait
    }

    /// How long one health check may take (`health_timeout_ms`; an instance may set its own,
    /// see [`InstanceConfig::health_timeout`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = sandloom_kernel::InfraConfig::from_toml_str("health_timeout_ms = 500", "infra.toml").unwrap();
    /// assert_eq!(config.health_timeout(), Duration::from_millis(500));
    /// ```
    pub fn health_timeout(&self) -> Duration {
        self.health_timeout
    }

    /// How often health is probed in the background (`health_interval_ms`), or `None` (the
    /// default): no periodic probing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// assert_eq!(InfraConfig::embedded_defaults().health_interval(), None);
    /// let config = InfraConfig::from_toml_str("health_interval_ms = 10000", "infra.toml").unwrap();
    /// assert_eq!(config.health_interval(), Some(Duration::from_secs(10)));
    /// ```
    pub fn health_interval(&self) -> Option<Duration> {
        self.health_interval
    }

    /// Where the configuration came from (a file path, `embedded defaults`).
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    /// assert_eq!(InfraConfig::embedded_defaults().origin(), "embedded defaults");
    /// assert_eq!(InfraConfig::from_toml_str("", "ops/infra.toml").unwrap().origin(), "ops/infra.toml");
    /// ```
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Every configured instance, sorted by capability then instance.
    ///
    /// ```
    /// let text = "[cache.sessions]\ndriver = \"memory\"\n[cache.default]\ndriver = \"memory\"";
    /// let config = sandloom_kernel::InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let instances: Vec<&str> = config.instances().map(|i| i.instance.as_str()).collect();
    /// assert_eq!(instances, ["default", "sessions"]);
    /// ```
    pub fn instances(&self) -> impl Iterator<Item = &InstanceConfig> {
        self.instances.values()
    }

    /// One instance.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// assert_eq!(config.instance("objectstore", "default").unwrap().driver, "fs");
    /// assert!(config.instance("objectstore", "uploads").is_none());
    /// ```
    pub fn instance(&self, capability: &str, instance: &str) -> Option<&InstanceConfig> {
        self.instances.get((capability, instance))
    }

    /// Set the environment (builder style, for programmatic configuration and tests).
    ///
    /// ```
    /// use sandloom_kernel::{Environment, InfraConfig};
    /// let config = InfraConfig::embedded_defaults().with_environment(Environment::Production);
    /// assert_eq!(config.environment(), Environment::Production);
    /// ```
    #[must_use]
    pub fn with_environment(mut self, environment: Environment) -> Self {
        self.environment = environment;
        self
    }

    /// Set the per-driver start timeout.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = sandloom_kernel::InfraConfig::embedded_defaults().with_start_timeout(Duration::from_secs(1));
    /// assert_eq!(c.start_timeout(), Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn with_start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// Set how long startup retries a transient `start` failure, for instances that do not set
    /// their own `start_wait_ms`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = sandloom_kernel::InfraConfig::embedded_defaults().with_start_wait(Duration::from_secs(5));
    /// assert_eq!(c.start_wait(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub fn with_start_wait(mut self, wait: Duration) -> Self {
        self.start_wait = wait;
        self
    }

    /// Set the health check timeout, for instances that do not set their own
    /// `health_timeout_ms`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = sandloom_kernel::InfraConfig::embedded_defaults().with_health_timeout(Duration::from_millis(300));
    /// assert_eq!(c.health_timeout(), Duration::from_millis(300));
    /// ```
    #[must_use]
    pub fn with_health_timeout(mut self, timeout: Duration) -> Self {
        self.health_timeout = timeout;
        self
    }

    /// Set (or, with `None`, turn off) periodic health probing.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = sandloom_kernel::InfraConfig::embedded_defaults().with_health_interval(Some(Duration::from_secs(1)));
    /// assert_eq!(c.health_interval(), Some(Duration::from_secs(1)));
    /// ```
    #[must_use]
    pub fn with_health_interval(mut self, interval: Option<Duration>) -> Self {
        self.health_interval = interval;
        self
    }

    /// Set the per-driver stop timeout.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = sandloom_kernel::InfraConfig::embedded_defaults().with_stop_timeout(Duration::from_secs(2));
    /// assert_eq!(c.stop_timeout(), Duration::from_secs(2));
    /// ```
    #[must_use]
    pub fn with_stop_timeout(mut self, timeout: Duration) -> Self {
        self.stop_timeout = timeout;
        self
    }
}
