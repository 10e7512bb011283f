//! `infra schema`: a JSON Schema (draft 2020-12) of `INFRA` for the linked drivers.
//!
//! Each capability is an object of instance tables. An instance's `driver` is one of the linked
//! names; the schema of the instance then depends on it (`if` `driver` is that `const`, `then`
//! that driver's schema): the driver's own options, typed and documented as its options type
//! describes them, plus the kernel's instance keys, closed to every other key. A driver whose
//! options describe no schema is "schema unknown": any option is accepted there, never guessed.

use std::io::Write;

use serde_json::{Map, Value, json};

use super::{Failure, Format, Status, drivers, json as doc};
use sandloom_kernel::Environment;
use sandloom_kernel::config::{EXPERIMENTAL_CAPABILITY_RISK, KNOWN_RISKS, MAX_SECRET_NAME_BYTES};
use sandloom_kernel::registry::{self, CapabilitySpec, DriverEntry, Stability};

/// The `$id` of the document; editors only use it as a name.
const ID: &str = "https://sandloom.invalid/schema/infra.json";

/// Text: the schema itself, what an editor reads (save it as `infra.schema.json`). JSON: the
/// schema under `"schema"`, in the envelope every JSON answer has.
pub(super) fn run(format: Format, out: &mut dyn Write) -> Result<Status, Failure> {
    let schema = infra_schema();
    match format {
        Format::Text => doc::write(out, &schema)?,
        Format::Json => doc::write(out, &doc::document("schema", json!({ "schema": schema })))?,
    }
    Ok(Status::Ok)
}

fn millis(description: &str, minimum: u64) -> Value {
    json!({"type": "integer", "minimum": minimum, "description": description})
}

/// The keys the kernel reads in every instance table, besides `driver`.
fn instance_keys() -> Map<String, Value> {
    let mut keys = Map::new();
    keys.insert(
        "start_wait_ms".into(),
        millis(
            "How long startup retries this instance's driver after a transient start failure, in milliseconds (0: no retry; default: the top-level `start_wait_ms`).",
            0,
        ),
    );
    keys.insert(
        "health_timeout_ms".into(),
        millis(
            "How long this instance's health check may take, in milliseconds (default: the top-level `health_timeout_ms`).",
            1,
        ),
    );
    keys.insert(
        "telemetry".into(),
        json!({"type": "boolean", "default": true, "description": "Whether this instance's operations emit spans and metrics."}),
    );
    keys
}

/// The whole document.
pub(super) fn infra_schema() -> Value {
    let mut specs: Vec<&'static CapabilitySpec> = registry::capabilities().iter().collect();
    specs.sort_by_key(|spec| (spec.name, spec.package));
    specs.dedup_by_key(|spec| spec.name);

    let mut properties = Map::new();
    properties.insert(
        "environment".into(),
        json!({
            "enum": Environment::NAMES,
            "default": "development",
            "description": "The environment: in `production`, an experimental capability needs the accepted risk `experimental_capability` (SANDLOOM-B023).",
        }),
    );
    properties.insert(
        "accepted_risks".into(),
        json!({
            "type": "array",
            "items": {"enum": KNOWN_RISKS},
            "uniqueItems": true,
            "description": format!("Risks accepted on purpose; `{EXPERIMENTAL_CAPABILITY_RISK}` allows an experimental capability in production."),
        }),
    );
    properties.insert(
        "start_timeout_ms".into(),
        millis("Per driver start, in milliseconds (default 30000).", 1),
    );
    properties.insert(
        "stop_timeout_ms".into(),
        millis(
            "Per driver stop, and for the drain at shutdown, in milliseconds (default 10000).",
            1,
        ),
    );
    properties.insert("start_wait_ms".into(), millis("How long startup retries a transient start failure, in milliseconds (default 0: no retry).", 0));
    properties.insert(
        "health_timeout_ms".into(),
        millis("Per health check, in milliseconds (default 2000).", 1),
    );
    properties.insert(
        "health_interval_ms".into(),
        millis(
            "Probe health in the background this often, in milliseconds (default: off).",
            1,
        ),
    );

    let mut definitions = reference_definition();
    for spec in specs {
        let mut entries: Vec<&'static DriverEntry> = registry::drivers()
            .iter()
            .filter(|entry| entry.capability == spec.name)
            .collect();
        entries.sort_by_key(|entry| (entry.name, entry.package));
        entries.dedup_by_key(|entry| entry.name);
        let instance_ref = format!("#/$defs/{}", spec.name);
        let stability = match spec.stability {
            Stability::Stable => "",
            Stability::Experimental => " (experimental)",
        };
        properties.insert(
            spec.name.into(),
            json!({
                "type": "object",
                "description": format!("Instances of `{}`{stability}, by name (`[{}.default]`).", spec.name, spec.name),
                "additionalProperties": {"$ref": instance_ref},
            }),
        );
        let names: Vec<&str> = entries.iter().map(|entry| entry.name).collect();
        let mut branches = Vec::new();
        for entry in &entries {
            let key = format!("{}.{}", spec.name, entry.name);
            definitions.insert(key.clone(), driver_schema(entry));
            branches.push(json!({
                "if": {"properties": {"driver": {"const": entry.name}}, "required": ["driver"]},
                "then": {"$ref": format!("#/$defs/{key}")},
            }));
        }
        let driver = if names.is_empty() {
            json!({"type": "string", "description": format!("No `{}` driver is linked into this binary.", spec.name)})
        } else {
            json!({"enum": names, "description": format!("The `{}` driver: one of those linked into this binary.", spec.name)})
        };
        let mut instance = json!({
            "type": "object",
            "required": ["driver"],
            "properties": {"driver": driver},
        });
        if !branches.is_empty() {
            instance["allOf"] = Value::Array(branches);
        }
        definitions.insert(spec.name.into(), instance);
    }

    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ID,
        "title": "Sandloom INFRA",
        "description": "The infrastructure configuration of a Sandloom application, for the drivers linked into its binary (`infra schema`).",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
        "$defs": definitions,
    })
}

