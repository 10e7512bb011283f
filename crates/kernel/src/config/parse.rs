//! TOML text to `InfraConfig`, with a location for every problem.
//!
//! The text is parsed once, into spanned tables; each value is then read on its own, so a value
//! that cannot be read (an integer out of range, say) is a problem at its own position, and
//! only the part of the configuration holding it is left out: every other table is still read,
//! and resolved, so one run reports every problem.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize as _;
use serde::de::IntoDeserializer as _;
use toml::de::{DeTable, DeValue};
use toml::{Spanned, Table, Value};

use super::settings::{self, InstanceSettings, Written};
use super::{
    DEFAULT_HEALTH_TIMEOUT, DEFAULT_START_TIMEOUT, DEFAULT_START_WAIT, DEFAULT_STOP_TIMEOUT,
    EXPERIMENTAL_CAPABILITY_RISK, Environment, InfraConfig, InstanceConfig, Instances, KNOWN_RISKS,
    Location,
};
use crate::error::Problem;
use crate::options::RawOptions;
use crate::references::{Site, read_table};
use crate::suggest::closest;

pub(super) const TOP_LEVEL_KEYS: &[&str] = &[
    "environment",
    "accepted_risks",
    "start_timeout_ms",
    "stop_timeout_ms",
    settings::START_WAIT,
    settings::HEALTH_TIMEOUT,
    settings::HEALTH_INTERVAL,
];

struct Source<'a> {
    text: &'a str,
    origin: &'a Arc<str>,
}

impl Source<'_> {
    fn at(&self, span: &std::ops::Range<usize>) -> Location {
        Location::of_offset(self.origin, self.text, span.start)
    }

    /// Where `capability` is written in the header (or inline key) that names the instance
    /// key starting at byte `instance_start`: on the same line, before it. The parsed document
    /// keeps one span per capability key (its first header), so `[cache.sessions]` after
    /// `[cache.default]` would otherwise point at the first header's `cache`. `None` when the
    /// instance is not on a line with its capability (`[cache]` then `default = {…}`).
    fn capability_before(&self, capability: &str, instance_start: usize) -> Option<Location> {
        let before = self.text.get(..instance_start)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let offset = before[line_start..].rfind(capability)? + line_start;
        Some(Location::of_offset(self.origin, self.text, offset))
    }

    /// Read one value; `what` names it for a person (`` `capacity` of `[cache.default]` ``).
    fn value(&self, spanned: &Spanned<DeValue<'_>>, what: &str) -> Result<Value, Problem> {
        Value::deserialize(spanned.clone().into_deserializer()).map_err(|err| {
            let span = err.span().unwrap_or_else(|| spanned.span());
            let raw = self.text.get(span.clone()).unwrap_or_default();
            let is_integer =
                DeValue::parse(raw).is_ok_and(|value| value.get_ref().is_integer());
            // The number itself is not echoed: an option's value may be a secret (a numeric
            // password written unquoted), and the location already points at it.
            let (message, action) = if is_integer {
                (
                    format!(
                        "{what} cannot be read: its integer is out of range (TOML integers are 64-bit: {} to {})",
                        i64::MIN,
                        i64::MAX
                    ),
                    "write a number in that range at that position (or a string, if the option takes one)",
                )
            } else {
                (
                    format!("{what} cannot be read: {}", err.message().trim_end()),
                    "fix the value at that position",
                )
            };
            Problem::config(self.at(&span), message, action)
        })
    }
}

/// Parse `text`. Only text that is not TOML at all is an error; every other problem is kept in
/// the configuration, with the part it concerns left out.
pub(super) fn parse(text: &str, origin: &str) -> Result<InfraConfig, Vec<Problem>> {
    let origin: Arc<str> = Arc::from(origin);
    let source = Source {
        text,
        origin: &origin,
    };
    let document = DeTable::parse(text).map_err(|err| {
        let location = err.span().map_or_else(
            || Location::File(Arc::clone(&origin)),
            |span| source.at(&span),
        );
        vec![Problem::config(
            location,
            format!("INFRA is not valid TOML: {}", err.message().trim_end()),
            "fix the TOML syntax at that position",
        )]
    })?;

    let mut config = InfraConfig::empty(Arc::clone(&origin));
    for (key, spanned) in document.get_ref() {
        let name: &str = key.get_ref();
        let location = source.at(&key.span());
        if let Err(problem) = read_top_level(&source, name, location, spanned, &mut config) {
            config.leave_out(name, problem);
        }
    }
    config.order_problems();
    Ok(config)
}

