//! `infra diff OLD NEW`: what a reload would do, in text (snapshots) and JSON (field by field);
//! both files checked first (exit 1 with their problems); bad input (exit 2).

use sandloom::cli::{Status, execute};
use serde_json::Value;

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_embedded, sandloom_example_driver_console)
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

/// `infra diff OLD NEW --format json`, parsed.
fn diff_json(old: &str, new: &str) -> (Status, Value) {
    let (status, out, err) = infra(&["diff", old, new, "--format", "json"]);
    assert!(
        out.starts_with("{\n  \"format_version\": 1,\n  \"command\": \"diff\",\n"),
        "{out}{err}"
    );
    (status, serde_json::from_str(&out).unwrap())
}

/// Two INFRA files in a scratch directory: their paths, and the directory (kept alive).
fn files(old: &str, new: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (old, new) = (write("old.toml", old), write("new.toml", new));
    (dir, old, new)
}

const OLD: &str = r#"stop_timeout_ms = 10000

[cache.default]
driver = "memory"
capacity = 10000

[cache.sessions]
driver = "memory"
capacity = 1000

[notifier.audit]
driver = "log"

[notifier.default]
driver = "console"
prefix = "hunter2-old"

[lock.default]
driver = "memory"

[taskqueue.default]
driver = "memory"
"#;

// cache.default moved and commented (kept); cache.sessions gets another option and a kernel key;
// notifier.audit another driver; the console's prefix changes (a value never shown);
// lock.default goes, lock.jobs comes; the stop timeout changes.
const NEW: &str = r#"stop_timeout_ms = 5000

[taskqueue.default]
driver = "memory"

[cache.sessions]
driver = "memory"
capacity = 1000
default_ttl_ms = 60000
health_timeout_ms = 500

# moved, same values
[cache.default]
capacity = 10000
driver = "memory"

[notifier.default]
driver = "console"
prefix = "hunter2-new"

[notifier.audit]
driver = "memory"

[lock.jobs]
driver = "memory"
"#;

