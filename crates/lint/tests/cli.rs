//! The built binary: output formats and exit statuses 0, 1 and 2.

mod common;

use std::process::{Command, Output};

use common::manifest;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sandloom-lint"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn violations_exit_1_with_code_location_and_help() {
    let path = manifest("c004-renamed");
    let output = run(&["--manifest-path", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("error[C004]: module `orders` depends on `sandloom-driverkit`"),
        "{text}"
    );
    assert!(
        text.contains(
            "--> orders/Cargo.toml:12:1  [dependencies] dk (package \"sandloom-driverkit\")"
        ),
        "{text}"
    );
    assert!(text.contains("--> orders/src/lib.rs:3:5"), "{text}");
    assert!(text.contains("= help: "), "{text}");
    assert!(text.contains("2 violation(s) (C004: 2)"), "{text}");
}

#[test]
fn json_lists_the_same_fields_for_tooling() {
    let path = manifest("options-violating");
    let output = run(&[
        "--format",
        "json",
        "--manifest-path",
        path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(json["summary"]["violations"], 3);
    assert_eq!(json["summary"]["by_code"]["O001"], 3);
    let first = &json["violations"][0];
    assert_eq!(first["code"], "O001");
    assert_eq!(first["crate"], "pgcache");
    assert_eq!(first["file"], "pgcache/src/options.rs");
    assert_eq!(first["line"], 7);
    assert_eq!(first["column"], 12);
    assert!(first["message"].as_str().unwrap().contains("PgOptions"));
    assert!(
        first["help"]
            .as_str()
            .unwrap()
            .contains("deny_unknown_fields")
    );
    assert_eq!(json["crates"][0]["role"], "driver");
    assert_eq!(json["crates"][0]["origin"], "declared");
}

#[test]
fn clean_workspace_exits_0() {
    let path = manifest("layering-compliant");
    let output = run(&["--manifest-path", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("no violations"));
}

#[test]
fn missing_manifest_exits_2_with_a_clear_message() {
    let output = run(&["--manifest-path", "/nonexistent/Cargo.toml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no Cargo manifest at `/nonexistent/Cargo.toml`"));
    let json = run(&[
        "--format=json",
        "--manifest-path",
        "/nonexistent/Cargo.toml",
    ]);
    assert_eq!(json.status.code(), Some(2));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    assert!(
        value["error"]
            .as_str()
            .unwrap()
            .contains("no Cargo manifest")
    );
}

#[test]
fn metadata_failure_exits_2() {
    let dir = std::env::temp_dir().join(format!("sandloom-lint-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("Cargo.toml");
    std::fs::write(&broken, "[package\nname = \"broken\"\n").unwrap();
    let output = run(&["--manifest-path", broken.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("`cargo metadata` failed"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn invalid_configuration_exits_2() {
    let path = manifest("layering-bad-config");
    let output = run(&["--manifest-path", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid lint configuration"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let output = run(&["--format", "yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown format `yaml`"));
    let output = run(&["--bogus"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("usage: sandloom-lint"));
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("exit status: 0 clean, 1 violations found, 2"));
}
