//! `sandloom::cli` on the built-in drivers and the example third-party one: every subcommand in
//! text (snapshots) and JSON (checked field by field), and bad input (exit 2, never a panic).

use std::path::Path;

use sandloom::cli::{Status, execute};
use sandloom::sdk::{CACHE, cache, requires};
use serde_json::Value;

// A module of this test binary: `why cache.sessions` is an instance it requires and no INFRA
// below configures.
requires!(CACHE, "sessions", features = [cache::TTL]);

fn linked() -> sandloom::LinkedDrivers {
    // `fulltext.memory` serves an experimental capability (SANDLOOM-B023 below).
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_example_driver_console,
        sandloom_example_fulltext_memory
    )
}

/// `app infra ARGS…`: the status, standard output and standard error.
fn infra(args: &[&str]) -> (Status, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let command_line = ["app", "infra"].iter().chain(args).copied();
    let status = execute(linked(), command_line, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).expect("UTF-8 output"),
        String::from_utf8(err).expect("UTF-8 errors"),
    )
}

/// `infra ARGS… --format json`, parsed; asserts the envelope.
fn infra_json(args: &[&str], command: &str) -> (Status, Value) {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    let (status, out, err) = infra(&args);
    let header = format!("{{\n  \"format_version\": 1,\n  \"command\": \"{command}\",\n");
    assert!(
        out.starts_with(&header),
        "the version is not at the top:\n{out}"
    );
    let document: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}\n{err}"));
    assert_eq!(document["format_version"], 1, "{document:#}");
    assert_eq!(document["command"], command, "{document:#}");
    (status, document)
}

/// The workspace's `examples/`, from this package's directory, where `cargo test` runs its tests.
const EXAMPLES: &str = "../../examples";
/// The quickstart's `examples/infra.toml`, named as a user at the root names it, less `../../`.
const EXAMPLE_INFRA: &str = "../../examples/infra.toml";

/// An INFRA file in a scratch directory, and its path with `/` separators.
fn infra_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const SEVERAL_PROBLEMS: &str = r#"environment = "production"
start_timeout_ms = "soon"

[cache.default]
driver = "memory"
capacty = 10

[fulltext.default]
driver = "memory"

[notifier.default]
driver = "smtp"

[taskqueue.default]
driver = "memory"
max_attempts = "five"
"#;

#[test]
fn check_on_a_good_file_prints_what_would_start_and_exits_0() {
    let (status, out, err) = infra(&["check", "--infra", EXAMPLE_INFRA]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    insta::assert_snapshot!("check_ok", out);

    let (status, json) = infra_json(&["check", "--infra", EXAMPLE_INFRA], "check");
    assert_eq!(status, Status::Ok);
    assert_eq!(json["ok"], true);
    assert_eq!(json["origin"], EXAMPLE_INFRA);
    assert_eq!(json["environment"], "development");
    assert_eq!(json["problems"], Value::Array(Vec::new()));
    let instances = json["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 8);
    let console = instances
        .iter()
        .find(|i| i["capability"] == "notifier" && i["instance"] == "default")
        .unwrap();
    assert_eq!(console["driver"], "console");
    assert_eq!(console["package"], "sandloom-example-driver-console");
    assert_eq!(console["contract_version"], "1.0.0");
    assert_eq!(console["stability"], "stable");
}

#[test]
fn check_lists_every_problem_with_its_code_and_location() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, SEVERAL_PROBLEMS);
    let (status, json) = infra_json(&["check", "--infra", &path], "check");
    assert_eq!(status, Status::Problems);
    assert_eq!(json["ok"], false);
    let found: Vec<(String, Option<u64>)> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
            assert!(p["action"].as_str().is_some_and(|a| !a.is_empty()));
            if let Some(file) = p["location"]["file"].as_str() {
                assert_eq!(file, path);
            }
            (
                p["code"].as_str().unwrap().to_owned(),
                p["location"]["line"].as_u64(),
            )
        })
        .collect();
    let expected = [
        ("SANDLOOM-B010", Some(2)),  // start_timeout_ms = "soon"
        ("SANDLOOM-B022", Some(6)),  // capacty: unknown option of cache.memory
        ("SANDLOOM-B023", Some(8)),  // fulltext (experimental) in production
        ("SANDLOOM-B020", Some(12)), // sandloom-driver-smtp is not linked
        ("SANDLOOM-B022", Some(16)), // max_attempts = "five"
        ("SANDLOOM-B020", None),     // cache.sessions, which this binary requires
    ];
    let expected: Vec<(String, Option<u64>)> = expected
        .iter()
        .map(|(code, line)| ((*code).to_owned(), *line))
        .collect();
    assert_eq!(found, expected, "{json:#}");

    let (status, out, _) = infra(&["check", "--infra", &path]);
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("check_problems", out.replace(&path, "INFRA"));
}

