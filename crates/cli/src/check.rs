//! `infra check`: the dry run, every problem with its code, location and action.

use std::io::Write;

use serde_json::{Value, json};

use super::{Failure, Format, Loaded, Status, json as doc};
use sandloom_kernel::{InfraConfig, Kernel, LinkedDrivers, StartupError, StartupReport};

pub(super) fn run(
    loaded: Loaded,
    linked: LinkedDrivers,
    read_secrets: bool,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let (config, outcome) = match loaded {
        Loaded::Config(config) if read_secrets => {
            let outcome = reading_secrets(Kernel::new(config.clone(), linked))?;
            (Some(config), outcome)
        }
        Loaded::Config(config) => {
            let outcome = Kernel::new(config.clone(), linked).check();
            (Some(config), outcome)
        }
        Loaded::Unreadable(error) => (None, Err(error)),
    };
    let status = if outcome.is_ok() {
        Status::Ok
    } else {
        Status::Problems
    };
    match format {
        Format::Text => match &outcome {
            Ok(report) => {
                writeln!(
                    out,
                    "Sandloom check (a dry run; nothing was started): no problems found."
                )?;
                write!(out, "{report}")?;
            }
            Err(error) => write!(out, "{error}")?,
        },
        Format::Json => doc::write(out, &document(config.as_ref(), &outcome))?,
    }
    Ok(status)
}

/// [`Kernel::check_reading_secrets`] on a runtime of its own, on a thread of its own: the
/// stores are started, so they need a runtime, and this may be called inside the caller's
/// (where a second one may not block the thread).
fn reading_secrets(kernel: Kernel) -> Result<Result<StartupReport, StartupError>, Failure> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("sandloom-infra-check".to_owned())
            .spawn_scoped(scope, move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| {
                        Failure::Runtime(format!("cannot start a runtime for the check: {error}"))
                    })?;
                Ok(runtime.block_on(kernel.check_reading_secrets()))
            })
            .map_err(|error| {
                Failure::Runtime(format!("cannot start a thread for the check: {error}"))
            })?;
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn document(config: Option<&InfraConfig>, outcome: &Result<StartupReport, StartupError>) -> Value {
    let problems: Vec<Value> = match outcome {
        Ok(_) => Vec::new(),
        Err(error) => error
            .problems()
            .iter()
            .map(|problem| doc::problem(problem, config))
            .collect(),
    };
    let instances: Vec<Value> = match outcome {
        Ok(report) => report
            .lines
            .iter()
            .map(super::drivers::report_line)
            .collect(),
        Err(_) => Vec::new(),
    };
    doc::document(
        "check",
        json!({
            "ok": outcome.is_ok(),
            "origin": config.map(InfraConfig::origin),
            "environment": config.map(|c| c.environment().as_str()),
            "problems": problems,
            "instances": instances,
        }),
    )
}
