//! `SANDLOOM__…` environment overrides.

use std::collections::{BTreeMap, BTreeSet};

use toml::Value;

use super::parse::{
    check_name, not_millis, read_millis, read_risks, unknown_top_level, wrong_type,
};
use super::settings::{self, Written};
use super::{
    DEFAULT_SECRET_STORE, Environment, InfraConfig, InstanceConfig, Location, OVERRIDE_PREFIX,
};
use crate::error::Problem;
use crate::options::RawOptions;
use crate::references::{REFERENCE_KEYS, Site, malformed, reference};

/// What the override variable `name` sets, as `InfraConfig::leave_out` names it: a top-level key
/// (`environment`) or an instance (`cache.default`).
pub(super) fn target(name: &str) -> String {
    let path: Vec<String> = name
        .strip_prefix(OVERRIDE_PREFIX)
        .unwrap_or(name)
        .split("__")
        .map(str::to_ascii_lowercase)
        .collect();
    match path.as_slice() {
        [capability, instance, ..] => format!("{capability}.{instance}"),
        [key] => key.clone(),
        [] => String::new(),
    }
}

/// Apply the overrides. One that does not fit is kept as a problem, and what it would have set
/// is left out.
pub(super) fn apply(
    mut config: InfraConfig,
    vars: impl IntoIterator<Item = (String, String)>,
) -> InfraConfig {
    let mut overrides: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(name, _)| name.starts_with(OVERRIDE_PREFIX))
        .collect();
    // Deterministic: the same environment always gives the same configuration and errors.
    overrides.sort();
    let mut problems = Vec::new();
    let mut references = ReferenceOverrides::new();
    // Options set to a literal by an override: one set to a reference too is a problem.
    let mut literals = std::collections::BTreeSet::new();
    for (name, raw) in overrides {
        let location = Location::variable(&name);
        let path: Vec<String> = name[OVERRIDE_PREFIX.len()..]
            .split("__")
            .map(str::to_ascii_lowercase)
            .collect();
        if let [capability, instance, key, part] = path.as_slice()
            && REFERENCE_KEYS.contains(&part.as_str())
        {
            let parts = references
                .entry((capability.clone(), instance.clone(), key.clone()))
                .or_default();
            let slot = if part == "secret" {
                &mut parts.secret
            } else {
                &mut parts.store
            };
            *slot = Some((raw, name));
            continue;
        }
        if let [_, _, key] = path.as_slice()
            && key != "driver"
            && !settings::is_instance_key(key)
        {
            literals.insert(path.clone());
        }
        let value = read_value(&raw);
        let result = match path.as_slice() {
            [key] => apply_top_level(&mut config, key, &value, location.clone()),
            [capability, instance, key] => apply_instance(
                &mut config,
                capability,
                instance,
                key,
                (value, &raw),
                location.clone(),
            ),
            _ => Err(Problem::config(
                location.clone(),
                format!("`{name}` is not a valid override"),
                format!(
                    "use {OVERRIDE_PREFIX}<KEY> for a top-level key or {OVERRIDE_PREFIX}<CAPABILITY>__<INSTANCE>__<KEY> for an instance"
                ),
            )),
        };
        if let Err(problem) = result {
            // A malformed name sets nothing, so it leaves nothing out.
            let target = if path.len() == 1 || path.len() == 3 {
                target(&name)
            } else {
                String::new()
            };
            problems.push((target, problem));
        }
    }
    apply_references(&mut config, references, &literals, &mut problems);
    for entry in config
        .instances
        .values()
        .filter(|entry| entry.driver.is_empty())
    {
        problems.push((
            entry.qualified_name(),
            Problem::config(
                entry.location.clone(),
                format!("`{}` is set by overrides but has no `driver`", entry.qualified_name()),
                format!(
                    "also set {OVERRIDE_PREFIX}{}__{}__DRIVER, or configure the instance in the INFRA file",
                    entry.capability.to_ascii_uppercase(),
                    entry.instance.to_ascii_uppercase()
                ),
            ),
        ));
    }
    // An instance the file could not read stays out: overrides alone would configure half of it.
    let left_out = std::mem::take(&mut config.left_out);
    config.instances.retain(|i| {
        !left_out.contains(&i.capability)
            && !left_out.contains(&format!("{}.{}", i.capability, i.instance))
    });
    config.left_out = left_out;
    for (target, problem) in problems {
        if target.is_empty() {
            config.problems.push(problem);
        } else {
            config.leave_out(&target, problem);
        }
    }
    config.order_problems();
    config
}

