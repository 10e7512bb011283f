//! `infra schema`, read by a JSON Schema validator as an editor would: every `examples/infra*.toml`
//! validates against it, and a broken file (a wrong type, an unknown key) does not. Links every
//! driver the quickstart links, so the backend examples' drivers are known.

use sandloom::cli::{Status, execute};
use serde_json::Value;

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_example_driver_console,
        sandloom_driver_redis,
        sandloom_driver_postgres,
        sandloom_driver_amqp,
        sandloom_driver_s3,
        sandloom_driver_webhook,
        sandloom_driver_smtp,
        sandloom_driver_vault
    )
}

fn schema(format: &str) -> Value {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = execute(
        linked(),
        ["app", "infra", "schema", "--format", format],
        &mut out,
        &mut err,
    );
    assert_eq!(status, Status::Ok, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).expect("the schema is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&schema("text")).expect("`infra schema` is a valid JSON Schema")
}

/// The errors of `text` (TOML) against the schema, as `path: message`.
fn errors(text: &str) -> Vec<String> {
    let infra: Value = toml::from_str(text).expect("TOML");
    validator()
        .iter_errors(&infra)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

#[test]
fn every_example_infra_file_validates() {
    let mut checked = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples")).unwrap()
    {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        if !(name.starts_with("infra") && toml) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(errors(&text), Vec::<String>::new(), "{name}");
        checked += 1;
    }
    assert!(checked >= 2, "examples/infra*.toml: {checked} files");
}

#[test]
fn a_wrong_type_or_an_unknown_key_fails() {
    let wrong_type = errors("[cache.default]\ndriver = \"memory\"\ncapacity = \"lots\"\n");
    assert!(
        wrong_type
            .iter()
            .any(|e| e.starts_with("/cache/default/capacity")),
        "{wrong_type:?}"
    );
    let unknown_option = errors("[cache.default]\ndriver = \"memory\"\ncapacty = 10\n");
    assert!(
        !unknown_option.is_empty(),
        "an unknown option of cache.memory passed"
    );
    let unknown_top = errors("enviroment = \"production\"\n");
    assert!(!unknown_top.is_empty(), "an unknown top-level key passed");
    let bad_level = errors("[notifier.default]\ndriver = \"log\"\nlevel = \"loud\"\n");
    assert!(!bad_level.is_empty(), "an unknown log level passed");
    let unknown_driver = errors("[cache.default]\ndriver = \"memcached\"\n");
    assert!(
        !unknown_driver.is_empty(),
        "a driver that is not linked passed"
    );
    let no_driver = errors("[cache.default]\ncapacity = 10\n");
    assert!(!no_driver.is_empty(), "an instance without `driver` passed");
    let required = errors("[objectstore.default]\ndriver = \"fs\"\n");
    assert!(!required.is_empty(), "objectstore.fs without `root` passed");
    // The kernel's own keys are accepted in every instance, with their types.
    assert_eq!(
        errors("[cache.default]\ndriver = \"memory\"\ntelemetry = false\nstart_wait_ms = 0\n"),
        Vec::<String>::new()
    );
    assert!(!errors("[cache.default]\ndriver = \"memory\"\ntelemetry = \"no\"\n").is_empty());
}

#[test]
fn a_driver_without_a_schema_is_listed_as_unknown_and_accepts_any_option() {
    let schema = schema("text");
    // The example console driver's options do not derive `JsonSchema`.
    let console = &schema["$defs"]["notifier.console"];
    assert!(
        console["description"]
            .as_str()
            .unwrap()
            .starts_with("schema unknown"),
        "{console:#}"
    );
    assert_eq!(
        errors("[notifier.default]\ndriver = \"console\"\nanything = 1\n"),
        Vec::<String>::new()
    );
    // Every backend driver's options describe themselves, closed to unknown keys.
    for driver in [
        "cache.redis",
        "taskqueue.postgres",
        "taskqueue.amqp",
        "objectstore.s3",
        "notifier.webhook",
        "notifier.smtp",
        "secrets.vault",
    ] {
        assert_eq!(
            schema["$defs"][driver]["additionalProperties"], false,
            "{driver}"
        );
    }
    assert!(!errors("[cache.default]\ndriver = \"redis\"\nanything = 1\n").is_empty());
    let memory = &schema["$defs"]["cache.memory"];
    assert_eq!(memory["additionalProperties"], false);
    assert_eq!(memory["properties"]["capacity"]["type"], "integer");
    assert_eq!(memory["properties"]["capacity"]["default"], 10_000);
    assert!(memory["properties"]["capacity"]["description"].is_string());
}

#[test]
fn the_json_format_wraps_the_schema_in_the_versioned_envelope() {
    let document = schema("json");
    assert_eq!(document["format_version"], 1);
    assert_eq!(document["command"], "schema");
    assert_eq!(document["schema"], schema("text"));
    assert_eq!(
        document["schema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
}
