//! `infra drivers`: every linked driver, its features and its options.

use std::fmt::Write as _;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::{Value, json};

use super::{Failure, Format, Status, json as doc};
use sandloom_kernel::registry::{self, DriverEntry, Stability};
use sandloom_kernel::{RawOptions, ReportLine};

/// One option of a driver, read from its options' schema.
pub(super) struct OptionInfo {
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) default: Option<Value>,
    pub(super) required: bool,
    pub(super) doc: Option<String>,
}

/// What `infra drivers` says about one entry.
pub(super) struct DriverInfo {
    pub(super) entry: &'static DriverEntry,
    pub(super) stability: Option<Stability>,
    pub(super) supported: Vec<&'static str>,
    /// The features with no option set, when the driver accepts no options at all.
    pub(super) with_defaults: Option<Vec<&'static str>>,
    /// `None`: the options describe no schema.
    pub(super) options: Option<Vec<OptionInfo>>,
}

/// The linked drivers, sorted by capability, name and package.
pub(super) fn linked() -> Vec<DriverInfo> {
    let mut entries: Vec<&'static DriverEntry> = registry::drivers().iter().collect();
    entries.sort_by_key(|e| (e.capability, e.name, e.package));
    entries.into_iter().map(describe).collect()
}

fn describe(entry: &'static DriverEntry) -> DriverInfo {
    // Driver code may panic; a panic here says nothing about the others.
    let supported =
        catch_unwind(entry.supported_features).map_or_else(|_| Vec::new(), <[_]>::to_vec);
    let with_defaults = catch_unwind(AssertUnwindSafe(|| {
        entry.features_for(&RawOptions::default())
    }))
    .ok()
    .and_then(Result::ok);
    let stability = registry::capabilities()
        .iter()
        .find(|spec| spec.name == entry.capability)
        .map(|spec| spec.stability);
    DriverInfo {
        entry,
        stability,
        supported,
        with_defaults,
        options: options_schema(entry).map(|schema| options(&schema)),
    }
}

/// The driver's options schema, parsed; `None` when it describes none (or a broken one).
pub(super) fn options_schema(entry: &DriverEntry) -> Option<Value> {
    let text = catch_unwind(entry.options_schema).ok()??;
    serde_json::from_str(&text).ok()
}

fn options(schema: &Value) -> Vec<OptionInfo> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| OptionInfo {
            name: name.clone(),
            kind: kind(property),
            default: property.get("default").cloned(),
            required: required.contains(&name.as_str()),
            doc: property
                .get("description")
                .and_then(Value::as_str)
                .map(|doc| doc.split_whitespace().collect::<Vec<_>>().join(" ")),
        })
        .collect()
}

/// A short type of a property schema: `integer`, `string | null`, `"debug" | "info"`.
pub(super) fn kind(property: &Value) -> String {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(value) = property.get("const") {
        return value.to_string();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = property.get(key).and_then(Value::as_array) {
            return variants.iter().map(kind).collect::<Vec<_>>().join(" | ");
        }
    }
    let base = match property.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_owned(),
    };
    match property.get("format").and_then(Value::as_str) {
        Some(format) => format!("{base} ({format})"),
        None => base,
    }
}

pub(super) fn run(format: Format, out: &mut dyn Write) -> Result<Status, Failure> {
    let drivers = linked();
    match format {
        Format::Text => write!(out, "{}", text(&drivers))?,
        Format::Json => {
            let drivers: Vec<Value> = drivers.iter().map(driver_json).collect();
            doc::write(
                out,
                &doc::document("drivers", json!({ "drivers": drivers })),
            )?;
        }
    }
    Ok(Status::Ok)
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn text(drivers: &[DriverInfo]) -> String {
    let mut text = format!("{} linked drivers:\n", drivers.len());
    for driver in drivers {
        let entry = driver.entry;
        let stability = driver
            .stability
            .map_or_else(|| "capability not defined".to_owned(), |s| s.to_string());
        let _ = writeln!(
            text,
            "\n{}.{} ({}, contract {}, {stability})",
            entry.capability, entry.name, entry.package, entry.contract_version
        );
        let _ = writeln!(text, "  features: {}", list(&driver.supported));
        match &driver.with_defaults {
            _ if driver.supported.is_empty() => {}
            Some(defaults) if *defaults == driver.supported => {
                let _ = writeln!(text, "    with no option set: all of them");
            }
            Some(defaults) => {
                let _ = writeln!(
                    text,
                    "    with no option set: {} (the others depend on options)",
                    list(defaults)
                );
            }
            None => {
                let _ = writeln!(
                    text,
                    "    with no option set: unknown (some option is required)"
                );
            }
        }
        match &driver.options {
            None => {
                let _ = writeln!(
                    text,
                    "  options: schema unknown (the options type does not derive `JsonSchema`)"
                );
            }
            Some(options) if options.is_empty() => {
                let _ = writeln!(text, "  options: none");
            }
            Some(options) => {
                let _ = writeln!(text, "  options:");
                for option in options {
                    let status = match (&option.default, option.required) {
                        (_, true) => "required".to_owned(),
                        (Some(default), false) => format!("default {default}"),
                        (None, false) => "optional".to_owned(),
                    };
                    let _ = writeln!(text, "    {}: {}, {status}", option.name, option.kind);
                    if let Some(doc) = &option.doc {
                        let _ = writeln!(text, "      {doc}");
                    }
                }
            }
        }
    }
    text
}

fn driver_json(driver: &DriverInfo) -> Value {
    let entry = driver.entry;
    let options = driver.options.as_ref().map(|options| {
        options
            .iter()
            .map(|option| {
                json!({
                    "name": option.name,
                    "type": option.kind,
                    "default": option.default,
                    "required": option.required,
                    "doc": option.doc,
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "capability": entry.capability,
        "name": entry.name,
        "package": entry.package,
        "contract_version": entry.contract_version.to_string(),
        "stability": driver.stability.map(|s| s.to_string()),
        "features": {
            "supported": driver.supported,
            "with_no_options": driver.with_defaults,
        },
        "options_schema": if driver.options.is_some() { "known" } else { "unknown" },
        "options": options,
    })
}

/// A started (or resolved) instance, as `check` and `health` list it.
pub(super) fn report_line(line: &ReportLine) -> Value {
    json!({
        "capability": line.capability,
        "instance": line.instance,
        "driver": line.driver,
        "package": line.package,
        "contract_version": line.contract_version.to_string(),
        "features": line.features,
        "stability": line.stability.to_string(),
    })
}
