//! The secrets the kit plants itself: every `writeOnly` property of the driver's options schema
//! (what `Secret` and `SecretUrl` describe themselves as, nested ones included) gets a value of
//! the kit's own, and the rest of the options is what the schema requires and nothing more.
//!
//! The kit cannot put its values into the options the driver author's closure builds (an
//! options type is `Deserialize`, never `Serialize`, and `Secret` deliberately is not), so it
//! builds a second set of options from the schema alone and deserializes them, as the kernel
//! does from `INFRA`: a planted property gets its value, a required property without a default
//! gets a filler of its type (the first of an `enum`, `"sandloom-kit"`, the minimum or 1,
//! `false`, `[]`), and everything else is left to the options' own defaults.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

/// First digits of a planted integer secret: unlikely to show by chance in any text.
const INTEGER_BASE: u64 = 862_014_137_000;

/// The options document the kit builds, and the secrets it planted in it.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The options, as JSON, ready to deserialize into the driver's options type.
    pub(crate) document: Value,
    /// Each planted secret: the option it is in (`url`, `auth.token`, `headers.*`), and the
    /// text that must never show.
    pub(crate) secrets: Vec<(String, String)>,
}

/// The plan for the options described by `schema` (JSON Schema text), or `None` when no
/// property is `writeOnly`: nothing to plant, and nothing extra to check.
///
/// # Errors
/// When `schema` is not JSON.
pub(crate) fn plan(schema: &str) -> Result<Option<Plan>, String> {
    let schema: Value = serde_json::from_str(schema)
        .map_err(|error| format!("the options' JSON Schema is not JSON: {error}"))?;
    let mut secrets = Vec::new();
    let document = fill(&schema, "", true, false, &mut secrets).unwrap_or(Value::Null);
    Ok((!secrets.is_empty()).then_some(Plan { document, secrets }))
}

/// The value for `schema` at `path`: planted when it (or what holds it) is `writeOnly`, a
/// filler when `required`, a nested document when something inside was planted, else `None`.
fn fill(
    schema: &Value,
    path: &str,
    required: bool,
    secret: bool,
    secrets: &mut Vec<(String, String)>,
) -> Option<Value> {
    let Value::Object(schema) = schema else {
        return required.then_some(Value::Null);
    };
    let secret = secret || schema.get("writeOnly") == Some(&Value::Bool(true));
    // `Option<T>` and untagged choices: the first branch that is not `null`.
    for choice in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(choice) {
            let branch = branches
                .iter()
                .find(|b| b.get("type") != Some(&Value::String("null".into())))?;
            let mut merged = schema.clone();
            merged.remove(choice);
            if let Value::Object(branch) = branch {
                merged.extend(branch.clone());
            }
            return fill(&Value::Object(merged), path, required, secret, secrets);
        }
    }
    let types = types(schema);
    let has = |t: &str| types.iter().any(|known| known == t);
    if secret && has("string") {
        let token = token();
        let value = match address_scheme(schema) {
            // An address: the token as its password, at a port where nothing answers.
            Some(kind) => format!("{kind}://sandloom-kit:{token}@127.0.0.1:1"),
            None => token.clone(),
        };
        secrets.push((name(path), token));
        return Some(Value::String(value));
    }
    if secret && has("integer") {
        let number = INTEGER_BASE + next();
        secrets.push((name(path), number.to_string()));
        return Some(Value::from(number));
    }
    let before = secrets.len();
    if has("object") || schema.contains_key("properties") {
        let mut object = Map::new();
        let needed: Vec<&str> = match schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (key, property) in properties {
                let inner = join(path, key);
                let required = needed.contains(&key.as_str());
                if let Some(value) = fill(property, &inner, required, secret, secrets) {
                    object.insert(key.clone(), value);
                }
            }
        }
        // A map (`BTreeMap<String, Secret<String>>`): one entry, when its values are secret.
        if let Some(values @ Value::Object(_)) = schema.get("additionalProperties") {
            let planted = secrets.len();
            if let Some(value) = fill(values, &join(path, "*"), false, secret, secrets)
                && secrets.len() > planted
            {
                object.insert("sandloom-kit".to_owned(), value);
            }
        }
        return (required || secrets.len() > before).then_some(Value::Object(object));
    }
    if has("array") {
        let planted = secrets.len();
        let item = schema
            .get("items")
            .and_then(|items| fill(items, &join(path, "[]"), false, secret, secrets))
            .filter(|_| secrets.len() > planted);
        return match item {
            Some(item) => Some(Value::Array(vec![item])),
            None => required.then(|| Value::Array(Vec::new())),
        };
    }
    if !required || schema.contains_key("default") {
        return None;
    }
    Some(filler(schema, &types))
}

