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

pub(super) fn run(
    loaded: Loaded,
    linked: LinkedDrivers,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let (config, outcome) = match loaded {
        Loaded::Config(config) => {
            let outcome = check_once(config.clone(), linked)?;
            (Some(config), outcome)
        }
        Loaded::Unreadable(error) => (None, Outcome::NotStarted(error)),
    };
    let status = match &outcome {
        Outcome::Checked {
            report,
            shutdown: Ok(()),
        } if report.readiness.is_ready() => Status::Ok,
        _ => Status::Problems,
    };
    match format {
        Format::Text => text(&outcome, out)?,
        Format::Json => doc::write(out, &document(&outcome, config.as_ref()))?,
    }
    Ok(status)
}

fn check_once(config: InfraConfig, linked: LinkedDrivers) -> Result<Outcome, Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::Runtime(format!("cannot start the async runtime: {error}")))?;
    Ok(runtime.block_on(async move {
        match Kernel::new(config, linked).start().await {
            Err(error) => Outcome::NotStarted(error),
            Ok(running) => {
                let report = running.readiness().await;
                let shutdown = running.shutdown().await;
                Outcome::Checked { report, shutdown }
            }
        }
    }))
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
