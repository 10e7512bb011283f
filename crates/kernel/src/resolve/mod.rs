//! From `INFRA` and the linked slices to a verdict on each candidate driver of every instance,
//! and from the verdicts to a plan of drivers to build, or every problem found.
//!
//! Each rule is judged once, in [`judge`]: `check` and `start` read the plan or the problems
//! made of the verdicts, and the condition report (`why`) shows the verdicts themselves, so
//! they cannot disagree. Resolution constructs nothing: it deserializes options and asks for
//! features, both of which are declared on the driver's type. `check` is resolution alone.

mod judge;
mod options;
mod plan;
mod requirements;
mod scan;
#[cfg(test)]
mod tests;

pub(crate) use judge::{CandidateVerdict, Refusal, Verdict};
pub(crate) use plan::{Inputs, InstanceNames, PlannedInstance};

use crate::config::order_by_location;
use crate::diagnostics::{Binary, no_driver};
use crate::error::{ConflictKind, Problem, UnusableReason};
use crate::registry::{CapabilitySpec, DriverEntry};
use judge::{InstanceRules, packages_of};
use requirements::check_requirements;
use scan::{find_spec, scan};

/// The verdicts on every linked driver of one instance's capability, for the condition report.
pub(crate) struct Verdicts {
    /// The modules that require the instance, sorted, each with the features it requires.
    pub(crate) required_by: Vec<(&'static str, Vec<&'static str>)>,
    /// One per linked driver of the capability, sorted by name, then package.
    pub(crate) candidates: Vec<CandidateVerdict>,
}

/// Resolve every instance the configuration could read; the problems it could not read are
/// reported with the others, all ordered by location.
pub(crate) fn resolve<'a>(inputs: &Inputs<'a>) -> Result<Vec<PlannedInstance<'a>>, Vec<Problem>> {
    let (planned, problems, _) = judge_instances(inputs, None);
    if problems.is_empty() {
        Ok(planned)
    } else {
        Err(problems)
    }
}

/// Resolve as [`resolve`] does, and judge every linked driver of `capability.instance`'s
/// capability for it, configured or not: what `why` shows. Returns the problems (empty when
/// resolution would succeed) and the verdicts.
pub(crate) fn resolve_for_report(
    inputs: &Inputs<'_>,
    capability: &str,
    instance: &str,
) -> (Vec<Problem>, Verdicts) {
    let (_, problems, verdicts) = judge_instances(inputs, Some((capability, instance)));
    let verdicts = verdicts.unwrap_or_else(|| {
        // `INFRA` does not configure it: every candidate is judged as if it could.
        let mut specs = inputs.specs.iter().filter(|s| s.name == capability);
        let spec = specs.next().filter(|_| specs.next().is_none());
        report_only(inputs, capability, instance, spec)
    });
    (problems, verdicts)
}

type Judged<'a> = (Vec<PlannedInstance<'a>>, Vec<Problem>, Option<Verdicts>);

/// Judge each instance's candidates, and the drivers of `focus` all, in one pass.
fn judge_instances<'a>(inputs: &Inputs<'a>, focus: Option<(&str, &str)>) -> Judged<'a> {
    let config = inputs.config;
    let mut problems = config.problems.clone();
    let providers = scan(inputs, &mut problems);
    let mut planned = Vec::with_capacity(config.instances().size_hint().0);
    let mut focused = None;
    // Buffers reused from instance to instance: resolution is measured per selected instance,
    // and nearly all have one provider (`BENCHMARKS.md`).
    let mut found: Vec<&'static DriverEntry> = Vec::new();
    let mut judged: Vec<CandidateVerdict> = Vec::new();

    for (index, instance) in config.instances().enumerate() {
        let names = InstanceNames::of(instance);
        let is_focus = focus == Some((names.capability, names.instance));
        let Some(spec) = find_spec(inputs, &mut problems, instance) else {
            if is_focus {
                focused = Some(report_only(inputs, names.capability, names.instance, None));
            }
            continue;
        };
        let rules = InstanceRules::new(
            config,
            inputs.requirements,
            (names.capability, names.instance),
            Some(instance),
            Some(spec),
        );
        if rules.experimental_refused {
            problems.push(Problem::Experimental {
                capability: instance.capability.clone(),
                instance: instance.instance.clone(),
                location: instance.capability_location.clone(),
            });
        }
        // The providers of the selected name, judged; for the instance `why` asks about, every
        // linked driver of the capability, those of the selected name among them.
        judged.clear();
        if is_focus {
            judged = every_driver(inputs, &rules, names.capability);
        } else {
            found.clear();
            providers.of((index, names.capability, names.driver), &mut found);
            judged.extend(found.iter().map(|&entry| rules.judge(entry, &found)));
        }
        // The verdicts of the selected name: all of them, or for `why`'s instance those its
        // sorting by name keeps together.
        let of_name = if is_focus {
            judged.partition_point(|v| v.entry.name < names.driver)
                ..judged.partition_point(|v| v.entry.name <= names.driver)
        } else {
            0..judged.len()
        };
        match &mut judged[of_name] {
            [] => problems.push(no_driver(&binary(inputs), instance)),
            // Reported once by the scan, whichever instances select the name.
            verdicts if verdicts.iter().any(claimed) => {}
            [one] => planned.extend(plan_or_problems(names, spec, one, &mut problems)),
            several => problems.push(Problem::Conflict {
                capability: instance.capability.clone(),
                name: instance.driver.clone(),
                packages: packages_of(&several.iter().map(|v| v.entry).collect::<Vec<_>>()),
                kind: ConflictKind::SelectedTwice,
            }),
        }
        if is_focus {
            focused = Some(Verdicts {
                required_by: rules.required_by,
                candidates: std::mem::take(&mut judged),
            });
        }
    }

    check_requirements(inputs, &planned, &mut problems);
    if !problems.is_empty() {
        order_by_location(&mut problems, config);
    }
    (planned, problems, focused)
}

