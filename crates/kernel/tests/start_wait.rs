//! Waiting for backends at startup (`start_wait_ms`): a `start` that fails with a transient
//! error is called again until the wait is spent; any other error fails at once; SANDLOOM-B022
//! then lists the attempts, the time spent and the last error, and nothing is left running.
//! The driver is scripted: each attempt of `start` takes the next outcome of its `script` (the
//! last one repeats). The entry is made by hand, as driverkit's `register_driver!` would make it.
//! No assertion here depends on how long anything took.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, DRIVERS, DriverEntry, ErasedLifecycle,
    ParsedOptions,
};
use sandloom_kernel::{
    Health, InfraConfig, Kernel, Problem, StartAttempts, StartupError, UnusableReason,
};
use sandloom_sdk_infra::{ErrorKind, InfraError};
use support::{events, record};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Names this instance in the event log.
    id: String,
    /// One outcome per attempt of `start`, the last repeating: `ok`, `unavailable`, `timeout`
    /// (an `InfraError` of that kind), `refused` (an `io::Error`), `invalid` (an `InfraError`
    /// that is not transient), `plain` (an error of no known kind), `repeats` (an error whose
    /// message already ends with its cause's), `hang` (never finishes).
    script: Vec<String>,
}

/// A driver's start error with a cause, as driverkit's `DriverError` is.
#[derive(Debug)]
struct StartError {
    message: &'static str,
    source: Option<BoxError>,
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message)
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

fn failing(
    message: &'static str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> BoxError {
    Box::new(StartError {
        message,
        source: Some(Box::new(source)),
    })
}

struct Scripted {
    id: String,
    script: Vec<String>,
    calls: AtomicUsize,
}

impl ErasedLifecycle for Scripted {
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            let outcome = self.script[call.min(self.script.len() - 1)].clone();
            record(&self.id, format!("start:{outcome}"));
            match outcome.as_str() {
                "ok" => Ok(()),
                "unavailable" => Err(failing(
                    "cannot reach the backend",
                    InfraError::unavailable("cache", "connection refused"),
                )),
                "timeout" => Err(failing(
                    "the backend did not answer",
                    InfraError::new(ErrorKind::Timeout, "cache", "no answer in 1 ms"),
                )),
                "refused" => Err(failing(
                    "cannot connect",
                    std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
                )),
                "invalid" => Err(failing(
                    "the backend refused the credentials",
                    InfraError::invalid_input("cache", "authentication failed"),
                )),
                "plain" => Err("the schema is too new".into()),
                "repeats" => Err(failing(
                    "cannot connect: connection refused",
                    std::io::Error::other("connection refused"),
                )),
                "hang" => std::future::pending().await,
                other => panic!("unknown outcome {other}"),
            }
        })
    }

    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move {
            record(&self.id, "stop");
            Ok(())
        })
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(async { Health::Healthy })
    }
}

fn build(parsed: ParsedOptions, _: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
    support::build_with(parsed, |options: Options| Scripted {
        id: options.id,
        script: options.script,
        calls: AtomicUsize::new(0),
    })
}

#[distributed_slice(DRIVERS)]
#[linkme(crate = sandloom_kernel::__private::linkme)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static SCRIPTED: DriverEntry =
    support::cache_entry::<Options>("scripted", "scripted-driver", build);

/// `[cache.<id>]` with driver `scripted` and `script`, plus `extra` keys.
fn instance(id: &str, script: &[&str], extra: &str) -> String {
    let script: Vec<String> = script.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[cache.{id}]\ndriver = \"scripted\"\nid = \"{id}\"\nscript = [{}]\n{extra}\n",
        script.join(", ")
    )
}

async fn start(text: &str) -> Result<sandloom_kernel::Running, StartupError> {
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    Kernel::new(config, sandloom_kernel::link_drivers!())
        .start()
        .await
}

/// The one problem of a refused start: its reason and the problem.
async fn refused(text: &str) -> (UnusableReason, Problem) {
    let err = match start(text).await {
        Ok(running) => {
            let _ = running.shutdown().await;
            panic!("startup should have been refused")
        }
        Err(err) => err,
    };
    let [problem] = err.problems() else {
        panic!("expected one problem:\n{err}")
    };
    assert_eq!(problem.code(), "SANDLOOM-B022", "{err}");
    let Problem::Unusable { reason, .. } = problem else {
        panic!("{problem}")
    };
    (reason.clone(), problem.clone())
}

fn attempts_of(reason: &UnusableReason) -> StartAttempts {
    match reason {
        UnusableReason::StartFailed { attempts, .. }
        | UnusableReason::TimedOut { attempts, .. } => *attempts,
        other => panic!("not a start failure: {other:?}"),
    }
}

#[tokio::test]
async fn a_transient_failure_is_retried_until_start_succeeds_with_no_stop_in_between() {
    for (id, kind) in [
        ("until-unavailable", "unavailable"),
        ("until-timeout", "timeout"),
        ("until-refused", "refused"),
    ] {
        let running = start(&instance(id, &[kind, kind, "ok"], "start_wait_ms = 60000"))
            .await
            .unwrap_or_else(|err| panic!("{err}"));
        let line = &running.report().lines[0];
        assert_eq!(line.start_attempts, 3, "{kind}");
        running.shutdown().await.unwrap();
        assert_eq!(
            events(id),
            [
                format!("start:{kind}"),
                format!("start:{kind}"),
                "start:ok".to_owned(),
                "stop".to_owned()
            ]
        );
    }
}