// `10` is an integer, `true` a boolean, `["a"]` an array; anything that is not a TOML value is
// the string itself, so `redis://host` needs no quoting.
fn read_value(raw: &str) -> Value {
    format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_owned()))
}

fn apply_top_level(
    config: &mut InfraConfig,
    key: &str,
    value: &Value,
    location: Location,
) -> Result<(), Problem> {
    match key {
        "environment" => {
            let name = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            config.environment = name.parse::<Environment>().map_err(|message| {
                Problem::config(
                    location,
                    message,
                    "set it to development, test or production",
                )
            })?;
        }
        "accepted_risks" => {
            // A comma-separated list is the natural way to write a set in a variable.
            let list = match value {
                Value::String(text) => Value::Array(
                    text.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| Value::String(s.to_owned()))
                        .collect(),
                ),
                other => other.clone(),
            };
            config.accepted_risks = read_risks(&list).map_err(|message| {
                Problem::config(
                    location,
                    message,
                    "give a comma-separated list of known risks",
                )
            })?;
        }
        "start_timeout_ms" | "stop_timeout_ms" => {
            let timeout = read_millis(value).ok_or_else(|| {
                let variable = format!("{OVERRIDE_PREFIX}{}", key.to_ascii_uppercase());
                not_millis(location, key, value, &format!("`{variable}=30000`"))
            })?;
            if key == "start_timeout_ms" {
                config.start_timeout = timeout;
            } else {
                config.stop_timeout = timeout;
            }
        }
        settings::START_WAIT | settings::HEALTH_TIMEOUT | settings::HEALTH_INTERVAL => {
            let variable = format!("{OVERRIDE_PREFIX}{}", key.to_ascii_uppercase());
            let written = Written::Variable(&variable);
            let zero_ok = key == settings::START_WAIT;
            let ms = settings::millis(value, zero_ok, key, location, &written)?;
            match key {
                settings::START_WAIT => config.start_wait = ms,
                settings::HEALTH_TIMEOUT => config.health_timeout = ms,
                _ => config.health_interval = Some(ms),
            }
        }
        other => return Err(unknown_top_level(location, other)),
    }
    Ok(())
}

fn apply_instance(
    config: &mut InfraConfig,
    capability: &str,
    instance: &str,
    key: &str,
    (value, raw): (Value, &str),
    location: Location,
) -> Result<(), Problem> {
    let entry = instance_entry(config, capability, instance, &location)?;
    if key == "driver" {
        let driver = match value {
            Value::String(driver) if !driver.is_empty() => driver,
            Value::String(_) => {
                return Err(Problem::config(
                    location,
                    format!("`{capability}.{instance}` gets an empty `driver` from the override"),
                    "name a linked driver, or unset the variable",
                ));
            }
            other => return Err(wrong_type(location, "driver", "a string", &other)),
        };
        entry.driver = driver;
        entry.driver_location = location;
    } else if settings::is_instance_key(key) {
        let variable = match &location {
            Location::Variable(name) => name.clone(),
            other => other.to_string(),
        };
        settings::set_instance(
            &mut entry.settings,
            capability,
            key,
            &value,
            location,
            &Written::Variable(&variable),
        )?;
    } else {
        if value.is_str() {
            entry.env_strings.remove(key);
        } else {
            entry.env_strings.insert(key.to_owned(), raw.to_owned());
        }
        entry.options.0.insert(key.to_owned(), value);
        // A literal replaces a reference the file wrote for the option, as it replaces a value.
        entry.references.remove(key);
        entry.option_locations.insert(key.to_owned(), location);
    }
    Ok(())
}

