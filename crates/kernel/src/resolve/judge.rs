//! The rules a candidate driver of an instance is judged by, each written once: `check` and
//! `start` read the verdicts of the providers of the selected name, the condition report
//! (`why`) those of every linked driver of the capability.

use sandloom_sdk_infra::Requirement;

use crate::config::{EXPERIMENTAL_CAPABILITY_RISK, Environment, InfraConfig, InstanceConfig};
use crate::error::UnusableReason;
use crate::known::{BUILTIN_OWNER, is_builtin};
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions, Stability, contract_compatible};
use crate::specs::{KERNEL_PACKAGE, WITHOUT_OPERATION_TRAIT};

use super::options::{call_driver, parse_options, undeclared_features};

/// Why a candidate does not serve an instance: a typed reason, formatted by whoever shows it
/// (`check` as a [`Problem`](crate::Problem), `why` as a
/// [`WhyNot`](crate::conditions::WhyNot)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `INFRA` selects another name for the instance: a choice, not a problem.
    OtherName { selected: String },
    /// More than one package registers the name (SANDLOOM-B021); every one, sorted.
    DuplicateProvider { packages: Vec<String> },
    /// The name is a built-in driver's, and the package is not its owner (SANDLOOM-B021).
    BuiltinClaimed { owner: &'static str },
    /// The driver cannot be used (SANDLOOM-B022). A missing feature is
    /// [`MissingFeature`](Self::MissingFeature), which knows what the module asked for.
    Unusable(UnusableReason),
    /// A module requires a feature the driver does not declare, for the instance's options or,
    /// for a driver `INFRA` does not select, for any (SANDLOOM-B022).
    MissingFeature {
        feature: &'static str,
        module: &'static str,
    },
    /// The capability is experimental, in production, without the accepted risk
    /// (SANDLOOM-B023): judged once for the instance, it refuses every candidate.
    ExperimentalInProduction,
}

/// The verdict on one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Resolution selects it for the instance.
    Selected,
    /// Nothing refuses it, and `INFRA` does not select it (the instance is not configured):
    /// it would serve.
    Eligible,
    /// It does not serve the instance, for these reasons, in the order they were judged.
    Refused(Vec<Refusal>),
}

/// A linked driver of an instance's capability, judged for the instance.
pub(crate) struct CandidateVerdict {
    pub(crate) entry: &'static DriverEntry,
    /// Every feature it may declare (for some options); empty when asking panicked.
    pub(crate) supported: &'static [&'static str],
    /// The instance's options parsed, for the driver `INFRA` selects, when they parse;
    /// startup builds the driver with them.
    pub(crate) options: Option<ParsedOptions>,
    pub(crate) verdict: Verdict,
}

impl CandidateVerdict {
    /// Why it is refused; empty when it is not.
    pub(crate) fn refusals(&self) -> &[Refusal] {
        match &self.verdict {
            Verdict::Refused(refusals) => refusals,
            Verdict::Selected | Verdict::Eligible => &[],
        }
    }
}

/// What every candidate of one instance is judged against, read once for the instance.
pub(crate) struct InstanceRules<'a> {
    capability: &'a str,
    spec: Option<&'static CapabilitySpec>,
    /// The instance as `INFRA` configures it; `None` when it does not (`why` only).
    configured: Option<&'a InstanceConfig>,
    /// The modules that require the instance, sorted, each with the features it requires.
    pub(crate) required_by: Vec<(&'static str, Vec<&'static str>)>,
    /// The experimental rule, judged once: every candidate is refused when it holds.
    pub(crate) experimental_refused: bool,
}

