//! `infra check`: the dry run, every problem with its code, location and action.

use std::io::Write;

use serde_json::{Value, json};

use super::{Failure, Format, Loaded, Status, json as doc};
use sandloom_kernel::{InfraConfig, Kernel, LinkedDrivers, StartupError, StartupReport};

pub(super) fn run(
    loaded: Loaded,
    linked: LinkedDrivers,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let (config, outcome) = match loaded {
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
