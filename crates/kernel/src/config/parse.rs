//! TOML text to `InfraConfig`, with a location for every problem.
//!
//! The text is parsed twice: once into spanned tables for locations, once into plain values
//! for the options handed to drivers. Both parsers are the same `toml` crate, so they agree.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use toml::de::{DeTable, DeValue};
use toml::{Spanned, Table, Value};

use super::{
    DEFAULT_START_TIMEOUT, DEFAULT_STOP_TIMEOUT, EXPERIMENTAL_CAPABILITY_RISK, Environment,
    InfraConfig, InstanceConfig, KNOWN_RISKS, Location,
};
use crate::error::Problem;
use crate::options::RawOptions;
use crate::suggest::closest;

pub(super) const TOP_LEVEL_KEYS: &[&str] = &[
    "environment",
    "accepted_risks",
    "start_timeout_ms",
    "stop_timeout_ms",
];

struct Source<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Source<'_> {
    fn at(&self, span: &std::ops::Range<usize>) -> Location {
        Location::of_offset(self.origin, self.text, span.start)
    }
}

pub(super) fn parse(text: &str, origin: &str) -> Result<InfraConfig, Vec<Problem>> {
    let source = Source { text, origin };
    let document = DeTable::parse(text).map_err(|err| {
        let location = err
            .span()
            .map_or_else(|| Location::file(origin), |span| source.at(&span));
        vec![Problem::config(
            location,
            format!("INFRA is not valid TOML: {}", err.message().trim_end()),
            "fix the TOML syntax at that position",
        )]
    })?;
    let values: Table = text.parse().map_err(|err: toml::de::Error| {
        vec![Problem::config(
            Location::file(origin),
            format!("INFRA is not valid TOML: {}", err.message().trim_end()),
            "fix the TOML syntax",
        )]
    })?;

    let mut config = InfraConfig::empty(origin);
    let mut problems = Vec::new();
    for (key, spanned) in document.get_ref() {
        let name: &str = key.get_ref();
        let location = source.at(&key.span());
        let value = &values[name];
        match name {
            "environment" => match value.as_str().map(str::parse::<Environment>) {
                Some(Ok(environment)) => config.environment = environment,
                Some(Err(message)) => problems.push(Problem::config(
                    location,
                    message,
                    "set `environment` to \"development\", \"test\" or \"production\"",
                )),
                None => problems.push(wrong_type(location, "environment", "a string", value)),
            },
            "accepted_risks" => match read_risks(value) {
                Ok(risks) => config.accepted_risks = risks,
                Err(message) => problems.push(Problem::config(
                    location,
                    message,
                    format!(
                        "list accepted risks as strings; known risks: {}",
                        KNOWN_RISKS.join(", ")
                    ),
                )),
            },
            "start_timeout_ms" | "stop_timeout_ms" => match read_millis(value) {
                Some(timeout) if name == "start_timeout_ms" => config.start_timeout = timeout,
                Some(timeout) => config.stop_timeout = timeout,
                None => problems.push(wrong_type(
                    location,
                    name,
                    "a positive integer of milliseconds",
                    value,
                )),
            },
            capability => match (spanned.get_ref(), value) {
                (DeValue::Table(instances), Value::Table(instance_values)) => {
                    read_capability(
                        &source,
                        capability,
                        instances,
                        instance_values,
                        &mut config,
                        &mut problems,
                    );
                }
                _ if closest(capability, TOP_LEVEL_KEYS.iter().copied()).is_some() => {
                    problems.push(unknown_top_level(location, capability));
                }
                _ => problems.push(Problem::config(
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
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems)
    }
}

impl InfraConfig {
    pub(super) fn empty(origin: &str) -> Self {
        Self {
            environment: Environment::default(),
            accepted_risks: BTreeSet::new(),
            start_timeout: DEFAULT_START_TIMEOUT,
            stop_timeout: DEFAULT_STOP_TIMEOUT,
            instances: BTreeMap::new(),
            origin: origin.to_owned(),
        }
    }
}

fn read_capability(
    source: &Source<'_>,
    capability: &str,
    instances: &DeTable<'_>,
    values: &Table,
    config: &mut InfraConfig,
    problems: &mut Vec<Problem>,
) {
    for (key, spanned) in instances {
        let instance: &str = key.get_ref();
        let location = source.at(&key.span());
        let (DeValue::Table(fields), Value::Table(field_values)) =
            (spanned.get_ref(), &values[instance])
        else {
            problems.push(Problem::config(
                location,
                format!("`{capability}.{instance}` is not an instance table"),
                format!(
                    "configure instances as tables: `[{capability}.default]` followed by `driver = \"…\"` and the driver's options"
                ),
            ));
            continue;
        };
        if let Err(message) = check_name(instance) {
            problems.push(Problem::config(location, message, "rename the instance"));
            continue;
        }
        match read_instance(source, capability, instance, location, fields, field_values) {
            Ok(instance_config) => {
                config.instances.insert(
                    (capability.to_owned(), instance.to_owned()),
                    instance_config,
                );
            }
            Err(problem) => problems.push(problem),
        }
    }
}

fn read_instance(
    source: &Source<'_>,
    capability: &str,
    instance: &str,
    location: Location,
    fields: &DeTable<'_>,
    values: &Table,
) -> Result<InstanceConfig, Problem> {
    let driver_key = fields
        .iter()
        .find(|(key, _)| key.get_ref() == "driver")
        .map(|(key, _)| key);
    let (driver, driver_location) = match (driver_key, values.get("driver")) {
        (Some(key), Some(Value::String(driver))) if !driver.is_empty() => {
            (driver.clone(), source.at(&key.span()))
        }
        (Some(key), Some(Value::String(_))) => {
            return Err(Problem::config(
                source.at(&key.span()),
                format!("`[{capability}.{instance}]` has an empty `driver`"),
                format!("name a linked `{capability}` driver: `driver = \"<name>\"`"),
            ));
        }
        (Some(key), Some(other)) => {
            return Err(wrong_type(
                source.at(&key.span()),
                "driver",
                "a string",
                other,
            ));
        }
        _ => {
            return Err(Problem::config(
                location,
                format!("`[{capability}.{instance}]` has no `driver`"),
                format!(
                    "add `driver = \"<name>\"` to `[{capability}.{instance}]`, naming a linked `{capability}` driver"
                ),
            ));
        }
    };
    let mut options = values.clone();
    options.remove("driver");
    let option_locations = fields
        .iter()
        .filter(|(key, _)| key.get_ref() != "driver")
        .map(|(key, _): (&Spanned<_>, _)| (key.get_ref().to_string(), source.at(&key.span())))
        .collect();
    Ok(InstanceConfig {
        capability: capability.to_owned(),
        instance: instance.to_owned(),
        driver,
        options: RawOptions(options),
        location,
        driver_location,
        option_locations,
        env_strings: std::collections::BTreeMap::new(),
    })
}

pub(super) fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "instance name `{name}` must be non-empty lowercase ASCII letters, digits, `_` or `-`"
        ))
    }
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
