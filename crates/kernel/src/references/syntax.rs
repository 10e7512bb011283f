//! How a reference is written: a table `{ secret = "…", store = "…" }` in the file, or the
//! variables `…__<OPTION>__SECRET` and `…__<OPTION>__STORE`.

use toml::Value;

use super::{DEFAULT_STORE, ReferenceReason, SecretReference};
use crate::error::Problem;
use crate::location::Location;
use crate::suggest::closest;

/// The keys of a reference table, and the last level of a reference override.
pub(crate) const REFERENCE_KEYS: [&str; 2] = ["secret", "store"];

/// Which option of which instance a reference is written for.
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) capability: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) option: &'a str,
}

/// `value`, the value of an option, read as a reference when it is one: `None` when it is an
/// ordinary option (not a table, or a table with neither key nor a misspelling of one), else
/// the reference or its SANDLOOM-B025 problem. `location` is where the table is written.
///
/// A table is a reference when it has `secret` or `store`, or when each of its keys is a
/// near miss of `secret` (`{ secert = "…" }`): a typo is reported, not passed to the
/// driver as an unexpected table.
pub(crate) fn read_table(
    value: &Value,
    site: Site<'_>,
    location: &Location,
) -> Option<Result<SecretReference, Problem>> {
    let table = value.as_table()?;
    let named = table.keys().any(|k| REFERENCE_KEYS.contains(&k.as_str()));
    // Near misses of `secret` only, the key every reference has: an option's own table whose
    // keys merely resemble `store` (`score`) is not taken for a reference.
    let near_misses = !table.is_empty() && table.keys().all(|k| closest(k, ["secret"]).is_some());
    if !named && !near_misses {
        return None;
    }
    if let Some(unknown) = table.keys().find(|k| !REFERENCE_KEYS.contains(&k.as_str())) {
        let hint = closest(unknown, REFERENCE_KEYS.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        return Some(Err(malformed(
            site,
            written(table.get("store"), table.get("secret")),
            location,
            format!(
                "a secret reference has the keys `secret` and `store` only, not `{unknown}`{hint}"
            ),
            format!(
                "write `{} = {{ secret = \"<name>\" }}`, with `store = \"<secrets instance>\"` to read from another store than `{DEFAULT_STORE}`",
                site.option
            ),
        )));
    }
    Some(reference(
        site,
        table.get("secret"),
        table.get("store"),
        location.clone(),
    ))
}

/// A reference from its two parts as written (`None` when absent), checked.
pub(crate) fn reference(
    site: Site<'_>,
    secret: Option<&Value>,
    store: Option<&Value>,
    location: Location,
) -> Result<SecretReference, Problem> {
    let written = written(store, secret);
    let bad = |message: String, action: String| {
        malformed(site, written.clone(), &location, message, action)
    };
    let store = match store {
        None => DEFAULT_STORE.to_owned(),
        Some(Value::String(store)) => {
            let instance = match store.split_once('.') {
                Some((_, instance)) => instance,
                None => store.as_str(),
            };
            if let Err(rule) = sandloom_sdk_infra::check_instance_name(instance) {
                return Err(bad(
                    format!("`store` must name a `secrets` instance, and {:?} {}", store, rule.rule()),
                    "name a `secrets` instance: `store = \"<instance>\"`, as in `[secrets.<instance>]`".to_owned(),
                ));
            }
            store.clone()
        }
        Some(other) => {
            return Err(bad(
                format!("`store` must be a string, found {}", other.type_str()),
                "name a `secrets` instance: `store = \"<instance>\"`".to_owned(),
            ));
        }
    };
    let secret = match secret {
        Some(Value::String(secret)) => secret,
        Some(other) => {
            return Err(bad(
                format!(
                    "`secret` must be a string naming a secret, found {}",
                    other.type_str()
                ),
                "write the secret's name as a string: `secret = \"db/password\"`".to_owned(),
            ));
        }
        None => {
            return Err(bad(
                "a secret reference names its secret with `secret`, and this one has none"
                    .to_owned(),
                "add `secret = \"<name>\"`, the secret's name in its store".to_owned(),
            ));
        }
    };
    if let Err(error) = sandloom_sdk_infra::secrets::check_name(secret) {
        return Err(bad(
            error.message().to_owned(),
            "write a name of segments of ASCII letters, digits, `.`, `_` and `-`, separated by single `/` (at most 256 bytes)".to_owned(),
        ));
    }
    Ok(SecretReference {
        store,
        secret: secret.clone(),
        location,
    })
}

/// A SANDLOOM-B025 problem of a reference written as `(store, secret)`.
pub(crate) fn problem(
    site: Site<'_>,
    (store, secret): (String, String),
    location: Location,
    reason: ReferenceReason,
) -> Problem {
    Problem::Reference {
        capability: site.capability.to_owned(),
        instance: site.instance.to_owned(),
        option: site.option.to_owned(),
        store,
        secret,
        location,
        reason,
    }
}

pub(crate) fn malformed(
    site: Site<'_>,
    written: (String, String),
    location: &Location,
    message: String,
    action: String,
) -> Problem {
    problem(
        site,
        written,
        location.clone(),
        ReferenceReason::Malformed { message, action },
    )
}

/// `(store, secret)` as written, for a problem's text: the default store when none is named.
fn written(store: Option<&Value>, secret: Option<&Value>) -> (String, String) {
    let store = match store {
        None => DEFAULT_STORE.to_owned(),
        some => string_of(some),
    };
    (store, string_of(secret))
}

/// A part as written, for the problem's text; the default store when absent. A name is not a
/// value, so showing it is safe; a part of another type is shown as its type only.
fn string_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => format!("<{}>", other.type_str()),
        None => String::new(),
    }
}
