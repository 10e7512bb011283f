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
mod order;
mod parse;
mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

pub use crate::location::Location;
pub use crate::risk::{EXPERIMENTAL_CAPABILITY_RISK, KNOWN_RISKS};
pub use settings::{DEFAULT_HEALTH_TIMEOUT, DEFAULT_START_WAIT, RESERVED_INSTANCE_KEYS};

pub(crate) use order::order_by_location;

use crate::error::{Problem, StartupError};
use crate::options::RawOptions;

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
            other => Err(format!(
                "unknown environment `{other}`; expected one of development, test, production"
            )),
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One configured capability instance: `[capability.instance]` with `driver = "…"`.
///
/// ```
/// use sandloom_kernel::InfraConfig;
///
/// let config = InfraConfig::from_toml_str(
///     "[cache.sessions]\ndriver = \"memory\"\ncapacity = 500\n",
///     "infra.toml",
/// )
/// .unwrap();
/// let sessions = config.instance("cache", "sessions").unwrap();
/// assert_eq!((sessions.capability.as_str(), sessions.instance.as_str()), ("cache", "sessions"));
/// assert_eq!(sessions.driver, "memory");
/// assert_eq!(sessions.options.keys().collect::<Vec<_>>(), ["capacity"]);
/// assert_eq!(sessions.driver_location.to_string(), "infra.toml:2:1");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceConfig {
    /// The capability (`cache`).
    pub capability: String,
    /// The instance name (`default`, `sessions`).
    pub instance: String,
    /// The selected driver name (`memory`).
    pub driver: String,
    /// Every other key of the table: the driver's options. The kernel's own keys
    /// ([`RESERVED_INSTANCE_KEYS`]) are not among them.
    pub options: RawOptions,
    /// Where the instance was configured.
    pub location: Location,
    /// Where `driver` was set.
    pub driver_location: Location,
    pub(crate) option_locations: BTreeMap<String, Location>,
    /// Options set by environment variables whose text was read as a non-string TOML value
    /// (`123456`, `true`): the raw text, used instead when the driver wants a string there.
    pub(crate) env_strings: BTreeMap<String, String>,
    /// The kernel's own keys of the table.
    pub(crate) settings: settings::InstanceSettings,
}

impl InstanceConfig {
    /// Where option `key` (a top-level key of the instance's table) was set, or the instance's
    /// own location.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 500\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let cache = config.instance("cache", "default").unwrap();
    /// assert_eq!(cache.option_location("capacity").to_string(), "infra.toml:3:1");
    /// assert_eq!(cache.option_location("not_set"), &cache.location);
    /// ```
    pub fn option_location(&self, key: &str) -> &Location {
        self.option_locations.get(key).unwrap_or(&self.location)
    }

    /// `capability.instance`.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// let names: Vec<String> = config.instances().map(|i| i.qualified_name()).collect();
    /// assert_eq!(names, ["cache.default", "notifier.default", "objectstore.default", "taskqueue.default"]);
    /// ```
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.capability, self.instance)
    }

    /// How long startup keeps retrying this instance's driver when its `start` fails with a
    /// transient error: the instance's `start_wait_ms`, else the top-level one of `infra`.
    /// Zero means no retry.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "start_wait_ms = 30000\n\
    ///             [cache.default]\ndriver = \"memory\"\n\
    ///             [cache.local]\ndriver = \"memory\"\nstart_wait_ms = 0\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let wait = |name| config.instance("cache", name).unwrap().start_wait(&config);
    /// assert_eq!(wait("default"), Duration::from_secs(30));
    /// assert_eq!(wait("local"), Duration::ZERO);
    /// ```
    pub fn start_wait(&self, infra: &InfraConfig) -> Duration {
        self.settings.start_wait.unwrap_or(infra.start_wait)
    }

    /// How long this instance's health check may take: the instance's `health_timeout_ms`,
    /// else the top-level one of `infra`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "[cache.default]\ndriver = \"memory\"\nhealth_timeout_ms = 250\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let cache = config.instance("cache", "default").unwrap();
    /// assert_eq!(cache.health_timeout(&config), Duration::from_millis(250));
    /// assert_eq!(config.health_timeout(), Duration::from_secs(2)); // the default elsewhere
    /// ```
    pub fn health_timeout(&self, infra: &InfraConfig) -> Duration {
        self.settings.health_timeout.unwrap_or(infra.health_timeout)
    }

    /// Whether operations of this instance emit spans and metrics: its `telemetry` key,
    /// `true` when not set.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "[cache.default]\ndriver = \"memory\"\n[cache.quiet]\ndriver = \"memory\"\ntelemetry = false\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// assert!(config.instance("cache", "default").unwrap().telemetry());
    /// assert!(!config.instance("cache", "quiet").unwrap().telemetry());
    /// ```
    pub fn telemetry(&self) -> bool {
        self.settings.telemetry.unwrap_or(true)
    }
}

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
    pub(crate) instances: BTreeMap<(String, String), InstanceConfig>,
    pub(crate) origin: String,
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
"#;

