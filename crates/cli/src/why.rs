//! `infra why CAPABILITY.INSTANCE`: the condition report of `sandloom_kernel::conditions`.

use std::io::Write;

use serde_json::{Value, json};

use super::{Failure, Format, Loaded, Status, json as doc};
use sandloom_kernel::conditions::{Candidate, ConditionReport, WhyNot};
use sandloom_kernel::registry;
use sandloom_kernel::{InfraConfig, LinkedDrivers};

pub(super) fn run(
    loaded: &Loaded,
    linked: LinkedDrivers,
    target: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let (capability, instance) = target
        .split_once('.')
        .filter(|(c, i)| !c.is_empty() && !i.is_empty() && !i.contains('.'))
        .ok_or_else(|| {
            Failure::BadInput(format!(
                "`{target}` is not `CAPABILITY.INSTANCE`: write it as in INFRA's table names, such as `cache.default`"
            ))
        })?;
    let mut known: Vec<&str> = registry::capabilities().iter().map(|s| s.name).collect();
    known.sort_unstable();
    known.dedup();
    if !known.contains(&capability) {
        return Err(Failure::BadInput(format!(
            "unknown capability `{capability}`: the capabilities linked into this binary are {}",
            known.join(", ")
        )));
    }
    // `check` refuses such a table (SANDLOOM-B010): no INFRA can configure the instance, so
    // asking about it is a mistake in the question, not an answer "could serve it".
    sandloom_kernel::config::check_instance_name(instance).map_err(|rule| {
        Failure::BadInput(format!(
            "{rule}: INFRA cannot have `[{capability}.{instance}]` (`infra check` refuses it with SANDLOOM-B010)"
        ))
    })?;
    let config = match loaded {
        Loaded::Config(config) => config,
        Loaded::Unreadable(error) => {
            // INFRA as a whole cannot be read: that is the answer, as `check` would give it.
            match format {
                Format::Text => write!(out, "{error}")?,
                Format::Json => {
                    let problems: Vec<Value> = error
                        .problems()
                        .iter()
                        .map(|p| doc::problem(p, None))
                        .collect();
                    doc::write(
                        out,
                        &doc::document(
                            "why",
                            json!({"capability": capability, "instance": instance, "problems": problems}),
                        ),
                    )?;
                }
            }
            return Ok(Status::Problems);
        }
    };
    let report = ConditionReport::evaluate(config, &linked, capability, instance);
    match format {
        Format::Text => write!(out, "{report}")?,
        Format::Json => doc::write(out, &document(&report, config))?,
    }
    Ok(status(&report))
}

/// 0 when the instance has no problem: `check` reports none about it, and a driver serves it
/// (the selected one) or, unconfigured, could. Otherwise 1, whatever refused every candidate:
/// `selected: none` is never a success.
fn status(report: &ConditionReport) -> Status {
    let served = report.selected().is_some()
        || (report.configured.is_none()
            && !report.left_out
            && report.satisfying().next().is_some());
    if report.problems.is_empty() && served {
        Status::Ok
    } else {
        Status::Problems
    }
}

fn reason(reason: &WhyNot) -> Value {
    let mut value = json!({
        "kind": reason.kind(),
        "code": reason.code(),
        "message": reason.to_string(),
    });
    match reason {
        WhyNot::OtherName { selected } => value["selected"] = json!(selected),
        WhyNot::DuplicateProvider { packages } => value["packages"] = json!(packages),
        WhyNot::BuiltinClaimed { owner } => value["owner"] = json!(owner),
        WhyNot::ContractMajor {
            driver,
            runtime,
            defined_by,
        } => {
            value["driver_contract"] = json!(driver.to_string());
            value["linked_contract"] = json!(runtime.to_string());
            value["defined_by"] = json!(defined_by);
        }
        WhyNot::MissingFeature {
            feature,
            module,
            with_other_options,
        } => {
            value["feature"] = json!(feature);
            value["module"] = json!(module);
            value["with_other_options"] = json!(with_other_options);
        }
        _ => {}
    }
    value
}

fn candidate(candidate: &Candidate) -> Value {
    json!({
        "driver": candidate.driver,
        "package": candidate.package,
        "contract_version": candidate.contract_version.to_string(),
        "supported_features": candidate.supported_features,
        "selected": candidate.selected,
        "reasons": candidate.reasons.iter().map(reason).collect::<Vec<_>>(),
    })
}

fn document(report: &ConditionReport, config: &InfraConfig) -> Value {
    let required_by: Vec<Value> = report
        .required_by
        .iter()
        .map(|r| json!({"module": r.module, "features": r.features}))
        .collect();
    doc::document(
        "why",
        json!({
            "capability": report.capability,
            "instance": report.instance,
            "environment": report.environment.as_str(),
            "stability": report.stability.map(|s| s.to_string()),
            "configured": report.configured,
            "location": report.location.as_ref().map_or(Value::Null, doc::location),
            "left_out": report.left_out,
            "required_by": required_by,
            "selected": report.selected().map(|c| c.driver),
            "satisfying": report.satisfying().map(|c| c.driver).collect::<Vec<_>>(),
            "candidates": report.candidates.iter().map(candidate).collect::<Vec<_>>(),
            "problems": report.problems.iter().map(|p| doc::problem(p, Some(config))).collect::<Vec<_>>(),
            "references": report.references.iter().map(|(option, r)| json!({
                "option": option,
                "secret": r.secret,
                "store": r.store,
                "location": doc::location(&r.location),
            })).collect::<Vec<_>>(),
        }),
    )
}