#[test]
fn diff_prints_kept_replaced_with_reasons_added_and_removed() {
    let (_dir, old, new) = files(OLD, NEW);
    let (status, out, err) = infra(&["diff", &old, &new]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    assert!(err.is_empty(), "{err}");
    insta::assert_snapshot!(
        "diff_changes",
        out.replace(&old, "OLD.toml").replace(&new, "NEW.toml")
    );
    // An option's value is never shown, not even a changed one.
    assert!(!out.contains("hunter2"), "{out}");

    let (status, json) = diff_json(&old, &new);
    assert_eq!(status, Status::Ok);
    assert!(!json.to_string().contains("hunter2"), "{json:#}");
    assert_eq!(json["ok"], true);
    assert_eq!(json["changed"], true);
    assert_eq!(json["old"]["origin"], old);
    assert_eq!(json["new"]["ok"], true);
    assert_eq!(json["new"]["problems"], Value::Array(Vec::new()));
    let found: Vec<(String, String)> = json["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                format!(
                    "{}.{}",
                    i["capability"].as_str().unwrap(),
                    i["instance"].as_str().unwrap()
                ),
                i["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("cache.default", "kept"),
        ("cache.sessions", "replaced"),
        ("lock.default", "removed"),
        ("lock.jobs", "added"),
        ("notifier.audit", "replaced"),
        ("notifier.default", "replaced"),
        ("taskqueue.default", "kept"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(name, change)| ((*name).to_owned(), (*change).to_owned()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        json["instances"][1]["reasons"],
        serde_json::json!([
            "option `default_ttl_ms` added",
            "health_timeout_ms 2000 → 500"
        ])
    );
    assert_eq!(
        json["instances"][5]["reasons"],
        serde_json::json!(["option `prefix` changed"])
    );
    assert_eq!(
        json["instances"][4]["reasons"],
        serde_json::json!(["driver `log` → `memory`"])
    );
    assert_eq!(json["instances"][0]["reasons"], serde_json::json!([]));
    assert_eq!(
        json["settings"],
        serde_json::json!(["stop_timeout_ms 10000 → 5000"])
    );
}

#[test]
fn diff_of_a_file_with_itself_is_no_change_and_exits_0() {
    let (_dir, old, _) = files(OLD, NEW);
    let (status, out, _) = infra(&["diff", &old, &old]);
    assert_eq!(status, Status::Ok, "{out}");
    assert_eq!(
        out.replace(&old, "OLD.toml"),
        "Sandloom diff (a dry run; nothing was started): OLD `OLD.toml`, NEW `OLD.toml`.\n\
         No change: a reload would keep every instance (6).\n\
         \n\
         \x20 kept      cache.default\n\
         \x20 kept      cache.sessions\n\
         \x20 kept      lock.default\n\
         \x20 kept      notifier.audit\n\
         \x20 kept      notifier.default\n\
         \x20 kept      taskqueue.default\n"
    );
    let (status, json) = diff_json(&old, &old);
    assert_eq!(status, Status::Ok);
    assert_eq!(json["changed"], false);
    assert_eq!(json["settings"], serde_json::json!([]));
}

#[test]
fn diff_checks_both_files_and_prints_their_coded_problems_instead_of_a_plan() {
    let bad = "[cache.default]\ndriver = \"memory\"\ncapacty = 10\n";
    let (_dir, old, new) = files(OLD, bad);
    let (status, out, _) = infra(&["diff", &old, &new]);
    assert_eq!(status, Status::Problems, "{out}");
    let out = out.replace(&new, "NEW.toml");
    assert!(
        out.starts_with(
            "NEW `NEW.toml`:\nSandloom check (a dry run; nothing was started): 1 problem found."
        ),
        "{out}"
    );
    assert!(out.contains("SANDLOOM-B022"), "{out}");
    assert!(out.contains("NEW.toml:3:1"), "{out}");
    assert!(!out.contains("OLD `"), "OLD has no problem: {out}");
    assert!(
        !out.contains("replaced"),
        "no plan for a refused reload: {out}"
    );

    let (status, json) = diff_json(&old, &new);
    assert_eq!(status, Status::Problems);
    assert_eq!(json["ok"], false);
    assert_eq!(json["changed"], Value::Null);
    assert_eq!(json["old"]["ok"], true);
    assert_eq!(json["new"]["ok"], false);
    let problem = &json["new"]["problems"][0];
    assert_eq!(problem["code"], "SANDLOOM-B022");
    assert_eq!(problem["location"]["line"], 3);
    assert_eq!(json["instances"], serde_json::json!([]));

    // Not TOML at all, on the OLD side: a problem of INFRA too, exit 1.
    let (_dir, old, new) = files("[cache", NEW);
    let (status, out, _) = infra(&["diff", &old, &new]);
    assert_eq!(status, Status::Problems, "{out}");
    assert!(out.starts_with("OLD `"), "{out}");
    assert!(out.contains("SANDLOOM-B010"), "{out}");
}

#[test]
fn diff_with_a_missing_file_or_infra_flag_is_bad_input() {
    let (_dir, old, _) = files(OLD, NEW);
    let (status, out, err) = infra(&["diff", &old, "no/such/new.toml"]);
    assert_eq!(status, Status::BadInput, "{out}");
    assert!(
        err.starts_with(
            "error: cannot open the INFRA file `no/such/new.toml` (named by `infra diff`'s NEW):"
        ),
        "{err}"
    );
    let (status, _, err) = infra(&["diff", &old, &old, "--infra", &old]);
    assert_eq!(status, Status::BadInput);
    assert_eq!(
        err,
        "error: `infra diff` compares the two files it is given: drop `--infra`\n"
    );
    let (status, _, err) = infra(&["diff", &old]);
    assert_eq!(status, Status::BadInput);
    assert!(err.contains("<NEW>"), "{err}");
}
