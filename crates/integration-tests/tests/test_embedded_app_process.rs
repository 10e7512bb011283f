//! Issue 23's "what must hold", items 1 and 2, through a real application process: the `infra`
//! command line embedded under `#[tokio::main]` (`src/bin/embedded-infra-app.rs`), in both
//! runtime flavors and through both entry points, must not panic ("Cannot start a runtime from
//! within a runtime", exit 101) and must exit 0, 1 or 2 as documented.

use std::process::Command;

const APP: &str = env!("CARGO_BIN_EXE_embedded-infra-app");

/// The four ways the application may run the command line.
const WAYS: [(&str, &str); 4] = [
    ("multi_thread", "blocking"),
    ("multi_thread", "async"),
    ("current_thread", "blocking"),
    ("current_thread", "async"),
];

/// `app infra ARGS…` run every way: the exit code, standard output and standard error, the
/// same for all four (asserted).
fn run(args: &[&str]) -> (i32, String, String) {
    let mut answers = WAYS.iter().map(|&(runtime, entry)| {
        let output = Command::new(APP)
            .arg("infra")
            .args(args)
            .env("APP_RUNTIME", runtime)
            .env("APP_ENTRY", entry)
            .env_remove("SANDLOOM_INFRA")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let answer = (
            output.status.code().unwrap_or(-1),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        );
        ((runtime, entry), answer)
    });
    let (_, first) = answers.next().unwrap();
    for (way, answer) in answers {
        assert_eq!(
            answer, first,
            "{way:?} answers otherwise than multi_thread, blocking"
        );
    }
    first
}

fn infra_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn health_answers_and_exits_0_in_every_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(
        &dir,
        "[cache.default]\ndriver = \"memory\"\n[objectstore.default]\ndriver = \"memory\"\n",
    );
    assert_eq!(
        run(&["health", "--infra", &path]),
        (
            0,
            "ready: 2 instances\n  cache.default (memory): healthy\n  objectstore.default (memory): healthy\n"
                .to_owned(),
            String::new()
        )
    );
}

#[test]
fn why_of_a_name_check_refuses_exits_2_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\n");
    assert_eq!(
        run(&["why", "cache.Default", "--infra", &path]),
        (
            2,
            String::new(),
            "error: instance name `Default` must be non-empty lowercase ASCII letters, digits, `_` \
             or `-`: INFRA cannot have `[cache.Default]` (`infra check` refuses it with \
             SANDLOOM-B010)\n"
                .to_owned()
        )
    );
}

#[test]
fn why_of_an_instance_with_problems_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\ncapacity = 0\n");
    let (code, out, err) = run(&["why", "cache.default", "--infra", &path]);
    assert_eq!((code, err.as_str()), (1, ""), "{out}");
    let expected = format!(
        "Why `cache.default` (development environment; `cache` is stable):
  configured: driver = \"memory\" (at {path}:2:1)
  required by: no module
  selected: none
  candidates:
    memory (sandloom-embedded, contract {contract}): not selected
      - [SANDLOOM-B022] invalid options: option `capacity`: must be at least 1
  problems (as `infra check` reports them):
    [SANDLOOM-B022] driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at {path}:3:1: option `capacity`: must be at least 1
      Action: fix the option in `[cache.default]`; see the options of `cache.memory` in `sandloom-embedded`'s documentation
",
        contract = <sandloom_driverkit::cache::CacheCapability as sandloom_driverkit::Contract>::VERSION,
    );
    assert_eq!(out, expected);
}

#[test]
fn check_with_problems_exits_1_and_a_bad_subcommand_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\ncapacity = 0\n");
    let (code, out, err) = run(&["check", "--infra", &path]);
    assert_eq!((code, err.as_str()), (1, ""), "{out}");
    assert!(out.contains("1. [SANDLOOM-B022]"), "{out}");
    let (code, out, err) = run(&["frobnicate"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("unrecognized subcommand 'frobnicate'"),
        "{err}"
    );
}
