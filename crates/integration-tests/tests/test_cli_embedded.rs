//! The command line embedded in an application that is itself async: its own `clap` parser with
//! `infra` as a subcommand, under `#[tokio::main]` in both flavors. The blocking entry points
//! must not nest runtimes (Tokio panics: "Cannot start a runtime from within a runtime"), and the
//! async one runs on the application's runtime; exit statuses mean what the docs say.

use clap::Parser;
use sandloom::cli::{InfraCommand, Status};

/// The application: it serves, or inspects its infrastructure.
#[derive(Parser)]
enum App {
    /// Serve requests.
    Serve,
    /// Inspect the infrastructure.
    Infra(InfraCommand),
}

fn linked() -> sandloom::LinkedDrivers {
    // `fulltext.memory`: a driver of an experimental capability, for SANDLOOM-B023.
    sandloom::link_drivers!(sandloom_embedded, sandloom_example_fulltext_memory)
}

/// What the application's `main` does with `app infra ARGS…`; `asynchronously` picks
/// `execute_async(…).await` over the blocking `execute`.
async fn main_body(args: &[&str], asynchronously: bool) -> (Status, String, String) {
    let App::Infra(command) = App::parse_from(["app", "infra"].iter().chain(args)) else {
        unreachable!("the tests run `infra`")
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = if asynchronously {
        command.execute_async(linked(), &mut out, &mut err).await
    } else {
        command.execute(linked(), &mut out, &mut err)
    };
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[tokio::main]
async fn multi_thread_app(args: &[&str], asynchronously: bool) -> (Status, String, String) {
    main_body(args, asynchronously).await
}

#[tokio::main(flavor = "current_thread")]
async fn current_thread_app(args: &[&str], asynchronously: bool) -> (Status, String, String) {
    main_body(args, asynchronously).await
}

/// `args` through each flavor and each entry point: all four answer the same.
fn every_way(args: &[&str]) -> (Status, String, String) {
    let first = multi_thread_app(args, false);
    for (way, answer) in [
        ("multi-thread, async", multi_thread_app(args, true)),
        ("current-thread, blocking", current_thread_app(args, false)),
        ("current-thread, async", current_thread_app(args, true)),
    ] {
        assert_eq!(
            answer, first,
            "{way} answers otherwise than multi-thread, blocking"
        );
    }
    first
}

fn infra_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const TWO_CACHES: &str =
    "[cache.default]\ndriver = \"memory\"\n[objectstore.default]\ndriver = \"memory\"\n";

#[test]
fn health_runs_inside_the_application_s_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, TWO_CACHES);
    let (status, out, err) = every_way(&["health", "--infra", &path]);
    assert_eq!(
        (status, out.as_str(), err.as_str()),
        (
            Status::Ok,
            "ready: 2 instances\n  cache.default (memory): healthy\n  objectstore.default (memory): healthy\n",
            ""
        )
    );
}

#[test]
fn health_that_cannot_start_exits_1_inside_the_application_s_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.default]\ndriver = \"memory\"\ncapacity = 0\n");
    let (status, out, err) = every_way(&["health", "--infra", &path, "--format", "json"]);
    assert_eq!(status, Status::Problems, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["started"], false);
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B022");
}

#[test]
fn check_runs_inside_the_application_s_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, TWO_CACHES);
    let (status, out, err) = every_way(&["check", "--infra", &path]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    assert!(
        out.starts_with("Sandloom check (a dry run; nothing was started): no problems found.\n"),
        "{out}"
    );
}

/// The async entry point is `Send`: an application may spawn it.
#[test]
fn the_async_entry_point_can_be_spawned() {
    fn is_send<T: Send>(_: &T) {}
    let App::Infra(command) = App::parse_from(["app", "infra", "check"]) else {
        unreachable!()
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let future = command.execute_async(linked(), &mut out, &mut err);
    is_send(&future);
    let future = sandloom::cli::run_async(linked());
    is_send(&future);
}

#[test]
fn why_on_an_instance_name_check_refuses_is_a_usage_error_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "[cache.Default]\ndriver = \"memory\"\n");
    let (status, out, _) = every_way(&["check", "--infra", &path, "--format", "json"]);
    assert_eq!(status, Status::Problems);
    assert!(out.contains("\"code\": \"SANDLOOM-B010\""), "{out}");

    let (status, out, err) = every_way(&["why", "cache.Default", "--infra", &path]);
    assert_eq!(
        (status, out.as_str(), err.as_str()),
        (
            Status::BadInput,
            "",
            "error: instance name `Default` must be non-empty lowercase ASCII letters, digits, `_` \
             or `-`: INFRA cannot have `[cache.Default]` (`infra check` refuses it with \
             SANDLOOM-B010)\n"
        )
    );
}

#[test]
fn why_exits_1_when_every_candidate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = infra_file(&dir, "environment = \"production\"\n");
    let (status, out, err) = every_way(&["why", "fulltext.default", "--infra", &path]);
    assert_eq!((status, err.as_str()), (Status::Problems, ""), "{out}");
    // The contract's version is read, not written: it moves on its own.
    let contract = <sandloom_example_fulltext_contracts::FulltextCapability as sandloom_driverkit::Contract>::VERSION;
    assert_eq!(
        out,
        format!(
            "Why `fulltext.default` (production environment; `fulltext` is experimental):
  configured: no: INFRA has no `[fulltext.default]`
  required by: no module
  selected: none
  candidates:
    memory (sandloom-example-fulltext-memory, contract {contract}): not selected
      - [SANDLOOM-B023] the capability is experimental, and the environment is production without the accepted risk `experimental_capability`
"
        )
    );

    // Accepting the risk, the same instance could be served: 0.
    let accepted = infra_file(
        &dir,
        "environment = \"production\"\naccepted_risks = [\"experimental_capability\"]\n",
    );
    let (status, out, _) = every_way(&["why", "fulltext.default", "--infra", &accepted]);
    assert_eq!(status, Status::Ok, "{out}");
    assert!(out.contains(": could serve it\n"), "{out}");
}