fn read_top_level(
    source: &Source<'_>,
    name: &str,
    location: Location,
    spanned: &Spanned<DeValue<'_>>,
    config: &mut InfraConfig,
) -> Result<(), Problem> {
    match name {
        settings::START_WAIT | settings::HEALTH_TIMEOUT | settings::HEALTH_INTERVAL => {
            let value = source.value(spanned, &format!("`{name}`"))?;
            let written = Written::File { instance: None };
            let zero_ok = name == settings::START_WAIT;
            let ms = settings::millis(&value, zero_ok, name, location, &written)?;
            match name {
                settings::START_WAIT => config.start_wait = ms,
                settings::HEALTH_TIMEOUT => config.health_timeout = ms,
                _ => config.health_interval = Some(ms),
            }
            Ok(())
        }
        "environment" | "accepted_risks" | "start_timeout_ms" | "stop_timeout_ms" => {
            let value = source.value(spanned, &format!("`{name}`"))?;
            match name {
                "environment" => match value.as_str().map(str::parse::<Environment>) {
                    Some(Ok(environment)) => config.environment = environment,
                    Some(Err(message)) => {
                        return Err(Problem::config(
                            location,
                            message,
                            "set `environment` to \"development\", \"test\" or \"production\"",
                        ));
                    }
                    None => return Err(wrong_type(location, "environment", "a string", &value)),
                },
                "accepted_risks" => {
                    config.accepted_risks = read_risks(&value).map_err(|message| {
                        Problem::config(
                            location,
                            message,
                            format!(
                                "list accepted risks as strings; known risks: {}",
                                KNOWN_RISKS.join(", ")
                            ),
                        )
                    })?;
                }
                _ => {
                    let timeout = read_millis(&value).ok_or_else(|| {
                        not_millis(
                            location,
                            name,
                            &value,
                            &format!("`{name} = 30000` in INFRA"),
                        )
                    })?;
                    if name == "start_timeout_ms" {
                        config.start_timeout = timeout;
                    } else {
                        config.stop_timeout = timeout;
                    }
                }
            }
            Ok(())
        }
        capability => match spanned.get_ref() {
            DeValue::Table(instances) => {
                read_capability(source, (capability, &location), instances, config);
                Ok(())
            }
            _ if closest(capability, TOP_LEVEL_KEYS.iter().copied()).is_some() => {
                Err(unknown_top_level(location, capability))
            }
            _ => Err(Problem::config(
                location,
                format!(
                    "`{capability}` is not a top-level key, and as a capability it must be a table of instances"
                ),
                format!(
                    "configure instances as `[{capability}.default]` followed by `driver = \"…\"`; top-level keys are {}",
                    TOP_LEVEL_KEYS.join(", ")
                ),
            )),
        },
    }
}

impl InfraConfig {
    pub(super) fn empty(origin: Arc<str>) -> Self {
        Self {
            environment: Environment::default(),
            accepted_risks: BTreeSet::new(),
            start_timeout: DEFAULT_START_TIMEOUT,
            stop_timeout: DEFAULT_STOP_TIMEOUT,
            start_wait: DEFAULT_START_WAIT,
            health_timeout: DEFAULT_HEALTH_TIMEOUT,
            health_interval: None,
            instances: Instances::default(),
            origin,
            problems: Vec::new(),
            left_out: BTreeSet::new(),
        }
    }
}

fn read_capability(
    source: &Source<'_>,
    (capability, capability_key): (&str, &Location),
    instances: &DeTable<'_>,
    config: &mut InfraConfig,
) {
    for (key, spanned) in instances {
        let instance: &str = key.get_ref();
        let location = source.at(&key.span());
        let capability_location = source
            .capability_before(capability, key.span().start)
            .unwrap_or_else(|| capability_key.clone());
        let path = format!("{capability}.{instance}");
        let DeValue::Table(fields) = spanned.get_ref() else {
            config.leave_out(
                &path,
                Problem::config(
                    location,
                    format!("`{capability}.{instance}` is not an instance table"),
                    format!(
                        "configure instances as tables: `[{capability}.default]` followed by `driver = \"…\"` and the driver's options"
                    ),
                ),
            );
            continue;
        };
        if let Err(message) = check_name(instance) {
            config.leave_out(
                &path,
                Problem::config(location, message, "rename the instance"),
            );
            continue;
        }
        match read_instance(
            source,
            capability,
            instance,
            (location, capability_location),
            fields,
        ) {
            Ok(instance_config) => {
                config.instances.insert(instance_config);
            }
            Err(problems) => {
                for problem in problems {
                    config.leave_out(&path, problem);
                }
            }
        }
    }
}

