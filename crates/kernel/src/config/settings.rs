//! The kernel's own operating settings: waiting for backends at startup, bounding health checks,
//! probing periodically, and per-operation telemetry. Top-level keys of `INFRA`, and the keys of
//! an instance table that are the kernel's, not the driver's.

use std::time::Duration;

use toml::Value;

use super::Location;
use crate::error::Problem;

/// The keys of an instance table the kernel reads itself: they are never passed to the driver,
/// so no driver option may be named so.
///
/// | key | type | meaning |
/// |---|---|---|
/// | `driver` | string | the driver serving the instance |
/// | `start_wait_ms` | integer ≥ 0 | how long to retry a transient `start` failure (overrides the top-level key) |
/// | `health_timeout_ms` | integer > 0 | how long the instance's health check may take (overrides the top-level key) |
/// | `telemetry` | boolean | per-operation spans and metrics for the instance; default `true` |
/// | `rotation_poll_ms` | integer ≥ 0 | `secrets` instances only: how often a store without the `watch` feature is polled for rotated secrets; default 30 000 ([`DEFAULT_ROTATION_POLL`]); 0 turns rotation detection off for the store, watching included |
///
/// ```
/// use sandloom_kernel::InfraConfig;
/// use sandloom_kernel::config::RESERVED_INSTANCE_KEYS;
///
/// assert_eq!(
///     RESERVED_INSTANCE_KEYS,
///     ["driver", "start_wait_ms", "health_timeout_ms", "telemetry", "rotation_poll_ms"]
/// );
/// let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 10\ntelemetry = false\nstart_wait_ms = 5000\n";
/// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
/// let cache = config.instance("cache", "default").unwrap();
/// // Only `capacity` reaches the driver.
/// assert_eq!(cache.options.keys().collect::<Vec<_>>(), ["capacity"]);
/// assert!(!cache.telemetry());
/// ```
pub const RESERVED_INSTANCE_KEYS: &[&str] = &[
    "driver",
    START_WAIT,
    HEALTH_TIMEOUT,
    TELEMETRY,
    ROTATION_POLL,
];

pub(super) const START_WAIT: &str = "start_wait_ms";
pub(super) const HEALTH_TIMEOUT: &str = "health_timeout_ms";
pub(super) const HEALTH_INTERVAL: &str = "health_interval_ms";
pub(super) const TELEMETRY: &str = "telemetry";
pub(super) const ROTATION_POLL: &str = "rotation_poll_ms";

/// How long startup keeps retrying a driver whose `start` fails with a transient error, unless
/// `start_wait_ms` says otherwise: not at all.
///
/// ```
/// use sandloom_kernel::config::DEFAULT_START_WAIT;
/// use sandloom_kernel::InfraConfig;
///
/// assert!(DEFAULT_START_WAIT.is_zero());
/// assert_eq!(InfraConfig::embedded_defaults().start_wait(), DEFAULT_START_WAIT);
/// ```
pub const DEFAULT_START_WAIT: Duration = Duration::ZERO;

/// How long one driver's health check may take, unless `health_timeout_ms` says otherwise.
///
/// ```
/// use std::time::Duration;
/// use sandloom_kernel::config::DEFAULT_HEALTH_TIMEOUT;
/// use sandloom_kernel::InfraConfig;
///
/// assert_eq!(DEFAULT_HEALTH_TIMEOUT, Duration::from_secs(2));
/// assert_eq!(InfraConfig::embedded_defaults().health_timeout(), DEFAULT_HEALTH_TIMEOUT);
/// ```
pub const DEFAULT_HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a `secrets` store without the `watch` feature is polled for rotated secrets,
/// unless its `rotation_poll_ms` says otherwise (0 there turns detection off).
///
/// ```
/// use std::time::Duration;
/// use sandloom_kernel::config::DEFAULT_ROTATION_POLL;
/// use sandloom_kernel::InfraConfig;
///
/// assert_eq!(DEFAULT_ROTATION_POLL, Duration::from_secs(30));
/// let config = InfraConfig::from_toml_str("[secrets.default]\ndriver = \"env\"\nprefix = \"APP_\"\n", "infra.toml").unwrap();
/// assert_eq!(config.instance("secrets", "default").unwrap().rotation_poll(), DEFAULT_ROTATION_POLL);
/// ```
pub const DEFAULT_ROTATION_POLL: Duration = Duration::from_secs(30);