#[tokio::test]
async fn the_kernels_start_timeout_is_transient_too() {
    let text = format!(
        "start_timeout_ms = 100\n{}",
        instance("until-hang", &["hang", "ok"], "start_wait_ms = 60000")
    );
    let running = start(&text).await.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(running.report().lines[0].start_attempts, 2);
    running.shutdown().await.unwrap();
    assert_eq!(events("until-hang"), ["start:hang", "start:ok", "stop"]);
}

#[tokio::test]
async fn a_backend_that_never_comes_is_b022_listing_attempts_time_and_last_error_with_nothing_left_running()
 {
    let text = format!(
        "{}{}",
        instance("never-first", &["ok"], ""),
        instance("never-waited", &["unavailable"], "start_wait_ms = 400")
    );
    let (reason, problem) = refused(&text).await;
    let attempts = attempts_of(&reason);
    assert!(attempts.count > 1, "{attempts:?}");
    assert!(attempts.transient);
    assert_eq!(attempts.wait, Duration::from_millis(400));
    assert!(attempts.spent >= attempts.wait, "{attempts:?}");
    assert_eq!(
        problem.description(),
        format!(
            "driver `cache.scripted` (package `scripted-driver`) for `cache.never-waited` cannot be used: start failed on each of {} attempts over {} ms (`start_wait_ms` is 400); the last error: cannot reach the backend: cache: connection refused",
            attempts.count,
            attempts.spent.as_millis()
        )
    );
    assert_eq!(
        problem.action(),
        "check that the backend of `cache.never-waited` is up and reachable from here, or raise `start_wait_ms` (now 400 ms) if it needs longer to come up"
    );
    // Every attempt, then one stop; the driver started before it is stopped after it.
    let waited = events("never-waited");
    assert_eq!(waited.len(), attempts.count as usize + 1, "{waited:?}");
    assert!(
        waited[..waited.len() - 1]
            .iter()
            .all(|e| e == "start:unavailable")
    );
    assert_eq!(waited.last().unwrap(), "stop");
    assert_eq!(events("never-first"), ["start:ok", "stop"]);
}

#[tokio::test]
async fn the_top_level_wait_applies_and_an_instance_may_turn_it_off() {
    let text = format!(
        "start_wait_ms = 60000\n{}",
        instance("top-wait", &["unavailable", "ok"], "")
    );
    let running = start(&text).await.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(running.report().lines[0].start_attempts, 2);
    running.shutdown().await.unwrap();

    let text = format!(
        "start_wait_ms = 60000\n{}",
        instance("top-off", &["unavailable", "ok"], "start_wait_ms = 0")
    );
    let (reason, _) = refused(&text).await;
    assert_eq!(attempts_of(&reason).count, 1);
    assert_eq!(events("top-off"), ["start:unavailable", "stop"]);
}

#[tokio::test]
async fn any_other_error_fails_at_once_and_says_why_it_was_not_retried() {
    for (id, kind, shown) in [
        (
            "other-invalid",
            "invalid",
            "the backend refused the credentials: cache: authentication failed",
        ),
        ("other-plain", "plain", "the schema is too new"),
    ] {
        let (reason, problem) =
            refused(&instance(id, &[kind, "ok"], "start_wait_ms = 60000")).await;
        let attempts = attempts_of(&reason);
        assert_eq!((attempts.count, attempts.transient), (1, false));
        assert!(
            problem.description().ends_with(&format!(
                "start failed: {shown} (not retried: startup waits only on a transient error, `Unavailable` or `Timeout`, and this one is not marked as such)"
            )),
            "{problem}"
        );
        assert_eq!(events(id), [format!("start:{kind}"), "stop".to_owned()]);
    }
}

#[tokio::test]
async fn a_cause_the_message_already_ends_with_is_said_once() {
    let (_, problem) = refused(&instance("repeats", &["repeats"], "")).await;
    // The kernel words it with the `error_chain` driverkit documents, which skips the repeat.
    assert!(
        problem
            .description()
            .ends_with("start failed: cannot connect: connection refused"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_non_transient_error_after_transient_ones_stops_the_wait() {
    let (reason, problem) = refused(&instance(
        "then-invalid",
        &["unavailable", "invalid"],
        "start_wait_ms = 60000",
    ))
    .await;
    let attempts = attempts_of(&reason);
    assert_eq!((attempts.count, attempts.transient), (2, false));
    assert!(
        problem.description().contains(&format!(
            "start failed on attempt 2, after {} ms of waiting for the backend, with an error that is not transient, so startup stopped waiting: the backend refused the credentials",
            attempts.spent.as_millis()
        )),
        "{problem}"
    );
}

#[tokio::test]
async fn without_a_wait_a_transient_failure_says_how_to_wait() {
    let (reason, problem) = refused(&instance("no-wait", &["unavailable", "ok"], "")).await;
    let attempts = attempts_of(&reason);
    assert_eq!((attempts.count, attempts.transient), (1, true));
    assert!(
        problem
            .description()
            .ends_with("start failed: cannot reach the backend: cache: connection refused"),
        "{problem}"
    );
    assert!(
        problem.action().contains("set `start_wait_ms` in INFRA"),
        "{}",
        problem.action()
    );
    assert_eq!(events("no-wait"), ["start:unavailable", "stop"]);
}

#[test]
fn a_dry_run_reports_no_attempts() {
    let config = InfraConfig::from_toml_str(&instance("dry", &["ok"], ""), "infra.toml").unwrap();
    let report = Kernel::new(config, sandloom_kernel::link_drivers!())
        .check()
        .unwrap();
    assert_eq!(report.lines[0].start_attempts, 0);
    assert!(events("dry").is_empty());
}
