//! What every JSON answer shares: the header, problems with their location, locations.

use std::io::Write;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

use crate::{InfraConfig, Location, Problem};

/// `{"format_version": 1, "command": …}` followed by `fields`.
pub(super) fn document(command: &str, fields: Value) -> Value {
    let mut document = Map::new();
    document.insert("format_version".into(), json!(super::FORMAT_VERSION));
    document.insert("command".into(), json!(command));
    if let Value::Object(fields) = fields {
        document.extend(fields);
    }
    Value::Object(document)
}

/// Pretty JSON and a newline, `format_version` and `command` first.
pub(super) fn write(out: &mut dyn Write, document: &Value) -> std::io::Result<()> {
    let text =
        serde_json::to_string_pretty(&HeaderFirst(document)).map_err(std::io::Error::other)?;
    writeln!(out, "{text}")
}

/// The keys every answer starts with, in this order.
const HEADER: [&str; 2] = ["format_version", "command"];

/// A document serialized with [`HEADER`] at the top and the other keys after them: a reader
/// (or a person) sees the version before anything that depends on it, while `serde_json`'s
/// maps, without the `preserve_order` feature this crate does not impose on the workspace, sort
/// keys.
struct HeaderFirst<'a>(&'a Value);

impl Serialize for HeaderFirst<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for key in HEADER {
            if let Some(value) = fields.get(key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in fields.iter().filter(|(k, _)| !HEADER.contains(&k.as_str())) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A location as text and as parts: `{"text": "infra.toml:3:1", "file": …, "line": 3,
/// "column": 1}`, `{"text": …, "variable": "SANDLOOM__…"}`, `{"text": …, "file": …}`.
pub(super) fn location(location: &Location) -> Value {
    let text = location.to_string();
    match location {
        Location::Source {
            origin,
            line,
            column,
        } => json!({"text": text, "file": &**origin, "line": line, "column": column}),
        Location::File(origin) => json!({"text": text, "file": &**origin}),
        Location::Variable(name) => json!({"text": text, "variable": name}),
        Location::Code => json!({"text": text}),
    }
}

/// Where in `INFRA` a problem is, as the kernel places and orders problems; with no readable
/// configuration, only the place a problem carries itself.
pub(super) fn problem_location<'a>(
    problem: &'a Problem,
    config: Option<&'a InfraConfig>,
) -> Option<&'a Location> {
    config.map_or_else(
        || problem.location(),
        |config| config.problem_location(problem),
    )
}

/// A problem: code, location (or `null`), description, action.
pub(super) fn problem(problem: &Problem, config: Option<&InfraConfig>) -> Value {
    json!({
        "code": problem.code(),
        "location": problem_location(problem, config).map_or(Value::Null, location),
        "description": problem.description(),
        "action": problem.action(),
    })
}
