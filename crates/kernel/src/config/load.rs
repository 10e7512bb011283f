//! Where a configuration comes from: TOML text, a file, the embedded defaults, the process
//! environment (`SANDLOOM_INFRA` and the `SANDLOOM__…` overrides).

use std::path::Path;

use super::{
    EMBEDDED_DEFAULTS, INFRA_FILE_VAR, InfraConfig, Location, OVERRIDE_PREFIX, env, parse,
};
use crate::error::{Problem, StartupError};

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
    pub(super) fn read_file(path: &Path, variable: Option<&str>) -> Result<Self, StartupError> {
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
    /// `.sandloom/objects`), `taskqueue.memory` and `lock.memory`, all as instance `default`.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// assert_eq!(config.instances().count(), 5);
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
}
