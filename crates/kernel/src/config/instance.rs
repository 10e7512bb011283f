//! One configured capability instance: `[capability.instance]`, its driver, options, and the
//! kernel's own keys of its table.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{InfraConfig, Location, settings};
use crate::options::RawOptions;
use crate::references::SecretReference;

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
    /// ([`RESERVED_INSTANCE_KEYS`](crate::config::RESERVED_INSTANCE_KEYS)) are not among them.
    pub options: RawOptions,
    /// Where the instance was configured.
    pub location: Location,
    /// Where `driver` was set.
    pub driver_location: Location,
    /// Where the capability's name is written for this instance (`cache` in
    /// `[cache.sessions]`): what a problem about the capability itself points at (an unknown
    /// capability, an experimental one in production).
    ///
    /// ```
    /// let text = "[cache.default]\ndriver = \"memory\"\n[cache.sessions]\ndriver = \"memory\"\n";
    /// let config = sandloom_kernel::InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let sessions = config.instance("cache", "sessions").unwrap();
    /// assert_eq!(sessions.capability_location.to_string(), "infra.toml:3:2");
    /// assert_eq!(sessions.location.to_string(), "infra.toml:3:8");
    /// ```
    pub capability_location: Location,
    pub(crate) option_locations: BTreeMap<String, Location>,
    /// Options set by environment variables whose text was read as a non-string TOML value
    /// (`123456`, `true`): the raw text, used instead when the driver wants a string there.
    pub(crate) env_strings: EnvStrings,
    /// The kernel's own keys of the table.
    pub(crate) settings: settings::InstanceSettings,
    /// Options whose value is a secret reference, by option key: never among `options`.
    pub(crate) references: BTreeMap<String, SecretReference>,
}

/// The raw text of overrides, by option key. A `PASSWORD` override is such a text, so `Debug`
/// (derived by [`InstanceConfig`], [`InfraConfig`] and the kernel) shows the keys only, as
/// [`RawOptions`] does.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct EnvStrings(BTreeMap<String, String>);

impl std::ops::Deref for EnvStrings {
    type Target = BTreeMap<String, String>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for EnvStrings {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl std::fmt::Debug for EnvStrings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
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

    /// The options written as secret references (`password = { secret = "db/password" }`),
    /// by option key, sorted. They are not among [`options`](Self::options): their values are
    /// read from the store at startup.
    ///
    /// ```
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\", store = \"file\" }\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let cache = config.instance("cache", "default").unwrap();
    /// let refs: Vec<(&str, String)> = cache.references().map(|(k, r)| (k, r.to_string())).collect();
    /// assert_eq!(refs, [("url", r#"{ secret = "redis/url", store = "file" }"#.to_owned())]);
    /// ```
    pub fn references(&self) -> impl Iterator<Item = (&str, &SecretReference)> {
        self.references.iter().map(|(k, r)| (k.as_str(), r))
    }

    /// `capability.instance`.
    ///
    /// ```
    /// let config = sandloom_kernel::InfraConfig::embedded_defaults();
    /// let names: Vec<String> = config.instances().map(|i| i.qualified_name()).collect();
    /// assert_eq!(names, ["cache.default", "lock.default", "notifier.default", "objectstore.default", "taskqueue.default"]);
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

    /// How often this `secrets` store is polled for rotated secrets when it has no `watch`
    /// feature: its `rotation_poll_ms`, else [`DEFAULT_ROTATION_POLL`](crate::config::DEFAULT_ROTATION_POLL).
    /// Zero turns rotation detection off for the store (watching included). Only `secrets`
    /// instances may set it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let text = "[secrets.vault]\ndriver = \"memory\"\nrotation_poll_ms = 5000\n\
    ///             [secrets.off]\ndriver = \"memory\"\nrotation_poll_ms = 0\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// assert_eq!(config.instance("secrets", "vault").unwrap().rotation_poll(), Duration::from_secs(5));
    /// assert!(config.instance("secrets", "off").unwrap().rotation_poll().is_zero());
    ///
    /// // Refused elsewhere: no other capability holds secrets.
    /// let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\nrotation_poll_ms = 5000\n", "infra.toml").unwrap();
    /// assert_eq!(config.problems()[0].code(), "SANDLOOM-B010");
    /// ```
    pub fn rotation_poll(&self) -> Duration {
        self.settings
            .rotation_poll
            .unwrap_or(settings::DEFAULT_ROTATION_POLL)
    }
}

/// The configured instances, sorted by capability then instance: a vector, not a map keyed by
/// owned copies of both names. The configuration moves into `Running` and is dropped at
/// shutdown: a `BTreeMap` keyed by `(String, String)` cost two more allocations per instance to
/// make and to free, and its node (every instance in one block of several KiB) more to free
/// (`BENCHMARKS.md`, issue 27).
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Instances(Vec<InstanceConfig>);

impl Instances {
    /// Where `capability.instance` is, or would be inserted.
    fn position(&self, (capability, instance): (&str, &str)) -> Result<usize, usize> {
        self.0.binary_search_by(|i| {
            (i.capability.as_str(), i.instance.as_str()).cmp(&(capability, instance))
        })
    }

    /// The index of `capability.instance`: a walk, comparing lengths before bytes, costs less
    /// than a binary search's ordered comparisons for the handful of instances there are.
    fn find(&self, (capability, instance): (&str, &str)) -> Option<usize> {
        self.0
            .iter()
            .position(|i| i.capability == capability && i.instance == instance)
    }

    /// The instance `capability.instance`.
    pub(crate) fn get(&self, key: (&str, &str)) -> Option<&InstanceConfig> {
        self.find(key).map(|index| &self.0[index])
    }

    pub(crate) fn get_mut(&mut self, key: (&str, &str)) -> Option<&mut InstanceConfig> {
        self.find(key).map(|index| &mut self.0[index])
    }

    /// Add `instance`, in its place; one configured under the same names is replaced.
    pub(crate) fn insert(&mut self, instance: InstanceConfig) {
        match self.position((&instance.capability, &instance.instance)) {
            Ok(index) => self.0[index] = instance,
            Err(index) => self.0.insert(index, instance),
        }
    }

    /// The instance `capability.instance`, made by `make` when there is none.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: (&str, &str),
        make: impl FnOnce() -> InstanceConfig,
    ) -> &mut InstanceConfig {
        let index = match self.position(key) {
            Ok(index) => index,
            Err(index) => {
                self.0.insert(index, make());
                index
            }
        };
        &mut self.0[index]
    }

    pub(crate) fn remove(&mut self, key: (&str, &str)) -> Option<InstanceConfig> {
        self.find(key).map(|index| self.0.remove(index))
    }

    pub(crate) fn retain(&mut self, keep: impl FnMut(&InstanceConfig) -> bool) {
        self.0.retain(keep);
    }

    pub(crate) fn values(&self) -> std::slice::Iter<'_, InstanceConfig> {
        self.0.iter()
    }

    pub(crate) fn values_mut(&mut self) -> std::slice::IterMut<'_, InstanceConfig> {
        self.0.iter_mut()
    }

    /// `(capability, instance)` of each, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|i| (i.capability.as_str(), i.instance.as_str()))
    }
}

/// As the map it replaced printed itself: `{("cache", "default"): InstanceConfig { … }}`.
impl std::fmt::Debug for Instances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|i| ((&i.capability, &i.instance), i)))
            .finish()
    }
}
