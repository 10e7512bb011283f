//! `INFRA` reading and resolution under generated input (issue 15, item 5): arbitrary text,
//! structured documents that are wrong in every way TOML allows, valid documents in every
//! layout, and `SANDLOOM__…` overrides.
//!
//! What holds, whatever the input:
//! - `InfraConfig::from_toml_str`, `with_overrides` and `Kernel::check` never panic;
//! - every problem has a stable code, and every problem that names a place names a line and
//!   column of the file (`infra.toml:3:12`, also written in its description) or the variable
//!   that set it;
//! - a valid file stays valid, with the same configuration and the same check report, when it
//!   is laid out otherwise (re-serialized by `toml`, tables reordered or written inline or as
//!   dotted keys, comments and whitespace added), and the order of tables and of variables
//!   changes nothing.
//!
//! Failures are replayed first on every later run from `tests/prop_infra.proptest-regressions`
//! (commit it when a run adds to it); the fuzz targets of the same properties are in `fuzz/`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use sandloom::{InfraConfig, Kernel, Location, Problem, StartupReport, UnusableReason};
use toml::Value;

const ORIGIN: &str = "infra.toml";

/// `cases` per property in CI (a few seconds in all); `PROPTEST_CASES=N` runs N instead.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/prop_infra.proptest-regressions"
        )))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// What every problem must be.

/// The location a problem carries, if its kind carries one.
fn location(problem: &Problem) -> Option<&Location> {
    match problem {
        Problem::Config { location, .. }
        | Problem::NoDriver { location, .. }
        | Problem::Experimental { location, .. }
        | Problem::Unusable {
            reason: UnusableReason::Options { location, .. },
            ..
        } => Some(location),
        _ => None,
    }
}

/// A code, a description and an action; a place in `text` or one of `variables`.
fn assert_well_formed(problem: &Problem, text: &str, variables: &[String]) {
    let code = problem.code();
    assert!(
        code.starts_with("SANDLOOM-B") && code.len() == "SANDLOOM-B000".len(),
        "{problem:?}"
    );
    assert!(!problem.description().is_empty(), "{problem:?}");
    assert!(!problem.action().is_empty(), "{problem:?}");
    match location(problem) {
        None => {}
        Some(Location::Source {
            origin,
            line,
            column,
        }) => {
            assert_eq!(&**origin, ORIGIN, "{problem:?}");
            let lines: Vec<&str> = text.split('\n').collect();
            assert!(
                (1..=lines.len()).contains(line),
                "line {line} of {}: {problem:?}",
                lines.len()
            );
            let width = lines[line - 1].chars().count();
            assert!(
                (1..=width + 1).contains(column),
                "column {column} of {width}: {problem:?}"
            );
            let at = format!("{ORIGIN}:{line}:{column}");
            assert!(problem.description().contains(&at), "{problem:?}");
        }
        Some(Location::Variable(name)) => {
            assert!(
                variables.contains(name),
                "{problem:?} not from {variables:?}"
            );
        }
        Some(other) => {
            panic!("a problem of a file without a line and column ({other:?}): {problem:?}")
        }
    }
}

fn kernel(config: InfraConfig) -> Kernel {
    Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
}

/// Read `text`, apply `variables`, check it; assert every problem is well formed. The check
/// result, when the text was TOML.
fn read_and_check(
    text: &str,
    variables: &[(String, String)],
) -> Option<Result<StartupReport, Vec<Problem>>> {
    let names: Vec<String> = variables.iter().map(|(name, _)| name.clone()).collect();
    let config = match InfraConfig::from_toml_str(text, ORIGIN) {
        Ok(config) => config,
        Err(err) => {
            let [problem] = err.problems() else {
                panic!("text that is not TOML is one problem: {err:?}")
            };
            assert_eq!(problem.code(), "SANDLOOM-B010");
            assert_well_formed(problem, text, &[]);
            return None;
        }
    };
    let config = config.with_overrides(variables.iter().cloned()).unwrap();
    for problem in config.problems() {
        // A malformed secret reference (`{ secert = … }`) is SANDLOOM-B025, found while reading.
        assert!(
            ["SANDLOOM-B010", "SANDLOOM-B025"].contains(&problem.code()),
            "{problem:?}"
        );
        assert_well_formed(problem, text, &names);
    }
    let kept = config.problems().len();
    let result = kernel(config).check().map_err(|err| {
        assert!(err.problems().len() >= kept.max(1), "{err:?}");
        for problem in err.problems() {
            assert_well_formed(problem, text, &names);
        }
        assert!(!err.to_string().is_empty());
        err.problems().to_vec()
    });
    if let Ok(report) = &result {
        assert_eq!(
            kept, 0,
            "check passed a configuration with problems: {report:?}"
        );
    }
    Some(result)
}