/// The plan of the instance's one candidate, when it is selected; its problems otherwise (the
/// experimental refusal is the instance's, reported once already).
fn plan_or_problems<'a>(
    names: InstanceNames<'a>,
    spec: &'static CapabilitySpec,
    verdict: &mut CandidateVerdict,
    problems: &mut Vec<Problem>,
) -> Option<PlannedInstance<'a>> {
    let entry = verdict.entry;
    let declared = || {
        verdict
            .options
            .as_ref()
            .map(|o| o.features.clone())
            .unwrap_or_default()
    };
    for refusal in verdict.refusals() {
        let reason = match refusal {
            Refusal::Unusable(reason) => reason.clone(),
            Refusal::MissingFeature { feature, module } => UnusableReason::MissingFeature {
                feature: (*feature).to_owned(),
                module,
                declared: declared(),
            },
            // Not a refusal of a lone provider of the selected name, or the instance's own.
            Refusal::OtherName { .. }
            | Refusal::DuplicateProvider { .. }
            | Refusal::BuiltinClaimed { .. }
            | Refusal::ExperimentalInProduction => continue,
        };
        problems.push(unusable(&names, entry, reason));
    }
    match (&verdict.verdict, verdict.options.take()) {
        (Verdict::Selected, Some(options)) => Some(PlannedInstance {
            config: names,
            spec,
            entry,
            options,
        }),
        _ => None,
    }
}

/// The verdicts on an instance resolution does not judge (`INFRA` does not configure it, or
/// its capability is unknown), for the report alone.
fn report_only(
    inputs: &Inputs<'_>,
    capability: &str,
    instance: &str,
    spec: Option<&'static CapabilitySpec>,
) -> Verdicts {
    let rules = InstanceRules::new(
        inputs.config,
        inputs.requirements,
        (capability, instance),
        inputs.config.instance(capability, instance),
        spec,
    );
    let candidates = every_driver(inputs, &rules, capability);
    Verdicts {
        required_by: rules.required_by,
        candidates,
    }
}

/// The verdicts on every linked driver of `capability`, sorted by name, then package.
fn every_driver(
    inputs: &Inputs<'_>,
    rules: &InstanceRules<'_>,
    capability: &str,
) -> Vec<CandidateVerdict> {
    let mut entries: Vec<&'static DriverEntry> = inputs
        .drivers
        .iter()
        .filter(|entry| entry.capability == capability)
        .collect();
    entries.sort_by_key(|entry| (entry.name, entry.package));
    entries
        .iter()
        .map(|&entry| {
            let same_name: Vec<&'static DriverEntry> = entries
                .iter()
                .copied()
                .filter(|other| other.name == entry.name)
                .collect();
            rules.judge(entry, &same_name)
        })
        .collect()
}

/// Whether the candidate claims a built-in name it does not own.
fn claimed(verdict: &CandidateVerdict) -> bool {
    verdict
        .refusals()
        .iter()
        .any(|r| matches!(r, Refusal::BuiltinClaimed { .. }))
}

fn binary<'a>(inputs: &Inputs<'a>) -> Binary<'a> {
    Binary {
        crates: inputs.linked,
        drivers: inputs.drivers,
        specs: inputs.specs,
        requirements: inputs.requirements,
    }
}

/// SANDLOOM-B022 for `instance`, whose driver `entry` cannot be used for `reason`.
pub(crate) fn unusable(
    instance: &InstanceNames<'_>,
    entry: &'static DriverEntry,
    reason: UnusableReason,
) -> Problem {
    Problem::Unusable {
        capability: instance.capability.to_owned(),
        instance: instance.instance.to_owned(),
        driver: instance.driver.to_owned(),
        package: entry.package,
        reason,
    }
}