#[test]
fn check_reports_every_bad_option_of_a_table_each_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(
        &dir,
        "[cache.default]\ndriver = \"memory\"\ncapacity = \"x\"\nnamspace = \"app\"\n  default_ttl_ms = -1\ndefault_tll_ms = 5\n",
    );
    let (status, json) = infra_json(&["check", "--infra", &path], "check");
    assert_eq!(status, Status::Problems);
    // `cache.sessions`, which this binary requires, is a B020 with no location: left out.
    let located: Vec<&Value> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["location"]["file"] == path.as_str())
        .collect();
    let found: Vec<(&str, u64, u64)> = located
        .iter()
        .map(|p| {
            (
                p["code"].as_str().unwrap(),
                p["location"]["line"].as_u64().unwrap(),
                p["location"]["column"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let b022 = "SANDLOOM-B022";
    assert_eq!(
        found,
        [(b022, 3, 1), (b022, 4, 1), (b022, 5, 3), (b022, 6, 1)],
        "{json:#}"
    );
    let descriptions: Vec<&str> = located
        .iter()
        .map(|p| p["description"].as_str().unwrap())
        .collect();
    assert!(descriptions[0].contains("`capacity`"), "{descriptions:?}");
    assert!(
        descriptions[1].contains("unknown field `namspace`"),
        "{descriptions:?}"
    );
    assert!(
        descriptions[2].contains("`default_ttl_ms`"),
        "{descriptions:?}"
    );
    // A misspelt key keeps its suggestion.
    assert!(
        descriptions[3].contains("did you mean `default_ttl_ms`"),
        "{descriptions:?}"
    );
    // Values may be secrets: none is echoed.
    assert!(!json.to_string().contains("app"), "{json:#}");
}

#[test]
fn check_reads_a_file_that_is_not_toml_as_a_problem_of_infra() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default\ndriver = 1\n");
    let (status, json) = infra_json(&["check", "--infra", &path], "check");
    assert_eq!(status, Status::Problems);
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B010");
    assert_eq!(json["problems"][0]["location"]["line"], 1);
}

#[test]
fn drivers_lists_every_linked_driver_with_features_and_options() {
    let (status, out, _) = infra(&["drivers"]);
    assert_eq!(status, Status::Ok);
    insta::assert_snapshot!("drivers", out);

    let (_, json) = infra_json(&["drivers"], "drivers");
    let drivers = json["drivers"].as_array().unwrap();
    let names: Vec<String> = drivers
        .iter()
        .map(|d| {
            format!(
                "{}.{}",
                d["capability"].as_str().unwrap(),
                d["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "cache.memory",
            "fulltext.memory",
            "lock.memory",
            "notifier.console",
            "notifier.log",
            "notifier.memory",
            "objectstore.fs",
            "objectstore.memory",
            "secrets.env",
            "secrets.file",
            "secrets.memory",
            "taskqueue.memory"
        ]
    );
    let memory = &drivers[0];
    assert_eq!(memory["package"], "sandloom-embedded");
    assert_eq!(memory["contract_version"], "1.0.0");
    assert_eq!(memory["stability"], "stable");
    assert_eq!(
        memory["features"]["supported"],
        serde_json::json!(["ttl", "increment", "bulk"])
    );
    assert_eq!(memory["options_schema"], "known");
    let capacity = memory["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "capacity")
        .unwrap();
    assert_eq!(capacity["type"], "integer (uint64)");
    assert_eq!(capacity["default"], 10_000);
    assert_eq!(capacity["required"], false);
    assert!(capacity["doc"].as_str().unwrap().contains("entries"));

    assert_eq!(drivers[1]["stability"], "experimental");
    assert_eq!(drivers[2]["stability"], "stable"); // lock.memory
    let console = &drivers[3];
    assert_eq!(console["options_schema"], "unknown");
    assert_eq!(console["options"], Value::Null);
    let fs = &drivers[6];
    let root = &fs["options"][0];
    assert_eq!(
        (&root["name"], &root["required"]),
        (&"root".into(), &true.into())
    );
    // `root` has no default: with no option set, the features are unknown.
    assert_eq!(fs["features"]["with_no_options"], Value::Null);
}

#[test]
fn explain_prints_the_long_explanation_of_a_code_written_any_way() {
    let (status, out, _) = infra(&["explain", "SANDLOOM-B020"]);
    assert_eq!(status, Status::Ok);
    insta::assert_snapshot!("explain_b020", out);
    for written in ["B020", "b020", "sandloom-b020", "Sandloom-B020"] {
        assert_eq!(infra(&["explain", written]).1, out, "{written}");
    }
    let (status, json) = infra_json(&["explain", "b023"], "explain");
    assert_eq!(status, Status::Ok);
    assert_eq!(json["code"], "SANDLOOM-B023");
    assert_eq!(
        json["explanation"],
        sandloom::codes::explain("SANDLOOM-B023").unwrap()
    );
}

/// The codes of the error table of the book's error-code page.
fn book_codes() -> Vec<String> {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/reference/codes/index.md"
    ))
    .unwrap();
    page.lines()
        .filter_map(|line| line.strip_prefix("| SANDLOOM-"))
        .map(|rest| format!("SANDLOOM-{}", rest.split_whitespace().next().unwrap()))
        .collect()
}

#[test]
fn every_code_of_the_book_has_an_explanation_and_every_code_is_in_the_book() {
    let listed = book_codes();
    assert_eq!(
        listed,
        sandloom::codes::ALL,
        "the error table of docs/src/reference/codes/index.md and codes::ALL differ"
    );
    for code in &listed {
        let (status, out, err) = infra(&["explain", code]);
        assert_eq!(status, Status::Ok, "{code}: {err}");
        for part in ["## When it happens", "## Example", "## How to fix it"] {
            assert!(out.contains(part), "{code} lacks {part}");
        }
    }
}

#[test]
fn why_explains_the_selected_driver_and_the_others() {
    let (status, out, _) = infra(&["why", "notifier.default", "--infra", EXAMPLE_INFRA]);
    assert_eq!(status, Status::Ok, "{out}");
    insta::assert_snapshot!("why_selected", out);

    let (status, json) = infra_json(
        &["why", "notifier.default", "--infra", EXAMPLE_INFRA],
        "why",
    );
    assert_eq!(status, Status::Ok);
    assert_eq!(json["capability"], "notifier");
    assert_eq!(json["instance"], "default");
    assert_eq!(json["configured"], "console");
    assert_eq!(json["selected"], "console");
    // At `driver = "console"`, as the text says and SANDLOOM-B020 would: not the table header.
    assert_eq!(json["location"]["line"], 16);
    assert_eq!(json["location"]["column"], 1);
    let candidates = json["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 3);
    let log = candidates.iter().find(|c| c["driver"] == "log").unwrap();
    assert_eq!(log["selected"], false);
    assert_eq!(log["reasons"][0]["kind"], "other_name");
    assert_eq!(log["reasons"][0]["selected"], "console");
    assert_eq!(log["reasons"][0]["code"], Value::Null);
}

#[test]
fn why_on_an_unconfigured_required_instance_names_the_drivers_that_would_satisfy_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\n");
    let (status, out, _) = infra(&["why", "cache.sessions", "--infra", &path]);
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("why_unconfigured", out);

    let (_, json) = infra_json(&["why", "cache.sessions", "--infra", &path], "why");
    assert_eq!(json["configured"], Value::Null);
    assert_eq!(
        json["required_by"][0]["module"],
        "sandloom-integration-tests"
    );
    assert_eq!(
        json["required_by"][0]["features"],
        serde_json::json!(["ttl"])
    );
    assert_eq!(json["satisfying"], serde_json::json!(["memory"]));
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B020");
}

#[test]
fn health_starts_checks_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(
        &dir,
        "[cache.default]\ndriver = \"memory\"\n[objectstore.default]\ndriver = \"memory\"\n[cache.sessions]\ndriver = \"memory\"\n",
    );
    let (status, out, err) = infra(&["health", "--infra", &path]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    insta::assert_snapshot!("health_ready", out);

    let (status, json) = infra_json(&["health", "--infra", &path], "health");
    assert_eq!(status, Status::Ok);
    assert_eq!(json["started"], true);
    assert_eq!(json["readiness"], "ready");
    assert_eq!(json["ready"], true);
    let instances = json["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 3);
    assert_eq!(instances[0]["state"], "healthy");
    assert_eq!(instances[0]["reason"], Value::Null);
    assert_eq!(json["problems"], Value::Array(Vec::new()));
}

#[test]
fn health_that_cannot_start_exits_1_with_the_problems() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\ncapacity = 0\n");
    let (status, json) = infra_json(&["health", "--infra", &path], "health");
    assert_eq!(status, Status::Problems);
    assert_eq!(json["started"], false);
    assert_eq!(json["ready"], false);
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B022");
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 7] = [
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (
            &["check", "--format", "yaml"],
            "invalid value 'yaml' for '--format",
        ),
        (
            &["explain", "B999"],
            "unknown code `B999`: the codes are SANDLOOM-B001",
        ),
        (&["why", "cache"], "`cache` is not `CAPABILITY.INSTANCE`"),
        (&["why", "cahce.default"], "unknown capability `cahce`"),
        (
            &["check", "--infra", "no/such/infra.toml"],
            "cannot open the INFRA file `no/such/infra.toml` (named by --infra)",
        ),
        (&["health", "--infra", EXAMPLES], "is a directory"),
    ];
    for (args, message) in cases {
        let (status, out, err) = infra(args);
        assert_eq!(status, Status::BadInput, "{args:?}: {out}{err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(Path::new(EXAMPLES).is_dir());
}

#[test]
fn help_is_an_answer_not_an_error() {
    let (status, out, _) = infra(&["--help"]);
    assert_eq!(status, Status::Ok);
    for subcommand in ["check", "drivers", "explain", "schema", "why", "health"] {
        assert!(out.contains(subcommand), "{out}");
    }
}

#[test]
fn check_json_places_each_problem_at_the_token_it_is_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(
        &dir,
        "environment = \"production\"\n\
         [Cache.default]\n\
         driver = \"memory\"\n\
         [notifier.default]\n\
         driver = \"memory\"\n\
         capacity = 0\n\
         [cache.default]\n\
         driver = \"memory\"\n\
         capacity = 0\n\
         default_ttl_ms = 0\n\
         [cache.sessions]\n\
         driver = \"memory\"\n",
    );
    let (status, json) = infra_json(&["check", "--infra", &path], "check");
    assert_eq!(status, Status::Problems);
    let placed: Vec<(String, i64, i64, String)> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["code"].as_str().unwrap().to_owned(),
                p["location"]["line"].as_i64().unwrap_or(-1),
                p["location"]["column"].as_i64().unwrap_or(-1),
                p["description"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let at = |line: usize| format!("{path}:{line}:1");
    assert_eq!(
        placed,
        [
            (
                "SANDLOOM-B010".to_owned(),
                2,
                2,
                format!("unknown capability `Cache` (did you mean `cache`?) (at {path}:2:2)")
            ),
            (
                "SANDLOOM-B022".to_owned(),
                6,
                1,
                format!(
                    "driver `notifier.memory` (package `sandloom-embedded`) for `notifier.default` cannot be used: invalid options at {}: option `capacity`: must be at least 1",
                    at(6)
                )
            ),
            (
                "SANDLOOM-B022".to_owned(),
                9,
                1,
                format!(
                    "driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at {}: option `capacity`: must be at least 1",
                    at(9)
                )
            ),
            (
                "SANDLOOM-B022".to_owned(),
                10,
                1,
                format!(
                    "driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at {}: option `default_ttl_ms`: must be at least 1",
                    at(10)
                )
            ),
        ]
    );
}