// ---------------------------------------------------------------------------------------------
// Structured documents that are wrong in every way: values of every TOML type, integers out of
// range, deep nesting, unicode and empty names, duplicate keys and tables, arrays where tables
// are expected, dotted keys and inline tables.

#[derive(Debug, Clone)]
enum Val {
    Int(i64),
    /// An integer TOML cannot hold, or written in another base.
    Big(&'static str),
    Float(&'static str),
    Bool(bool),
    Str(String),
    Date(&'static str),
    Array(Vec<Val>),
    Table(Vec<(String, Val)>),
    /// `n` nested arrays.
    Deep(usize),
}

const BIG: &[&str] = &[
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999999999999",
    "9223372036854775808",
    "0xffffffffffffffffff",
    "0o7777777777777777777777777",
    "0b11111111111111111111111111111111111111111111111111111111111111111",
    "1_000_000_000_000_000_000_000",
    "0x7fffffffffffffff",
    "-0",
];
const FLOATS: &[&str] = &[
    "nan", "-nan", "inf", "-inf", "1.5e308", "0.0", "-0.0", "3.25", "1e-400", "5e+22",
];
const DATES: &[&str] = &[
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "1979-05-27T00:32:00.999999-07:00",
    "1979-05-27 07:32:00",
];
/// Keys and names that mean something to the kernel or an embedded driver, and some that
/// almost do.
const NAMES: &[&str] = &[
    "driver",
    "capacity",
    "default_ttl_ms",
    "root",
    "level",
    "outbox",
    "visibility_timeout_ms",
    "max_attempts",
    "dedupe_window_ms",
    "start_wait_ms",
    "health_timeout_ms",
    "health_interval_ms",
    "telemetry",
    "environment",
    "enviroment",
    "accepted_risks",
    "start_timeout_ms",
    "stop_timeout_ms",
    "default",
    "sessions",
    "cache",
    "cach",
    "notifier",
    "objectstore",
    "taskqueue",
    "lock",
    "secrets",
    "graph_store",
    "workflow",
    "search",
    "",
    "Default",
    "a b",
    "défaut",
    "memory",
    "log",
    "fs",
];
const DRIVERS: &[&str] = &[
    "memory", "log", "fs", "console", "redis", "", "Memory", "mémoire",
];
const CAPABILITIES: &[&str] = &[
    "cache",
    "notifier",
    "objectstore",
    "taskqueue",
    "lock",
    "secrets",
    "graph_store",
    "cach",
    "environment",
    "",
    "κλειδί",
];
const INSTANCES: &[&str] = &["default", "sessions", "x-1", "Default", "", "a b", "é"];

fn name(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(pool).prop_map(str::to_owned),
        1 => "\\PC{0,8}",
        1 => "[a-z_]{1,10}",
    ]
}

fn text_value() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(DRIVERS).prop_map(str::to_owned),
        1 => prop::sample::select(&["debug", "info", "warn", "production", "test", "experimental_capability", ".sandloom/o", "../x"][..]).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

fn value() -> impl Strategy<Value = Val> {
    let leaf = prop_oneof![
        8 => prop_oneof![Just(0_i64), Just(1), Just(-1), 1..100_000_i64, any::<i64>()].prop_map(Val::Int),
        3 => prop::sample::select(BIG).prop_map(Val::Big),
        2 => prop::sample::select(FLOATS).prop_map(Val::Float),
        2 => any::<bool>().prop_map(Val::Bool),
        6 => text_value().prop_map(Val::Str),
        1 => prop::sample::select(DATES).prop_map(Val::Date),
        // Past the parser's depth limit (not TOML, one located problem) and within it.
        1 => prop_oneof![1..40_usize, 40..400_usize].prop_map(Val::Deep),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Val::Array),
            prop::collection::vec((name(NAMES), inner), 0..4).prop_map(Val::Table),
        ]
    })
}

fn key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_owned()
    } else {
        // A basic string on one line (`toml` writes some strings as multi-line ones, which a
        // key cannot be).
        let mut quoted = String::from('"');
        for c in name.chars() {
            match c {
                '"' | '\\' => {
                    quoted.push('\\');
                    quoted.push(c);
                }
                c if c.is_control() => {
                    let _ = write!(quoted, "\\u{:04X}", u32::from(c));
                }
                c => quoted.push(c),
            }
        }
        quoted.push('"');
        quoted
    }
}