/// One instance table, or every problem in it.
fn read_instance(
    source: &Source<'_>,
    capability: &str,
    instance: &str,
    (location, capability_location): (Location, Location),
    fields: &DeTable<'_>,
) -> Result<InstanceConfig, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut driver = None;
    let mut options = Table::new();
    let mut option_locations = BTreeMap::new();
    let mut references = BTreeMap::new();
    let mut kernel_settings = InstanceSettings::default();
    let qualified = format!("{capability}.{instance}");
    for (key, spanned) in fields {
        let name: &str = key.get_ref();
        let key_location = source.at(&key.span());
        let value = match source.value(spanned, &format!("`{name}` of `[{capability}.{instance}]`"))
        {
            Ok(value) => value,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        if settings::is_instance_key(name) {
            let written = Written::File {
                instance: Some(&qualified),
            };
            if let Err(problem) = settings::set_instance(
                &mut kernel_settings,
                capability,
                name,
                &value,
                key_location,
                &written,
            ) {
                problems.push(problem);
            }
            continue;
        }
        if name != "driver" {
            let site = Site {
                capability,
                instance,
                option: name,
            };
            match read_table(&value, site, &source.at(&spanned.span())) {
                Some(Ok(reference)) => {
                    references.insert(name.to_owned(), reference);
                }
                Some(Err(problem)) => problems.push(problem),
                None => {
                    options.insert(name.to_owned(), value);
                }
            }
            option_locations.insert(name.to_owned(), key_location);
            continue;
        }
        match value {
            Value::String(name) if !name.is_empty() => driver = Some((name, key_location)),
            Value::String(_) => problems.push(Problem::config(
                key_location,
                format!("`[{capability}.{instance}]` has an empty `driver`"),
                format!("name a linked `{capability}` driver: `driver = \"<name>\"`"),
            )),
            other => problems.push(wrong_type(key_location, "driver", "a string", &other)),
        }
    }
    let has_driver_key = fields.iter().any(|(key, _)| key.get_ref() == "driver");
    if !has_driver_key {
        problems.push(Problem::config(
            location.clone(),
            format!("`[{capability}.{instance}]` has no `driver`"),
            format!(
                "add `driver = \"<name>\"` to `[{capability}.{instance}]`, naming a linked `{capability}` driver"
            ),
        ));
    }
    match driver {
        Some((driver, driver_location)) if problems.is_empty() => Ok(InstanceConfig {
            capability: capability.to_owned(),
            instance: instance.to_owned(),
            driver,
            options: RawOptions(options),
            location,
            capability_location,
            driver_location,
            option_locations,
            env_strings: super::instance::EnvStrings::default(),
            settings: kernel_settings,
            references,
        }),
        _ => Err(problems),
    }
}

pub(super) fn check_name(name: &str) -> Result<(), String> {
    // One rule with `requires!`, which holds modules' instance names to it at compile time.
    sandloom_sdk_infra::check_instance_name(name)
        .map_err(|error| format!("instance name `{name}` {}", error.rule()))
}

pub(super) fn read_risks(value: &Value) -> Result<BTreeSet<String>, String> {
    let Some(items) = value.as_array() else {
        return Err(format!(
            "`accepted_risks` must be an array of strings, found {}",
            value.type_str()
        ));
    };
    let mut risks = BTreeSet::new();
    for item in items {
        let Some(risk) = item.as_str() else {
            return Err(format!(
                "`accepted_risks` must hold strings, found {}",
                item.type_str()
            ));
        };
        if !KNOWN_RISKS.contains(&risk) {
            let hint = closest(risk, KNOWN_RISKS.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            return Err(format!("unknown accepted risk `{risk}`{hint}"));
        }
        risks.insert(risk.to_owned());
    }
    debug_assert!(KNOWN_RISKS.contains(&EXPERIMENTAL_CAPABILITY_RISK));
    Ok(risks)
}

pub(super) fn read_millis(value: &Value) -> Option<Duration> {
    value
        .as_integer()
        .and_then(|ms| u64::try_from(ms).ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
}

/// `key` (a `*_ms` setting) is not a positive integer: say which value was found. `example`
/// shows how to write it where it was set.
pub(super) fn not_millis(location: Location, key: &str, found: &Value, example: &str) -> Problem {
    let found = match found {
        Value::Integer(ms) => format!("`{ms}`"),
        other => format!("{} `{other}`", other.type_str()),
    };
    Problem::config(
        location,
        format!("`{key}` must be a positive integer of milliseconds, found {found}"),
        format!("write a whole number of milliseconds greater than 0, such as {example}"),
    )
}

pub(super) fn wrong_type(location: Location, key: &str, expected: &str, found: &Value) -> Problem {
    Problem::config(
        location,
        format!("`{key}` must be {expected}, found {}", found.type_str()),
        format!("write `{key}` as {expected}"),
    )
}

pub(super) fn unknown_top_level(location: Location, key: &str) -> Problem {
    let hint = closest(key, TOP_LEVEL_KEYS.iter().copied())
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    Problem::config(
        location,
        format!("unknown top-level key `{key}`{hint}"),
        format!(
            "top-level keys are {}; capabilities are tables such as `[cache.default]`",
            TOP_LEVEL_KEYS.join(", ")
        ),
    )
}