impl InfraConfig {
    /// Parse `INFRA` from TOML text; `origin` names it in error locations (a file path).
    ///
    /// Only text that is not TOML at all is an error. Every other problem (a wrong type, an
    /// unknown key, a table without `driver`, a value out of range) is a SANDLOOM-B010 kept in
    /// the configuration ([`problems`](Self::problems)) with its location, and the part it
    /// concerns is left out: every other table is still read, so [`Kernel::check`] and
    /// [`Kernel::start`] report all problems at once, configuration and resolution together.
    ///
    /// [`Kernel::check`]: crate::Kernel::check
    /// [`Kernel::start`]: crate::Kernel::start
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "inline").unwrap();
    /// assert_eq!(config.instances().count(), 1);
    /// assert!(config.problems().is_empty());
    ///
    /// // Every problem is kept, each with its location; the rest is still read.
    /// let text = "enviroment = \"test\"\n[cache.sessions]\ncapacity = 10\n[cache.default]\ndriver = \"memory\"";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let found: Vec<String> = config.problems().iter().map(|p| p.description()).collect();
    /// assert_eq!(found, [
    ///     "unknown top-level key `enviroment` (did you mean `environment`?) (at infra.toml:1:1)",
    ///     "`[cache.sessions]` has no `driver` (at infra.toml:2:8)",
    /// ]);
    /// assert!(config.instance("cache", "default").is_some());
    ///
    /// // Text that is not TOML cannot be read at all.
    /// let err = InfraConfig::from_toml_str("[cache", "infra.toml").unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// ```
    ///
    /// # Errors
    /// A [`StartupError`] of one SANDLOOM-B010 problem, with its location, when the text is not
    /// TOML.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, StartupError> {
        parse::parse(text, origin).map_err(StartupError::read)
    }

    /// Read and parse an `INFRA` file; see [`from_toml_str`](Self::from_toml_str) for what is
    /// an error and what is kept as a problem.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let path = std::env::temp_dir().join(format!("infra-{}.toml", std::process::id()));
    /// std::fs::write(&path, "[notifier.default]\ndriver = \"log\"\n").unwrap();
    /// let config = InfraConfig::from_file(&path).unwrap();
    /// assert_eq!(config.origin(), path.display().to_string());
    /// assert_eq!(config.instance("notifier", "default").unwrap().driver, "log");
    /// std::fs::remove_file(&path).unwrap();
    ///
    /// let err = InfraConfig::from_file("no/such/infra.toml").unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// ```
    ///
    /// # Errors
    /// SANDLOOM-B010 when the file cannot be read, is not UTF-8, or is not TOML.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, StartupError> {
        Self::read_file(path.as_ref(), None)
    }

    /// Read the file at `path`; `variable` is the environment variable that named it, if one did
    /// (only then may an action mention it).
    fn read_file(path: &Path, variable: Option<&str>) -> Result<Self, StartupError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| {
            let named_by = variable
                .map(|variable| format!(", named by {variable}"))
                .unwrap_or_default();
            let problem = if err.kind() == std::io::ErrorKind::InvalidData {
                Problem::config(
                    Location::file(&origin),
                    format!(
                        "the INFRA file `{origin}`{} is not UTF-8 text",
                        if named_by.is_empty() {
                            String::new()
                        } else {
                            format!("{named_by},")
                        }
                    ),
                    format!("save `{origin}` as UTF-8: TOML files must be UTF-8"),
                )
            } else {
                let unset = variable
                    .map(|variable| {
                        format!(", or unset {variable} to run on the embedded defaults")
                    })
                    .unwrap_or_default();
                Problem::config(
                    Location::file(&origin),
                    format!("cannot read the INFRA file `{origin}`{named_by}: {err}"),
                    format!("check that `{origin}` exists and is readable{unset}"),
                )
            };
            StartupError::read(vec![problem])
        })?;
        Self::from_toml_str(&text, &origin)
    }

    /// The embedded defaults: `cache.memory`, `notifier.log`, `objectstore.fs` (under
    /// `.sandloom/objects`) and `taskqueue.memory`, all as instance `default`.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// assert_eq!(config.instances().count(), 4);
    /// ```
    pub fn embedded_defaults() -> Self {
        let config = parse::parse(EMBEDDED_DEFAULTS, "embedded defaults")
            .unwrap_or_else(|problems| unreachable!("embedded defaults are valid: {problems:?}"));
        debug_assert!(config.problems.is_empty(), "{:?}", config.problems);
        config
    }

    /// What an application normally wants: the file named by `SANDLOOM_INFRA` (or the embedded
    /// defaults when it is unset), then `SANDLOOM__…` overrides from the process environment.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// match InfraConfig::from_env() {
    ///     Ok(config) => println!("INFRA from {}: {} instances", config.origin(), config.instances().count()),
    ///     Err(err) => eprintln!("{err}"), // every problem, with its code and location
    /// }
    /// ```
    ///
    /// # Errors
    /// SANDLOOM-B010 when the file cannot be read, is not UTF-8, or is not TOML. Problems of
    /// its content and of overrides are kept in the configuration ([`problems`](Self::problems)).
    pub fn from_env() -> Result<Self, StartupError> {
        let base = match std::env::var_os(INFRA_FILE_VAR) {
            Some(path) if !path.is_empty() => {
                Self::read_file(Path::new(&path), Some(INFRA_FILE_VAR))?
            }
            _ => Self::embedded_defaults(),
        };
        base.with_env_overrides()
    }

    /// Apply the `SANDLOOM__…` overrides of the process environment. Variables whose name or
    /// value is not UTF-8 are not a panic: a non-UTF-8 override value is a SANDLOOM-B010
    /// problem kept in the configuration, and other variables are ignored.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults().with_env_overrides().unwrap();
    /// assert!(config.instance("cache", "default").is_some());
    /// ```
    ///
    /// # Errors
    /// None today: a problem with an override is a SANDLOOM-B010 kept in the configuration, as
    /// for [`with_overrides`](Self::with_overrides). The `Result` stays for callers that chain
    /// it after [`from_file`](Self::from_file).
    pub fn with_env_overrides(self) -> Result<Self, StartupError> {
        let mut vars = Vec::new();
        let mut not_utf8 = Vec::new();
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str().filter(|n| n.starts_with(OVERRIDE_PREFIX)) else {
                continue;
            };
            match value.into_string() {
                Ok(value) => vars.push((name.to_owned(), value)),
                Err(_) => not_utf8.push(name.to_owned()),
            }
        }
        let mut config = self.with_overrides(vars)?;
        not_utf8.sort();
        for name in not_utf8 {
            let target = env::target(&name);
            config.leave_out(
                &target,
                Problem::config(
                    Location::variable(&name),
                    format!("the value of {name} is not valid UTF-8"),
                    format!("set {name} to UTF-8 text, or unset it"),
                ),
            );
        }
        config.order_problems();
        Ok(config)
    }

    /// Apply `SANDLOOM__…` overrides from `vars` (other variables are ignored).
    ///
    /// An override that does not fit (an unknown top-level key, a bad value, an instance left
    /// without `driver`) is a SANDLOOM-B010 kept in the configuration with the variable as its
    /// location ([`problems`](Self::problems)), and what it would have set is left out.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    /// let config = InfraConfig::embedded_defaults()
    ///     .with_overrides([("SANDLOOM__CACHE__DEFAULT__CAPACITY".to_string(), "500".to_string())])
    ///     .unwrap();
    /// let cache = config.instance("cache", "default").unwrap();
    /// assert_eq!(cache.options.keys().collect::<Vec<_>>(), ["capacity"]);
    ///
    /// let config = InfraConfig::embedded_defaults()
    ///     .with_overrides([("SANDLOOM__ENVIRONMNT".to_string(), "test".to_string())])
    ///     .unwrap();
    /// assert_eq!(config.problems()[0].code(), "SANDLOOM-B010");
    /// ```
    ///
    /// # Errors
    /// None today: problems are kept in the configuration. The `Result` stays for callers that
    /// chain it after [`from_file`](Self::from_file).
    pub fn with_overrides(
        self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, StartupError> {
        Ok(env::apply(self, vars))
    }

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
            self.instances
                .remove(&(capability.to_owned(), instance.to_owned()));
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
        // A walk, not a map lookup: the map's keys are owned, and a lookup would copy both
        // names for a handful of instances.
        self.instances
            .values()
            .find(|i| i.capability == capability && i.instance == instance)
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{INFRA_FILE_VAR, InfraConfig};
    use crate::error::Problem;

    fn only(config: &InfraConfig) -> &Problem {
        let [problem] = config.problems() else {
            panic!("expected one problem: {:#?}", config.problems())
        };
        problem
    }

    #[test]
    fn a_non_utf8_file_names_the_file_and_says_to_save_it_as_utf8() {
        let path =
            std::env::temp_dir().join(format!("sandloom-latin1-{}.toml", std::process::id()));
        std::fs::write(&path, b"[cache.default]\ndriver = \"m\xe9moire\"\n").unwrap();
        let origin = path.display().to_string();

        let err = InfraConfig::from_file(&path).unwrap_err();
        let [problem] = err.problems() else {
            panic!("{err}")
        };
        assert_eq!(problem.code(), "SANDLOOM-B010");
        assert_eq!(
            problem.description(),
            format!("the INFRA file `{origin}` is not UTF-8 text (at {origin})")
        );
        assert_eq!(
            problem.action(),
            format!("save `{origin}` as UTF-8: TOML files must be UTF-8")
        );
        assert!(!err.to_string().contains(INFRA_FILE_VAR), "{err}");
        assert!(
            err.to_string()
                .starts_with("Sandloom cannot read INFRA: 1 problem found."),
            "{err}"
        );

        // Named by SANDLOOM_INFRA, the file is still what to fix; the variable is named too.
        let err = InfraConfig::read_file(&path, Some(INFRA_FILE_VAR)).unwrap_err();
        let [problem] = err.problems() else {
            panic!("{err}")
        };
        assert!(
            problem.description().contains(&format!(
                "`{origin}`, named by {INFRA_FILE_VAR}, is not UTF-8"
            )),
            "{problem}"
        );
        assert_eq!(
            problem.action(),
            format!("save `{origin}` as UTF-8: TOML files must be UTF-8")
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn only_a_file_named_by_the_variable_mentions_it() {
        let path = Path::new("/nonexistent/sandloom/infra.toml");
        let err = InfraConfig::from_file(path).unwrap_err();
        assert_eq!(
            err.problems()[0].action(),
            "check that `/nonexistent/sandloom/infra.toml` exists and is readable"
        );
        let err = InfraConfig::read_file(path, Some(INFRA_FILE_VAR)).unwrap_err();
        assert_eq!(
            err.problems()[0].action(),
            "check that `/nonexistent/sandloom/infra.toml` exists and is readable, or unset SANDLOOM_INFRA to run on the embedded defaults"
        );
    }

    #[test]
    fn a_timeout_that_is_not_positive_names_the_value_found() {
        for (text, found) in [
            ("start_timeout_ms = 0", "`0`"),
            ("stop_timeout_ms = -5", "`-5`"),
            ("start_timeout_ms = \"soon\"", "string `\"soon\"`"),
            ("stop_timeout_ms = 1.5", "float `1.5`"),
        ] {
            let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
            let key = text.split(' ').next().unwrap();
            let problem = only(&config);
            assert_eq!(
                problem.description(),
                format!(
                    "`{key}` must be a positive integer of milliseconds, found {found} (at infra.toml:1:1)"
                )
            );
            assert_eq!(
                problem.action(),
                format!(
                    "write a whole number of milliseconds greater than 0, such as `{key} = 30000` in INFRA"
                )
            );
        }
        for key in ["START_TIMEOUT_MS", "STOP_TIMEOUT_MS"] {
            let variable = format!("SANDLOOM__{key}");
            let config = InfraConfig::embedded_defaults()
                .with_overrides([(variable.clone(), "0".to_owned())])
                .unwrap();
            let problem = only(&config);
            assert_eq!(
                problem.description(),
                format!(
                    "`{}` must be a positive integer of milliseconds, found `0` (at environment variable {variable})",
                    key.to_ascii_lowercase()
                )
            );
            assert_eq!(
                problem.action(),
                format!(
                    "write a whole number of milliseconds greater than 0, such as `{variable}=30000`"
                )
            );
        }
    }

    #[test]
    fn an_integer_out_of_range_is_located_and_leaves_the_other_tables_alone() {
        let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 18446744073709551616\n\
                    [cache.sessions]\ndriver = \"memory\"\nsizes = [1, 99999999999999999999]\n\
                    [notifier.default]\ndriver = \"log\"\n";
        let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
        let found: Vec<String> = config.problems().iter().map(Problem::description).collect();
        assert_eq!(
            found,
            [
                "`capacity` of `[cache.default]` cannot be read: integer `18446744073709551616` is out of range (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807) (at infra.toml:3:12)",
                "`sizes` of `[cache.sessions]` cannot be read: integer `99999999999999999999` is out of range (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807) (at infra.toml:6:13)",
            ]
        );
        assert!(config.instance("cache", "default").is_none());
        assert!(config.is_left_out("cache", Some("default")));
        assert_eq!(
            config.instance("notifier", "default").unwrap().driver,
            "log"
        );
    }

    #[test]
    fn bad_overrides_leave_out_what_they_set_and_keep_the_rest() {
        let config = InfraConfig::embedded_defaults()
            .with_overrides(
                [
                    ("SANDLOOM__ENVIRONMNT", "test"),
                    ("SANDLOOM__CACHE__X__CAPACITY", "1"),
                    ("SANDLOOM__CACHE__DEFAULT__DRIVER", "7"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
            )
            .unwrap();
        assert_eq!(config.problems().len(), 3, "{:#?}", config.problems());
        assert!(config.instance("cache", "x").is_none());
        assert!(config.instance("cache", "default").is_none());
        assert!(config.instance("notifier", "default").is_some());
    }

    #[test]
    fn an_override_does_not_bring_back_a_table_the_file_could_not_read() {
        let config = InfraConfig::from_toml_str(
            "[cache.default]\ndriver = 7\ncapacity = 10\n",
            "infra.toml",
        )
        .unwrap()
        .with_overrides([(
            "SANDLOOM__CACHE__DEFAULT__DRIVER".to_owned(),
            "memory".to_owned(),
        )])
        .unwrap();
        assert!(config.instance("cache", "default").is_none());
        assert_eq!(config.problems().len(), 1, "{:#?}", config.problems());
    }
}