fn render(value: &Val) -> String {
    match value {
        Val::Int(n) => n.to_string(),
        Val::Big(text) | Val::Float(text) | Val::Date(text) => (*text).to_owned(),
        Val::Bool(b) => b.to_string(),
        Val::Str(s) => Value::String(s.clone()).to_string(),
        Val::Array(items) => format!(
            "[{}]",
            items.iter().map(render).collect::<Vec<_>>().join(", ")
        ),
        Val::Table(entries) => format!(
            "{{ {} }}",
            entries
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), render(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Val::Deep(n) => format!("{}{}", "[".repeat(*n), "]".repeat(*n)),
    }
}

/// How a table is written.
#[derive(Debug, Clone, Copy)]
enum Form {
    Header,
    ArrayOfTables,
    Inline,
    Dotted,
}

#[derive(Debug, Clone)]
struct Table {
    path: Vec<String>,
    form: Form,
    entries: Vec<(String, Val)>,
}

fn entry() -> impl Strategy<Value = (String, Val)> {
    prop_oneof![
        2 => prop_oneof![
            3 => prop::sample::select(DRIVERS).prop_map(|d| Val::Str(d.to_owned())),
            1 => value(),
        ].prop_map(|v| ("driver".to_owned(), v)),
        3 => (name(NAMES), value()),
    ]
}

fn table() -> impl Strategy<Value = Table> {
    let path = prop_oneof![
        1 => name(CAPABILITIES).prop_map(|c| vec![c]),
        6 => (name(CAPABILITIES), name(INSTANCES)).prop_map(|(c, i)| vec![c, i]),
        1 => (name(CAPABILITIES), name(INSTANCES), name(NAMES)).prop_map(|(c, i, k)| vec![c, i, k]),
    ];
    let form = prop_oneof![
        6 => Just(Form::Header),
        1 => Just(Form::ArrayOfTables),
        1 => Just(Form::Inline),
        1 => Just(Form::Dotted),
    ];
    (path, form, prop::collection::vec(entry(), 0..5)).prop_map(|(path, form, entries)| Table {
        path,
        form,
        entries,
    })
}

/// A TOML document (or nearly: duplicates make some of them not TOML).
fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((name(NAMES), value()), 0..4),
        prop::collection::vec(table(), 0..6),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(mut top, mut tables, duplicates)| {
            // Mostly without duplicate keys and tables, which are not TOML at all.
            if !duplicates {
                let mut seen = std::collections::BTreeSet::new();
                top.retain(|(k, _)| seen.insert(k.clone()));
                tables.retain(|t| seen.insert(t.path.join("\0")));
                for table in &mut tables {
                    let mut seen = std::collections::BTreeSet::new();
                    table.entries.retain(|(k, _)| seen.insert(k.clone()));
                }
            }
            let dotted =
                |path: &[String]| path.iter().map(|p| key(p)).collect::<Vec<_>>().join(".");
            let mut head = String::new();
            let mut body = String::new();
            for (k, v) in &top {
                let _ = writeln!(head, "{} = {}", key(k), render(v));
            }
            for table in &tables {
                let path = dotted(&table.path);
                match table.form {
                    Form::Header | Form::ArrayOfTables => {
                        let (open, close) = match table.form {
                            Form::Header => ("[", "]"),
                            _ => ("[[", "]]"),
                        };
                        let _ = writeln!(body, "{open}{path}{close}");
                        for (k, v) in &table.entries {
                            let _ = writeln!(body, "{} = {}", key(k), render(v));
                        }
                    }
                    Form::Inline => {
                        let _ = writeln!(
                            head,
                            "{path} = {}",
                            render(&Val::Table(table.entries.clone()))
                        );
                    }
                    Form::Dotted => {
                        for (k, v) in &table.entries {
                            let _ = writeln!(head, "{path}.{} = {}", key(k), render(v));
                        }
                    }
                }
            }
            head + &body
        })
}

// ---------------------------------------------------------------------------------------------
// Valid documents, and the layouts of each.

