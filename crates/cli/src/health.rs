//! `infra health`: start the infrastructure, check every instance's health once, stop.

use std::io::Write;

use serde_json::{Value, json};

use super::{Failure, Format, Loaded, Status, json as doc};
use sandloom_kernel::{
    Health, HealthReport, InfraConfig, Kernel, LinkedDrivers, Problem, ShutdownError, StartupError,
};

/// How the run ended.
enum Outcome {
    /// Startup refused (or `INFRA` could not be read).
    NotStarted(StartupError),
    /// Started, checked, stopped (perhaps not cleanly).
    Checked {
        report: HealthReport,
        shutdown: Result<(), ShutdownError>,
    },
}

/// What `health` found: `INFRA` (when it could be read) and how the run ended.
pub(super) struct Checked {
    config: Option<InfraConfig>,
    outcome: Outcome,
}

/// Start, check and stop on a runtime of its own, blocking the caller until it is done.
pub(super) fn check_blocking(loaded: Loaded, linked: LinkedDrivers) -> Result<Checked, Failure> {
    match loaded {
        Loaded::Config(config) => {
            let outcome = if tokio::runtime::Handle::try_current().is_ok() {
                // Inside a runtime (an application under `#[tokio::main]`), a second runtime
                // may not block this thread (Tokio panics: "Cannot start a runtime from within
                // a runtime"), and `block_in_place` panics on a current-thread runtime. A
                // thread of our own with its own runtime works under either flavor; this
                // thread waits for it (`execute_async` is the way not to block it).
                let own = config.clone();
                std::thread::scope(|scope| {
                    let thread = std::thread::Builder::new()
                        .name("sandloom-infra-health".to_owned())
                        .spawn_scoped(scope, move || on_own_runtime(own, linked))
                        .map_err(|error| {
                            Failure::Runtime(format!(
                                "cannot start a thread for the check: {error}"
                            ))
                        })?;
                    thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })?
            } else {
                on_own_runtime(config.clone(), linked)?
            };
            Ok(Checked {
                config: Some(config),
                outcome,
            })
        }
        Loaded::Unreadable(error) => Ok(unreadable(error)),
    }
}

/// Start, check and stop on the caller's runtime.
pub(super) async fn check_async(loaded: Loaded, linked: LinkedDrivers) -> Checked {
    match loaded {
        Loaded::Config(config) => {
            let outcome = check_once(config.clone(), linked).await;
            Checked {
                config: Some(config),
                outcome,
            }
        }
        Loaded::Unreadable(error) => unreadable(error),
    }
}

fn unreadable(error: StartupError) -> Checked {
    Checked {
        config: None,
        outcome: Outcome::NotStarted(error),
    }
}

/// Print what `health` found; the status is 0 only when ready and stopped cleanly.
pub(super) fn report(
    checked: &Checked,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let Checked { config, outcome } = checked;
    let status = match outcome {
        Outcome::Checked {
            report,
            shutdown: Ok(()),
        } if report.readiness.is_ready() => Status::Ok,
        _ => Status::Problems,
    };
    match format {
        Format::Text => text(outcome, out)?,
        Format::Json => doc::write(out, &document(outcome, config.as_ref()))?,
    }
    Ok(status)
}

fn on_own_runtime(config: InfraConfig, linked: LinkedDrivers) -> Result<Outcome, Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::Runtime(format!("cannot start the async runtime: {error}")))?;
    Ok(runtime.block_on(check_once(config, linked)))
}

async fn check_once(config: InfraConfig, linked: LinkedDrivers) -> Outcome {
    match Kernel::new(config, linked).start().await {
        Err(error) => Outcome::NotStarted(error),
        Ok(running) => {
            let report = running.readiness().await;
            let shutdown = running.shutdown().await;
            Outcome::Checked { report, shutdown }
        }
    }
}

fn text(outcome: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    match outcome {
        Outcome::NotStarted(error) => write!(out, "not started: {error}"),
        Outcome::Checked { report, shutdown } => {
            write!(out, "{report}")?;
            match shutdown {
                Ok(()) => Ok(()),
                Err(error) => write!(out, "\n{error}"),
            }
        }
    }
}

fn state(health: &Health) -> (&'static str, Option<&str>) {
    match health {
        Health::Healthy => ("healthy", None),
        Health::Degraded(reason) => ("degraded", Some(reason)),
        Health::Unhealthy(reason) => ("unhealthy", Some(reason)),
    }
}

fn document(outcome: &Outcome, config: Option<&InfraConfig>) -> Value {
    let problems = |problems: &[Problem]| {
        problems
            .iter()
            .map(|p| doc::problem(p, config))
            .collect::<Vec<_>>()
    };
    match outcome {
        Outcome::NotStarted(error) => doc::document(
            "health",
            json!({
                "started": false,
                "readiness": Value::Null,
                "ready": false,
                "instances": [],
                "problems": problems(error.problems()),
            }),
        ),
        Outcome::Checked { report, shutdown } => {
            let instances: Vec<Value> = report
                .instances
                .iter()
                .map(|checked| {
                    let (state, reason) = state(&checked.health);
                    json!({
                        "capability": checked.capability,
                        "instance": checked.instance,
                        "driver": checked.driver,
                        "state": state,
                        "reason": reason,
                    })
                })
                .collect();
            doc::document(
                "health",
                json!({
                    "started": true,
                    "readiness": report.readiness.as_str(),
                    "ready": report.readiness.is_ready(),
                    "instances": instances,
                    "problems": shutdown.as_ref().err().map_or_else(Vec::new, |e| problems(e.problems())),
                }),
            )
        }
    }
}