/// One driver's instance table: its options plus the kernel's keys, closed; or, without an
/// options schema, the kernel's keys and anything else.
fn driver_schema(entry: &DriverEntry) -> Value {
    let title = format!("{}.{} ({})", entry.capability, entry.name, entry.package);
    let mut common = instance_keys();
    common.insert("driver".into(), json!({"const": entry.name}));
    let Some(Value::Object(mut schema)) = drivers::options_schema(entry) else {
        return json!({
            "title": title,
            "description": "schema unknown: this driver's options type does not describe its schema (`schemars::JsonSchema`), so any option is accepted here; `infra check` still checks them.",
            "type": "object",
            "properties": common,
        });
    };
    schema.remove("$schema");
    schema.insert("title".into(), json!(title));
    // The options type's rustdoc, first paragraph only: the rest is examples for Rust readers.
    if let Some(Value::String(description)) = schema.get_mut("description")
        && let Some((first, _)) = description.split_once("\n\n")
    {
        *description = first.to_owned();
    }
    // The options' own keys, then the kernel's (an option cannot be named like them: the kernel
    // takes those keys out of the table before the driver sees it).
    let mut properties = match schema.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    // An option that holds a secret may be written as a reference instead (the kernel accepts
    // one there only, SANDLOOM-B025 elsewhere).
    for property in properties.values_mut() {
        if write_only(property) {
            let description = property.get("description").cloned();
            let mut either = json!({"anyOf": [property.take(), {"$ref": REFERENCE_REF}]});
            if let Some(description) = description {
                either["description"] = description;
            }
            *property = either;
        }
    }
    properties.extend(common);
    schema.insert("properties".into(), Value::Object(properties));
    let mut required = match schema.remove("required") {
        Some(Value::Array(required)) => required,
        _ => Vec::new(),
    };
    required.push(json!("driver"));
    schema.insert("required".into(), Value::Array(required));
    schema.insert("type".into(), json!("object"));
    Value::Object(schema)
}

/// The definition of a secret reference, under `$defs`.
const REFERENCE_DEF: &str = "secret_reference";
const REFERENCE_REF: &str = "#/$defs/secret_reference";

/// `$defs` holding the secret reference's definition, which drivers' options refer to.
fn reference_definition() -> Map<String, Value> {
    let mut definitions = Map::new();
    definitions.insert(REFERENCE_DEF.to_owned(), reference_schema());
    definitions
}

/// A secret reference, `{ secret = "db/password", store = "default" }`, as the kernel reads it.
fn reference_schema() -> Value {
    json!({
        "title": "secret reference",
        "description": "The option's value is read at startup from a `secrets` instance: the secret `secret` of the store `store` (default: `default`). Accepted only for options that hold a secret (`writeOnly`).",
        "type": "object",
        "properties": {
            "secret": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_SECRET_NAME_BYTES,
                "pattern": "^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
                "description": "The secret's name in its store: segments of ASCII letters, digits, `.`, `_` and `-`, separated by single `/`.",
            },
            "store": {
                "type": "string",
                "default": "default",
                "description": "The `secrets` instance to read from (`[secrets.<store>]`).",
            },
        },
        "required": ["secret"],
        "additionalProperties": false,
    })
}

/// Whether a property's schema holds a secret: `writeOnly`, or a branch that is
/// (`Option<Secret<String>>` is `anyOf: [secret string, null]`).
fn write_only(schema: &Value) -> bool {
    schema.get("writeOnly") == Some(&Value::Bool(true))
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(write_only))
        })
}