#[derive(Debug, Clone)]
struct Instance {
    capability: &'static str,
    name: String,
    driver: &'static str,
    /// The driver's options and the kernel's own keys of the table.
    keys: Vec<(&'static str, Value)>,
}

#[derive(Debug, Clone)]
struct Valid {
    top: Vec<(&'static str, Value)>,
    instances: Vec<Instance>,
}

fn int(range: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = Value> {
    range.prop_map(Value::Integer)
}

fn options(capability: &str, driver: &str) -> BoxedStrategy<Vec<(&'static str, Value)>> {
    let some = |pairs: Vec<BoxedStrategy<(&'static str, Value)>>| {
        prop::sample::subsequence((0..pairs.len()).collect::<Vec<_>>(), 0..=pairs.len())
            .prop_flat_map(move |picked| {
                picked
                    .into_iter()
                    .map(|i| pairs[i].clone())
                    .collect::<Vec<_>>()
            })
            .boxed()
    };
    let ms = || int(1..=86_400_000);
    match (capability, driver) {
        ("cache", _) => some(vec![
            int(1..=1_000_000).prop_map(|v| ("capacity", v)).boxed(),
            ms().prop_map(|v| ("default_ttl_ms", v)).boxed(),
        ]),
        ("notifier", "log") => some(vec![
            prop::sample::select(&["debug", "info", "warn"][..])
                .prop_map(|l| ("level", Value::String(l.to_owned())))
                .boxed(),
        ]),
        ("notifier", _) => some(vec![
            int(1..=100_000).prop_map(|v| ("capacity", v)).boxed(),
            "[a-z]{1,8}"
                .prop_map(|o| ("outbox", Value::String(o)))
                .boxed(),
        ]),
        ("objectstore", "fs") => "[a-z]{1,8}(/[a-z.]{1,8}){0,2}"
            .prop_map(|root| vec![("root", Value::String(format!(".sandloom/{root}")))])
            .boxed(),
        ("taskqueue", _) => some(vec![
            ms().prop_map(|v| ("visibility_timeout_ms", v)).boxed(),
            int(1..=1_000).prop_map(|v| ("max_attempts", v)).boxed(),
            int(0..=86_400_000)
                .prop_map(|v| ("dedupe_window_ms", v))
                .boxed(),
        ]),
        _ => Just(Vec::new()).boxed(),
    }
}

fn kernel_keys() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    (
        prop::option::of(int(0..=600_000)),
        prop::option::of(int(1..=60_000)),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(wait, health, telemetry)| {
            let mut keys = Vec::new();
            keys.extend(wait.map(|v| ("start_wait_ms", v)));
            keys.extend(health.map(|v| ("health_timeout_ms", v)));
            keys.extend(telemetry.map(|v| ("telemetry", Value::Boolean(v))));
            keys
        })
}

fn valid() -> impl Strategy<Value = Valid> {
    let selection = prop::sample::select(
        &[
            ("cache", "memory"),
            ("notifier", "log"),
            ("notifier", "memory"),
            ("objectstore", "fs"),
            ("objectstore", "memory"),
            ("taskqueue", "memory"),
            ("lock", "memory"),
        ][..],
    );
    // The name rule refuses a trailing `_` and `__`, which no `SANDLOOM__…` override could reach.
    let overridable = |name: &String| !name.ends_with('_') && !name.contains("__");
    let name = "[a-z0-9_-]{1,10}".prop_filter("overridable", overridable);
    let instance = (selection, name).prop_flat_map(|((capability, driver), name)| {
        (options(capability, driver), kernel_keys()).prop_map(move |(mut keys, kernel)| {
            keys.extend(kernel);
            Instance {
                capability,
                name: name.clone(),
                driver,
                keys,
            }
        })
    });
    let instances = prop::collection::vec(instance, 0..7).prop_map(|instances| {
        let mut seen = std::collections::BTreeSet::new();
        instances
            .into_iter()
            .filter(|i| seen.insert((i.capability, i.name.clone())))
            .collect::<Vec<_>>()
    });
    let top = (
        prop::sample::select(&["development", "test", "production"][..]),
        any::<bool>(),
        prop::option::of(int(1..=600_000)),
        prop::option::of(int(1..=600_000)),
        prop::option::of(int(0..=600_000)),
        prop::option::of(int(1..=60_000)),
        prop::option::of(int(1..=600_000)),
    );
    (top, instances).prop_map(
        |((environment, risk, start, stop, wait, health, interval), instances)| {
            // Every capability here is stable (`lock` too, since 1.0): the accepted risk is
            // written or not at random, and changes nothing.
            let mut top = vec![("environment", Value::String(environment.to_owned()))];
            if risk {
                top.push((
                    "accepted_risks",
                    Value::Array(vec![Value::String("experimental_capability".to_owned())]),
                ));
            }
            for (key, value) in [
                ("start_timeout_ms", start),
                ("stop_timeout_ms", stop),
                ("start_wait_ms", wait),
                ("health_timeout_ms", health),
                ("health_interval_ms", interval),
            ] {
                top.extend(value.map(|v| (key, v)));
            }
            Valid { top, instances }
        },
    )
}

impl Valid {
    /// The document as a `toml` table, for `toml` to write.
    fn table(&self) -> toml::Table {
        let mut doc = toml::Table::new();
        for (key, value) in &self.top {
            doc.insert((*key).to_owned(), value.clone());
        }
        for instance in &self.instances {
            let mut fields = toml::Table::new();
            fields.insert(
                "driver".to_owned(),
                Value::String(instance.driver.to_owned()),
            );
            for (key, value) in &instance.keys {
                fields.insert((*key).to_owned(), value.clone());
            }
            let capability = doc
                .entry(instance.capability)
                .or_insert_with(|| Value::Table(toml::Table::new()));
            capability
                .as_table_mut()
                .unwrap()
                .insert(instance.name.clone(), Value::Table(fields));
        }
        doc
    }
}

/// How a valid document is laid out by hand.
#[derive(Debug, Clone)]
struct Layout {
    /// The order the instances are written in.
    order: Vec<usize>,
    /// Per instance: 0 `[cap.inst]`, 1 `inst = { … }` under `[cap]`, 2 dotted keys at the top.
    forms: Vec<u8>,
    comments: bool,
    /// Spaces around `=`, before keys and inside headers.
    pad: usize,
    /// Keys written as quoted strings.
    quoted: bool,
}

fn layout(instances: usize) -> impl Strategy<Value = Layout> {
    (
        Just((0..instances).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(0..3_u8, instances),
        any::<bool>(),
        0..3_usize,
        any::<bool>(),
    )
        .prop_map(|(order, forms, comments, pad, quoted)| Layout {
            order,
            forms,
            comments,
            pad,
            quoted,
        })
}

impl Valid {
    fn write(&self, layout: &Layout) -> String {
        let sp = " ".repeat(layout.pad);
        let k = |name: &str| {
            if layout.quoted {
                format!("\"{name}\"")
            } else {
                name.to_owned()
            }
        };
        let assign = |name: &str, value: &Value| format!("{sp}{}{sp} ={sp} {value}", k(name));
        let comment = |text: &str| {
            if layout.comments {
                format!("  # {text}")
            } else {
                String::new()
            }
        };
        let mut head = String::new();
        if layout.comments {
            head.push_str("# INFRA, laid out by tests/prop_infra.rs\n\n");
        }
        for (key, value) in &self.top {
            let _ = writeln!(head, "{}{}", assign(key, value), comment("top"));
        }
        let mut headers = String::new();
        // Inline instances, under one `[capability]` header each.
        let mut inline: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for &i in &layout.order {
            let instance = &self.instances[i];
            let fields: Vec<(&str, Value)> =
                std::iter::once(("driver", Value::String(instance.driver.to_owned())))
                    .chain(instance.keys.iter().cloned())
                    .collect();
            let path = format!("{}.{}", k(instance.capability), k(&instance.name));
            match layout.forms[i] {
                0 => {
                    let _ = writeln!(headers, "\n[{sp}{path}{sp}]{}", comment(&instance.name));
                    for (key, value) in &fields {
                        let _ = writeln!(headers, "{}{}", assign(key, value), comment(key));
                    }
                }
                1 => {
                    let body: Vec<String> = fields
                        .iter()
                        .map(|(key, value)| format!("{} = {value}", k(key)))
                        .collect();
                    inline.entry(instance.capability).or_default().push(format!(
                        "{} = {{ {} }}",
                        k(&instance.name),
                        body.join(", ")
                    ));
                }
                _ => {
                    for (key, value) in &fields {
                        let _ = writeln!(
                            head,
                            "{path}.{}{}",
                            assign(key, value).trim_start(),
                            comment("dotted")
                        );
                    }
                }
            }
        }
        for (capability, lines) in inline {
            // A capability written with dotted keys cannot be reopened by a header: inline
            // instances of it go in as dotted inline tables at the top.
            let dotted_too = layout
                .order
                .iter()
                .any(|&i| self.instances[i].capability == capability && layout.forms[i] == 2);
            let header_too = layout
                .order
                .iter()
                .any(|&i| self.instances[i].capability == capability && layout.forms[i] == 0);
            if dotted_too || header_too {
                for line in lines {
                    let _ = writeln!(head, "{}.{line}", k(capability));
                }
            } else {
                let _ = writeln!(headers, "\n[{}]\n{}", k(capability), lines.join("\n"));
            }
        }
        head + &headers
    }
}

/// A valid document with a few values replaced by values of any kind (an option of the wrong
/// type or out of range, an unknown option, another driver, production without the accepted
/// risk): what reaches resolution and the drivers' options, not only the reading.
fn nearly_valid() -> impl Strategy<Value = String> {
    (valid(), any::<bool>())
        .prop_flat_map(|(valid, production)| {
            let n = valid.instances.len().max(1);
            let edit = (0..n, name(NAMES), value());
            (
                Just(valid),
                Just(production),
                prop::collection::vec(edit, 1..4),
            )
        })
        .prop_map(|(valid, production, edits)| {
            let mut text = String::new();
            for (key, value) in &valid.top {
                let value = if *key == "environment" && production {
                    Value::String("production".to_owned())
                } else {
                    value.clone()
                };
                let _ = writeln!(text, "{key} = {value}");
            }
            for (i, instance) in valid.instances.iter().enumerate() {
                let mut fields: Vec<(String, String)> =
                    std::iter::once(("driver".to_owned(), format!("\"{}\"", instance.driver)))
                        .chain(
                            instance
                                .keys
                                .iter()
                                .map(|(k, v)| ((*k).to_owned(), v.to_string())),
                        )
                        .collect();
                for (_, k, v) in edits.iter().filter(|(at, _, _)| *at == i) {
                    let k = key(k);
                    fields.retain(|(name, _)| *name != k);
                    fields.push((k, render(v)));
                }
                let _ = writeln!(text, "[{}.{}]", instance.capability, instance.name);
                for (k, v) in fields {
                    let _ = writeln!(text, "{k} = {v}");
                }
            }
            text
        })
}

/// What a configuration says, without where it says it.
fn summary(config: &InfraConfig) -> String {
    let instances: Vec<String> = config
        .instances()
        .map(|i| {
            format!(
                "{} {} {} wait={:?} health={:?} telemetry={}",
                i.qualified_name(),
                i.driver,
                i.options.deserialize::<toml::Table>().unwrap(),
                i.start_wait(config),
                i.health_timeout(config),
                i.telemetry(),
            )
        })
        .collect();
    format!(
        "{} {:?} start={:?} stop={:?} wait={:?} health={:?} interval={:?}\n{}",
        config.environment(),
        config.accepted_risks().collect::<Vec<_>>(),
        config.start_timeout(),
        config.stop_timeout(),
        config.start_wait(),
        config.health_timeout(),
        config.health_interval(),
        instances.join("\n")
    )
}

fn read_valid(text: &str) -> (InfraConfig, StartupReport) {
    let config = InfraConfig::from_toml_str(text, ORIGIN)
        .unwrap_or_else(|err| panic!("{err}\n--- text:\n{text}"));
    assert!(
        config.problems().is_empty(),
        "{:#?}\n--- text:\n{text}",
        config.problems()
    );
    let report = kernel(config.clone())
        .check()
        .unwrap_or_else(|err| panic!("{err}\n--- text:\n{text}"));
    (config, report)
}

/// `descriptions` with every `infra.toml:LINE:COLUMN` cut to `infra.toml`.
fn without_positions(problems: &[Problem]) -> Vec<String> {
    let mut found: Vec<String> = problems
        .iter()
        .map(|p| {
            let text = format!("{} {}", p.code(), p.description());
            let mut out = String::new();
            let mut rest = text.as_str();
            while let Some(at) = rest.find(ORIGIN) {
                out.push_str(&rest[..at + ORIGIN.len()]);
                rest = rest[at + ORIGIN.len()..]
                    .trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
            }
            out.push_str(rest);
            out
        })
        .collect();
    found.sort();
    found
}

// ---------------------------------------------------------------------------------------------
// Overrides.

fn variable() -> impl Strategy<Value = (String, String)> {
    let part = prop_oneof![
        8 => prop::sample::select(&[
            "CACHE", "cache", "DEFAULT", "default", "SESSIONS", "CAPACITY", "DRIVER", "ENVIRONMENT",
            "ACCEPTED_RISKS", "START_TIMEOUT_MS", "STOP_TIMEOUT_MS", "START_WAIT_MS",
            "HEALTH_TIMEOUT_MS", "HEALTH_INTERVAL_MS", "TELEMETRY", "NOTIFIER", "LOCK",
            "OBJECTSTORE", "TASKQUEUE", "ROOT", "LEVEL", "MAX_ATTEMPTS", "", "É", "X Y",
        ][..]).prop_map(str::to_owned),
        1 => "\\PC{0,6}",
    ];
    let name = prop_oneof![
        9 => prop::collection::vec(part, 0..5).prop_map(|parts| format!("SANDLOOM__{}", parts.join("__"))),
        1 => "[A-Z_]{0,12}",
    ];
    let value = prop_oneof![
        6 => prop::sample::select(&[
            "1", "0", "-1", "500", "18446744073709551616", "true", "[1, 2]", "{a = 1}", "memory",
            "log", "fs", "", "nan", "1979-05-27", "experimental_capability", "experimental_capability, yolo",
            "production", "test", "\"quoted\"", "'lit'", "[\"experimental_capability\"]",
        ][..]).prop_map(str::to_owned),
        1 => any::<String>(),
    ];
    (name, value)
}

// ---------------------------------------------------------------------------------------------
// The properties.

proptest! {
    #![proptest_config(config(256))]

    /// Any text at all: not TOML is one located problem; TOML is read and checked.
    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![
        any::<String>(),
        "([\\[\\]=\"'.{},#\n a-z0-9_]|\\PC){0,120}",
    ]) {
        read_and_check(&text, &[]);
    }

    /// Documents of the right shape with wrong parts: every problem coded and located.
    #[test]
    fn structured_wrong_documents_never_panic(text in prop_oneof![document(), nearly_valid()]) {
        read_and_check(&text, &[]);
    }

    /// A valid document with bytes changed: never a panic, every problem coded and located.
    #[test]
    fn a_mutated_valid_document_never_panics(
        (text, cuts) in valid().prop_flat_map(|v| {
            let text = v.write(&Layout { order: (0..v.instances.len()).collect(), forms: vec![0; v.instances.len()], comments: true, pad: 1, quoted: false });
            let len = text.len();
            (Just(text), prop::collection::vec((0..=len, "\\PC{0,3}|[\\[\\]=\"\n#0-9]"), 1..4))
        })
    ) {
        let mut text = text;
        for (at, insert) in cuts {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let end = (at + insert.len() % 3).min(text.len());
            let end = (end..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap();
            text.replace_range(at..end, &insert);
        }
        read_and_check(&text, &[]);
    }

    /// Overrides of every shape over the embedded defaults and over generated documents.
    #[test]
    fn arbitrary_overrides_never_panic(
        base in prop_oneof![
            Just(sandloom::config::EMBEDDED_DEFAULTS.to_owned()),
            document(),
        ],
        variables in prop::collection::vec(variable(), 0..6),
    ) {
        read_and_check(&base, &variables);
        // The order the variables come in changes nothing.
        if let Ok(config) = InfraConfig::from_toml_str(&base, ORIGIN) {
            let forward = config.clone().with_overrides(variables.iter().cloned()).unwrap();
            let backward = config.with_overrides(variables.iter().rev().cloned()).unwrap();
            // Compared as written out: a `nan` option is not equal to itself.
            prop_assert_eq!(format!("{forward:?}"), format!("{backward:?}"));
            prop_assert_eq!(summary(&forward), summary(&backward));
        }
    }

    /// A valid document stays valid, with the same configuration and report, whatever its
    /// layout: written by hand in every form, or re-serialized by `toml`.
    #[test]
    fn a_valid_document_is_valid_in_every_layout(
        (valid, layouts) in valid().prop_flat_map(|v| {
            let n = v.instances.len();
            (Just(v), prop::collection::vec(layout(n), 3))
        })
    ) {
        let table = valid.table();
        let canonical = toml::to_string(&table).unwrap();
        let (config, report) = read_valid(&canonical);
        let expected = summary(&config);
        for instance in config.instances() {
            // `driver` is located on the line that sets it.
            let Location::Source { line, .. } = &instance.driver_location else {
                panic!("{instance:?}")
            };
            prop_assert!(canonical.lines().nth(line - 1).unwrap().contains("driver"));
        }
        prop_assert_eq!(config.instances().count(), valid.instances.len());
        let mut texts = vec![toml::to_string_pretty(&table).unwrap()];
        texts.extend(layouts.iter().map(|layout| valid.write(layout)));
        for text in texts {
            let (again, again_report) = read_valid(&text);
            prop_assert_eq!(&summary(&again), &expected, "{}", text);
            prop_assert_eq!(&again_report, &report, "{}", text);
        }
    }

    /// A document's problems do not depend on the order of its tables (headers only, so that
    /// each order is the same TOML).
    #[test]
    fn problems_do_not_depend_on_the_order_of_tables(
        tables in prop::collection::vec(table(), 0..6).prop_map(|tables| {
            tables.into_iter().map(|mut t| { t.form = Form::Header; t }).collect::<Vec<_>>()
        }).prop_flat_map(|tables| (Just(tables.clone()), Just(tables).prop_shuffle())),
    ) {
        let write = |tables: &[Table]| {
            let mut text = String::new();
            for table in tables {
                let path: Vec<String> = table.path.iter().map(|p| key(p)).collect();
                let _ = writeln!(text, "[{}]", path.join("."));
                for (k, v) in &table.entries {
                    let _ = writeln!(text, "{} = {}", key(k), render(v));
                }
            }
            text
        };
        let (first, second) = (write(&tables.0), write(&tables.1));
        match (read_and_check(&first, &[]), read_and_check(&second, &[])) {
            (Some(Ok(a)), Some(Ok(b))) => prop_assert_eq!(a, b),
            (Some(Err(a)), Some(Err(b))) => {
                prop_assert_eq!(without_positions(&a), without_positions(&b), "{}\n---\n{}", first, second);
            }
            (Some(a), Some(b)) => prop_assert!(false, "{a:?}\n{b:?}\n{first}\n---\n{second}"),
            // Duplicate tables are not TOML in either order.
            (None, None) => {}
            (a, b) => prop_assert!(false, "TOML in one order only: {a:?} {b:?}\n{first}\n---\n{second}"),
        }
    }
}

/// Valid overrides keep a valid configuration valid, and set what they say.
#[test]
fn valid_overrides_keep_a_valid_configuration_valid() {
    let mut runner = proptest::test_runner::TestRunner::new(config(64));
    runner
        .run(&(valid(), 1..1_000_000_i64), |(valid, capacity)| {
            let text = toml::to_string(&valid.table()).unwrap();
            let (config, _) = read_valid(&text);
            let mut variables = vec![("SANDLOOM__ENVIRONMENT".to_owned(), "test".to_owned())];
            // Every valid instance name can be named by a variable: the name rule refuses a
            // trailing `_` and `__`, which `__` (the separator of levels) would split.
            for instance in valid.instances.iter().filter(|i| i.capability == "cache") {
                variables.push((
                    format!(
                        "SANDLOOM__CACHE__{}__CAPACITY",
                        instance.name.to_ascii_uppercase()
                    ),
                    capacity.to_string(),
                ));
            }
            let config = config.with_overrides(variables).unwrap();
            prop_assert!(config.problems().is_empty(), "{:#?}", config.problems());
            for instance in config.instances().filter(|i| i.capability == "cache") {
                let options = instance.options.deserialize::<toml::Table>().unwrap();
                prop_assert_eq!(options.get("capacity"), Some(&Value::Integer(capacity)));
            }
            let check = kernel(config).check();
            prop_assert!(check.is_ok(), "{:?}", check);
            Ok(())
        })
        .unwrap();
}

/// The committed inputs of the fuzz targets (`fuzz/corpus`, `fuzz/regressions`), replayed on
/// stable in every `cargo test`: a crash the fuzzer found and was fixed stays fixed here too.
#[test]
fn the_fuzz_corpus_and_regressions_replay() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let inputs = |target: &str| {
        let mut files = Vec::new();
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
                continue;
            };
            files.extend(entries.map(|entry| entry.unwrap().path()));
        }
        files.sort();
        files
    };
    let parse = inputs("infra_parse");
    assert!(parse.len() >= 10, "{parse:?}");
    for path in parse {
        if let Ok(text) = std::fs::read_to_string(&path) {
            read_and_check(&text, &[]);
        }
    }
    let overrides = inputs("infra_overrides");
    assert!(!overrides.is_empty());
    for path in overrides {
        let Ok(input) = std::fs::read_to_string(&path) else {
            continue;
        };
        // The input format of fuzz/fuzz_targets/infra_overrides.rs.
        let (file, vars) = input
            .split_once("\n---\n")
            .unwrap_or((sandloom::config::EMBEDDED_DEFAULTS, &input));
        let variables: Vec<(String, String)> = vars
            .lines()
            .map(|line| {
                let (name, value) = line.split_once('=').unwrap_or((line, ""));
                let name = if name.starts_with("SANDLOOM__") {
                    name.to_owned()
                } else {
                    format!("SANDLOOM__{name}")
                };
                (name, value.to_owned())
            })
            .collect();
        read_and_check(file, &variables);
    }
}