/// The instance `capability.instance` an override sets, made when the file has none.
fn instance_entry<'a>(
    config: &'a mut InfraConfig,
    capability: &str,
    instance: &str,
    location: &Location,
) -> Result<&'a mut InstanceConfig, Problem> {
    check_name(instance)
        .map_err(|message| Problem::config(location.clone(), message, "rename the instance"))?;
    Ok(config
        .instances
        .get_or_insert_with((capability, instance), || InstanceConfig {
            capability: capability.to_owned(),
            instance: instance.to_owned(),
            driver: String::new(),
            options: RawOptions::default(),
            location: location.clone(),
            capability_location: location.clone(),
            driver_location: location.clone(),
            option_locations: std::collections::BTreeMap::new(),
            env_strings: super::instance::EnvStrings::default(),
            settings: settings::InstanceSettings::default(),
            references: std::collections::BTreeMap::new(),
        }))
}

/// The two variables of one reference override: `(value, variable name)` of each.
#[derive(Default)]
struct ReferenceParts {
    secret: Option<(String, String)>,
    store: Option<(String, String)>,
}

/// Reference overrides by (capability, instance, option).
type ReferenceOverrides = BTreeMap<(String, String, String), ReferenceParts>;

/// Set the options that overrides write as references (`…__PASSWORD__SECRET`, with
/// `…__PASSWORD__STORE`): each replaces what the file wrote for the option, literal or
/// reference. A problem is kept with the instance it concerns as its target.
fn apply_references(
    config: &mut InfraConfig,
    references: ReferenceOverrides,
    literals: &BTreeSet<Vec<String>>,
    problems: &mut Vec<(String, Problem)>,
) {
    for ((capability, instance, option), parts) in references {
        let target = format!("{capability}.{instance}");
        let site = Site {
            capability: &capability,
            instance: &instance,
            option: &option,
        };
        let variable = |part: &str| {
            format!(
                "{OVERRIDE_PREFIX}{}__{}__{}__{part}",
                capability.to_ascii_uppercase(),
                instance.to_ascii_uppercase(),
                option.to_ascii_uppercase()
            )
        };
        let store = parts.store.as_ref().map(|(raw, _)| raw.clone());
        let written = (
            store
                .clone()
                .unwrap_or_else(|| DEFAULT_SECRET_STORE.to_owned()),
            parts
                .secret
                .as_ref()
                .map(|(raw, _)| raw.clone())
                .unwrap_or_default(),
        );
        let Some((secret, secret_var)) = parts.secret else {
            let store_var = parts.store.map(|(_, name)| name).unwrap_or_default();
            problems.push((
                target,
                malformed(
                    site,
                    written,
                    &Location::variable(&store_var),
                    format!(
                        "`{store_var}` names a store, but `{}` names no secret",
                        variable("SECRET")
                    ),
                    format!(
                        "also set {} to the secret's name, or unset {store_var}",
                        variable("SECRET")
                    ),
                ),
            ));
            continue;
        };
        let location = Location::variable(&secret_var);
        let literal = vec![capability.clone(), instance.clone(), option.clone()];
        if literals.contains(&literal) {
            let literal_var = variable("").trim_end_matches("__").to_owned();
            problems.push((
                target,
                malformed(
                    site,
                    written,
                    &location,
                    format!("`{option}` of `{capability}.{instance}` is set both to a value (`{literal_var}`) and to a secret reference (`{secret_var}`)"),
                    format!("unset one of {literal_var} and {secret_var}"),
                ),
            ));
            continue;
        }
        let read = reference(
            site,
            Some(&Value::String(secret)),
            store.map(Value::String).as_ref(),
            location.clone(),
        );
        let entry = instance_entry(config, &capability, &instance, &location);
        match (read, entry) {
            (Ok(reference), Ok(entry)) => {
                entry.options.remove(&option);
                entry.env_strings.remove(&option);
                entry.option_locations.insert(option.clone(), location);
                entry.references.insert(option, reference);
            }
            (Err(problem), _) | (_, Err(problem)) => problems.push((target, problem)),
        }
    }
}