/// A value of the schema's type, for a required property the kit has nothing to say about.
fn filler(schema: &Map<String, Value>, types: &[String]) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && let Some(first) = values.first()
    {
        return first.clone();
    }
    // At least 1: a count or a duration of 0 is the value a driver most often refuses.
    let minimum = schema.get("minimum");
    match types.first().map(String::as_str) {
        Some("string") => Value::String("sandloom-kit".to_owned()),
        Some("integer") => Value::from(minimum.and_then(Value::as_u64).unwrap_or(1).max(1)),
        Some("number") => Value::from(minimum.and_then(Value::as_f64).unwrap_or(1.0).max(1.0)),
        Some("boolean") => Value::Bool(false),
        _ => Value::Null,
    }
}

/// The schema's `type`, as a list (`"string"` or `["string", "null"]`).
fn types(schema: &Map<String, Value>) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The scheme of the address a property's description names (`redis://…` in "The server:
/// `redis://[user][:password@]host`"), if it names one: its secret is then planted as the
/// password of such an address. A heuristic, and the reason a driver whose address the kit
/// cannot guess still declares its secrets (see `Kit::secrets`).
fn address_scheme(schema: &Map<String, Value>) -> Option<String> {
    let text = schema.get("description").and_then(Value::as_str)?;
    let at = text.find("://")?;
    let found: String = text[..at]
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect();
    let starts_with_letter = found
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic());
    starts_with_letter.then_some(found)
}

/// A fresh secret: distinct per planted option and per process.
fn token() -> String {
    format!("sandloom-planted-{}-{}", std::process::id(), next())
}

fn next() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn name(path: &str) -> String {
    if path.is_empty() {
        "the options".to_owned()
    } else {
        format!("`{path}`")
    }
}

#[cfg(test)]
mod tests {
    use super::plan;
    use serde_json::json;

    #[test]
    fn every_write_only_property_is_planted_and_required_ones_filled() {
        let schema = json!({
            "type": "object",
            "required": ["host", "mode", "url"],
            "properties": {
                "host": {"type": "string"},
                "mode": {"enum": ["fast", "safe"]},
                "port": {"type": "integer", "default": 5},
                "url": {"type": "string", "writeOnly": true,
                        "description": "The server: `redis://[:password@]host`."},
                "password": {"anyOf": [{"type": "string", "writeOnly": true}, {"type": "null"}]},
                "pin": {"type": ["integer", "null"], "writeOnly": true},
                "auth": {"type": "object", "properties": {
                    "token": {"type": "string", "writeOnly": true},
                    "user": {"type": "string"}
                }, "required": ["user"]},
                "headers": {"type": "object",
                            "additionalProperties": {"type": "string", "writeOnly": true}},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}}
            }
        });
        let plan = plan(&schema.to_string())
            .unwrap()
            .expect("secrets to plant");
        let doc = &plan.document;
        let names: Vec<&str> = plan.secrets.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "`auth.token`",
                "`headers.*`",
                "`password`",
                "`pin`",
                "`url`"
            ]
        );
        let secret = |n: usize| plan.secrets[n].1.clone();
        assert_eq!(doc["host"], "sandloom-kit");
        assert_eq!(doc["mode"], "fast");
        assert!(
            doc.get("port").is_none(),
            "a default is left to the type: {doc}"
        );
        assert!(doc.get("tags").is_none(), "nothing secret inside: {doc}");
        assert_eq!(doc["auth"]["token"], secret(0));
        assert_eq!(doc["auth"]["user"], "sandloom-kit");
        assert_eq!(doc["headers"]["sandloom-kit"], secret(1));
        assert_eq!(doc["password"], secret(2));
        assert_eq!(doc["pin"].to_string(), secret(3));
        assert_eq!(
            doc["url"],
            format!("redis://sandloom-kit:{}@127.0.0.1:1", secret(4))
        );
    }

    #[test]
    fn nothing_write_only_plans_nothing() {
        let schema = json!({"type": "object", "properties": {"url": {"type": "string"}}});
        assert!(plan(&schema.to_string()).unwrap().is_none());
        assert!(plan("not json").is_err());
    }
}