impl<'a> InstanceRules<'a> {
    /// The rules for `capability.instance`, which `INFRA` configures as `configured` (if it
    /// does), under `config`, with the linked module `requirements`.
    pub(crate) fn new(
        config: &InfraConfig,
        requirements: &[Requirement],
        (capability, instance): (&'a str, &str),
        configured: Option<&'a InstanceConfig>,
        spec: Option<&'static CapabilitySpec>,
    ) -> Self {
        let mut required_by: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for requirement in requirements
            .iter()
            .filter(|r| r.capability() == capability && r.instance() == instance)
        {
            match required_by
                .iter_mut()
                .find(|(m, _)| *m == requirement.module())
            {
                Some((_, features)) => {
                    for feature in requirement.features() {
                        if !features.contains(feature) {
                            features.push(feature);
                        }
                    }
                }
                None => required_by.push((requirement.module(), requirement.features().to_vec())),
            }
        }
        required_by.sort_by_key(|(module, _)| *module);
        // With `accepted_risks` unreadable (reported already), whether the risk is accepted is
        // unknown: the instance is not refused for it on top.
        let experimental_refused = spec
            .is_some_and(|spec| spec.stability == Stability::Experimental)
            && config.environment() == Environment::Production
            && !config.accepts(EXPERIMENTAL_CAPABILITY_RISK)
            && !config.is_left_out("accepted_risks", None);
        Self {
            capability,
            spec,
            configured,
            required_by,
            experimental_refused,
        }
    }

    /// The verdict on `entry`, one of the linked drivers of the capability; `same_name` are the
    /// entries registering its name (itself included).
    pub(crate) fn judge(
        &self,
        entry: &'static DriverEntry,
        same_name: &[&'static DriverEntry],
    ) -> CandidateVerdict {
        let mut refusals = Vec::new();
        let selected = self.configured.filter(|c| c.driver == entry.name);
        if let Some(other) = self.configured.filter(|c| c.driver != entry.name) {
            refusals.push(Refusal::OtherName {
                selected: other.driver.clone(),
            });
        }
        if same_name.len() > 1 {
            refusals.push(Refusal::DuplicateProvider {
                packages: packages_of(same_name),
            });
        }
        if entry.package != BUILTIN_OWNER && is_builtin(self.capability, entry.name) {
            refusals.push(Refusal::BuiltinClaimed {
                owner: BUILTIN_OWNER,
            });
        }
        let (supported, options) = match self.spec {
            // Nothing else matters: no driver can serve the capability.
            Some(spec)
                if spec.package == KERNEL_PACKAGE
                    && WITHOUT_OPERATION_TRAIT.contains(&spec.name) =>
            {
                refusals.push(Refusal::Unusable(UnusableReason::NoOperationTrait));
                (&[][..], None)
            }
            spec => self.judge_driver(spec, entry, selected, &mut refusals),
        };
        if self.experimental_refused {
            refusals.push(Refusal::ExperimentalInProduction);
        }
        let verdict = match (refusals.is_empty(), selected, self.spec) {
            (false, _, _) => Verdict::Refused(refusals),
            // A driver is selected only for a capability known once.
            (true, Some(_), Some(_)) => Verdict::Selected,
            (true, _, _) => Verdict::Eligible,
        };
        CandidateVerdict {
            entry,
            supported,
            options,
            verdict,
        }
    }

    /// The rules on the driver itself: its contract, its options when `INFRA` selects it, the
    /// features it declares, and those modules require of the instance.
    fn judge_driver(
        &self,
        spec: Option<&'static CapabilitySpec>,
        entry: &'static DriverEntry,
        selected: Option<&InstanceConfig>,
        refusals: &mut Vec<Refusal>,
    ) -> (&'static [&'static str], Option<ParsedOptions>) {
        if let Some(spec) = spec
            && !contract_compatible(&entry.contract_version, &spec.contract_version)
        {
            refusals.push(Refusal::Unusable(UnusableReason::ContractVersion {
                driver: entry.contract_version.clone(),
                runtime: spec.contract_version.clone(),
                defined_by: spec.package,
            }));
        }
        let options = selected.and_then(|instance| match parse_options(entry, instance) {
            Ok(parsed) => Some(parsed),
            Err(reasons) => {
                refusals.extend(reasons.into_iter().map(Refusal::Unusable));
                None
            }
        });
        let supported = match call_driver("supported_features", entry.supported_features) {
            Ok(supported) => supported,
            Err(reason) => {
                refusals.push(Refusal::Unusable(reason));
                return (&[], options);
            }
        };
        let declared = options.as_ref().map(|o| o.features.as_slice());
        if let Some(spec) = spec {
            refusals.extend(
                undeclared_features(spec, supported, declared)
                    .into_iter()
                    .map(Refusal::Unusable),
            );
        }
        // The selected driver is judged with the instance's options (not at all when they do
        // not parse); any other one by what it supports for some options.
        let declared = match (selected, declared) {
            (Some(_), None) => return (supported, options),
            (Some(_), Some(declared)) => declared,
            (None, _) => supported,
        };
        for (module, features) in &self.required_by {
            for &feature in features {
                // A feature the capability does not have is the requirement's problem
                // (SANDLOOM-B024), not the driver's.
                let known = spec.is_none_or(|spec| spec.features.contains(&feature));
                if known && !declared.contains(&feature) {
                    refusals.push(Refusal::MissingFeature { feature, module });
                }
            }
        }
        (supported, options)
    }
}

/// The packages of `entries`, sorted.
pub(crate) fn packages_of(entries: &[&'static DriverEntry]) -> Vec<String> {
    let mut packages: Vec<String> = entries.iter().map(|e| e.package.to_owned()).collect();
    packages.sort();
    packages
}
