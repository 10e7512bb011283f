//! The module requirements that are about an instance rather than a driver: an instance no
//! table configures, a feature the capability does not have. A feature a driver does not
//! declare is the driver's refusal ([`judge`](super::judge)).

use sandloom_sdk_infra::Requirement;

use crate::error::Problem;

use super::plan::{Inputs, PlannedInstance};

/// SANDLOOM-B020 for each required instance `INFRA` does not configure, SANDLOOM-B024 for each
/// required feature the selected instance's capability does not define.
pub(super) fn check_requirements(
    inputs: &Inputs<'_>,
    planned: &[PlannedInstance<'_>],
    problems: &mut Vec<Problem>,
) {
    let mut requirements: Vec<&Requirement> = inputs.requirements.iter().collect();
    requirements.sort_by_key(|r| (r.capability(), r.instance(), r.module()));
    requirements.dedup();
    for requirement in requirements {
        let configured = inputs
            .config
            .instance(requirement.capability(), requirement.instance());
        if configured.is_none() {
            // Its table could not be read (reported already): it may well be configured.
            if inputs
                .config
                .is_left_out(requirement.capability(), Some(requirement.instance()))
            {
                continue;
            }
            let mut names: Vec<String> = inputs
                .config
                .instances()
                .filter(|i| i.capability == requirement.capability())
                .map(|i| i.instance.clone())
                .collect();
            names.sort();
            problems.push(Problem::NoInstance {
                capability: requirement.capability().to_owned(),
                instance: requirement.instance().to_owned(),
                module: requirement.module(),
                configured: names,
            });
            continue;
        }
        // An instance with its own problems was reported already.
        let Some(plan) = planned.iter().find(|p| {
            p.config.capability == requirement.capability()
                && p.config.instance == requirement.instance()
        }) else {
            continue;
        };
        for feature in requirement.features() {
            if !plan.spec.features.contains(feature) {
                problems.push(Problem::InvalidRequirement {
                    capability: requirement.capability().to_owned(),
                    feature: (*feature).to_owned(),
                    module: requirement.module(),
                    known: plan.spec.features.to_vec(),
                });
            }
        }
    }
}