/// The kernel's settings of one instance, each `None` when the instance does not set it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InstanceSettings {
    pub(crate) start_wait: Option<Duration>,
    pub(crate) health_timeout: Option<Duration>,
    pub(crate) telemetry: Option<bool>,
    pub(crate) rotation_poll: Option<Duration>,
}

/// Where a setting is written, for the examples of actions.
pub(super) enum Written<'a> {
    /// In the INFRA file; `instance` is `capability.instance` for an instance key.
    File { instance: Option<&'a str> },
    /// In an override variable.
    Variable(&'a str),
}

impl Written<'_> {
    fn example(&self, key: &str, value: &str) -> String {
        match self {
            Self::File { instance: None } => format!("`{key} = {value}` in INFRA"),
            Self::File {
                instance: Some(instance),
            } => format!("`{key} = {value}` in `[{instance}]`"),
            Self::Variable(variable) => format!("`{variable}={value}`"),
        }
    }

    fn what(&self, key: &str) -> String {
        match self {
            Self::File {
                instance: Some(instance),
            } => format!("`{key}` of `[{instance}]`"),
            _ => format!("`{key}`"),
        }
    }
}

/// Whether `key` is one of the kernel's instance keys (other than `driver`).
pub(super) fn is_instance_key(key: &str) -> bool {
    matches!(key, START_WAIT | HEALTH_TIMEOUT | TELEMETRY | ROTATION_POLL)
}

/// Set the kernel's instance key `key` (one of [`is_instance_key`]) of an instance of
/// `capability` from `value`.
pub(super) fn set_instance(
    settings: &mut InstanceSettings,
    capability: &str,
    key: &str,
    value: &Value,
    location: Location,
    written: &Written<'_>,
) -> Result<(), Problem> {
    match key {
        START_WAIT => settings.start_wait = Some(millis(value, true, key, location, written)?),
        HEALTH_TIMEOUT => {
            settings.health_timeout = Some(millis(value, false, key, location, written)?);
        }
        TELEMETRY => match value {
            Value::Boolean(on) => settings.telemetry = Some(*on),
            other => {
                return Err(Problem::config(
                    location,
                    format!(
                        "{} must be a boolean, found {}",
                        written.what(key),
                        found(other)
                    ),
                    format!(
                        "write {} (telemetry is on by default)",
                        written.example(key, "false")
                    ),
                ));
            }
        },
        // Only a secrets store is watched for rotation: on any other instance the key would
        // be silently meaningless, so it is refused (it may be a misplaced line).
        ROTATION_POLL if capability != "secrets" => {
            return Err(Problem::config(
                location,
                format!(
                    "{} is a key of `secrets` instances only (how often a store is polled for rotated secrets); `{capability}` has no secrets to watch",
                    written.what(key)
                ),
                "remove it, or move it to the `[secrets.<instance>]` table of the store it is meant for",
            ));
        }
        ROTATION_POLL => {
            settings.rotation_poll = Some(millis(value, true, key, location, written)?);
        }
        other => unreachable!("`{other}` is not a kernel instance key"),
    }
    Ok(())
}

/// A duration in milliseconds: a non-negative integer when `zero_ok` (0 turns the setting off),
/// a positive one otherwise.
pub(super) fn millis(
    value: &Value,
    zero_ok: bool,
    key: &str,
    location: Location,
    written: &Written<'_>,
) -> Result<Duration, Problem> {
    let ms = value
        .as_integer()
        .and_then(|ms| u64::try_from(ms).ok())
        .filter(|ms| zero_ok || *ms > 0);
    if let Some(ms) = ms {
        return Ok(Duration::from_millis(ms));
    }
    let (kind, action) = if zero_ok {
        (
            "an integer of milliseconds, 0 or more",
            format!(
                "write a whole number of milliseconds (0 for none), such as {}",
                written.example(key, "30000")
            ),
        )
    } else {
        (
            "a positive integer of milliseconds",
            format!(
                "write a whole number of milliseconds greater than 0, such as {}",
                written.example(
                    key,
                    if key == HEALTH_TIMEOUT {
                        "2000"
                    } else {
                        "30000"
                    }
                )
            ),
        )
    };
    Err(Problem::config(
        location,
        format!(
            "{} must be {kind}, found {}",
            written.what(key),
            found(value)
        ),
        action,
    ))
}

/// A value as found, for a message: `` `-5` `` for an integer, `` string `"soon"` `` otherwise.
pub(super) fn found(value: &Value) -> String {
    match value {
        Value::Integer(ms) => format!("`{ms}`"),
        other => format!("{} `{other}`", other.type_str()),
    }
}
