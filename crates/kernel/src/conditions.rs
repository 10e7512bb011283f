//! The condition report, like Spring Boot's: for one instance of `INFRA`, which linked drivers
//! could serve it, which one is selected, and why each other one is not; for an instance a
//! module requires and `INFRA` does not configure, which drivers would satisfy it.
//!
//! It shows the verdicts of the resolution the dry run ([`Kernel::check`](crate::Kernel::check))
//! makes, over the configuration, the linked drivers and capability specs, and the linked
//! module requirements: each rule is judged there once, so the report and `check` cannot
//! disagree, and this module only words the verdicts. Nothing is built or started.
//!
//! ```
//! use sandloom_kernel::conditions::ConditionReport;
//! use sandloom_kernel::InfraConfig;
//!
//! let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "infra.toml").unwrap();
//! let report = ConditionReport::evaluate(&config, &sandloom_kernel::link_drivers!(), "cache", "default");
//! assert_eq!(report.configured.as_deref(), Some("memory"));
//! // No driver crate is linked into this example: nothing can serve it, and check says why.
//! assert!(report.candidates.is_empty());
//! assert!(report.selected().is_none());
//! assert_eq!(report.problems[0].code(), "SANDLOOM-B020");
//! println!("{report}");
//! ```

use std::fmt;

use sandloom_sdk_infra::linked_requirements;
use semver::Version;

use crate::codes;
use crate::config::SecretReference;
use crate::config::{EXPERIMENTAL_CAPABILITY_RISK, Environment, InfraConfig, Location};
use crate::contract_version::series;
use crate::error::{Problem, UnusableReason};
use crate::link::LinkedDrivers;
use crate::registry::{self, CapabilitySpec, DriverEntry, Stability};
use crate::resolve::{CandidateVerdict, Inputs, Refusal, Verdict, resolve_for_report};
use crate::specs::WITHOUT_OPERATION_TRAIT;

/// Why a linked driver does not serve the instance, or could not.
///
/// ```
/// use sandloom_kernel::conditions::WhyNot;
///
/// let reason = WhyNot::OtherName { selected: "redis".into() };
/// assert_eq!(reason.code(), None);
/// assert_eq!(reason.to_string(), "INFRA selects `redis`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WhyNot {
    /// `INFRA` selects another driver name for the instance.
    OtherName {
        /// The name it selects.
        selected: String,
    },
    /// Another package registers the same name (SANDLOOM-B021): there is nothing to choose by.
    DuplicateProvider {
        /// Every package registering it, sorted.
        packages: Vec<String>,
    },
    /// The name is a built-in driver's, and this package is not its owner (SANDLOOM-B021).
    BuiltinClaimed {
        /// The package that owns the built-in names.
        owner: &'static str,
    },
    /// The driver was written against another major version of the contract (SANDLOOM-B022).
    ContractMajor {
        /// The version the driver was written against.
        driver: Version,
        /// The contract linked into the binary.
        runtime: Version,
        /// The package that defines the contract.
        defined_by: &'static str,
    },
    /// The capability has no operation trait yet, so no driver can serve it (SANDLOOM-B022).
    NoOperationTrait,
    /// The instance's options are not valid for this driver (SANDLOOM-B022).
    InvalidOptions {
        /// What is wrong, with the key and a suggestion when there is one.
        message: String,
    },
    /// A module requires a feature this driver does not declare (SANDLOOM-B022).
    MissingFeature {
        /// The feature.
        feature: &'static str,
        /// The module that requires it.
        module: &'static str,
        /// Whether the driver supports the feature with other options (its `features_for`
        /// does not give it for the options configured): changing options may be enough.
        with_other_options: bool,
    },
    /// The capability is experimental, `environment` is `production`, and the risk
    /// `experimental_capability` is not accepted (SANDLOOM-B023).
    ExperimentalInProduction,
    /// Asking the driver about itself (its features, its options) panicked (SANDLOOM-B022).
    Panicked {
        /// What it was asked: `supported_features` or `option parsing`.
        phase: &'static str,
        /// The panic message.
        message: String,
    },
    /// The driver reports a feature it may not: not among its `supported_features`, or not a
    /// feature of the capability at all (SANDLOOM-B022).
    UndeclaredFeature {
        /// The feature.
        feature: &'static str,
        /// Why it is refused.
        why: String,
    },
    /// The driver's options type accepts keys it does not know, so a misspelt option would be
    /// ignored (SANDLOOM-B022).
    AcceptsUnknownOptions,
    /// Any other reason the driver cannot be used, worded as startup words it (SANDLOOM-B022).
    /// Resolution builds and starts nothing, so today none reaches the report; a reason it
    /// gains later reads here instead of panicking.
    Unusable {
        /// The reason, as the startup report describes it.
        description: String,
    },
}

impl WhyNot {
    /// The code of the problem this reason is, when it is one; `None` for
    /// [`OtherName`](Self::OtherName), which is a choice, not a problem.
    ///
    /// ```
    /// use sandloom_kernel::conditions::WhyNot;
    /// assert_eq!(WhyNot::ExperimentalInProduction.code(), Some("SANDLOOM-B023"));
    /// ```
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::OtherName { .. } => None,
            Self::DuplicateProvider { .. } | Self::BuiltinClaimed { .. } => Some(codes::CONFLICT),
            Self::ContractMajor { .. }
            | Self::NoOperationTrait
            | Self::InvalidOptions { .. }
            | Self::MissingFeature { .. }
            | Self::Panicked { .. }
            | Self::UndeclaredFeature { .. }
            | Self::AcceptsUnknownOptions
            | Self::Unusable { .. } => Some(codes::UNUSABLE),
            Self::ExperimentalInProduction => Some(codes::EXPERIMENTAL),
        }
    }

    /// A stable lowercase name of the kind of reason, for tools (`other_name`,
    /// `duplicate_provider`, `builtin_claimed`, `contract_major`, `no_operation_trait`,
    /// `invalid_options`, `missing_feature`, `experimental_in_production`, `panicked`,
    /// `undeclared_feature`, `accepts_unknown_options`).
    ///
    /// ```
    /// use sandloom_kernel::conditions::WhyNot;
    /// assert_eq!(WhyNot::NoOperationTrait.kind(), "no_operation_trait");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Self::OtherName { .. } => "other_name",
            Self::DuplicateProvider { .. } => "duplicate_provider",
            Self::BuiltinClaimed { .. } => "builtin_claimed",
            Self::ContractMajor { .. } => "contract_major",
            Self::NoOperationTrait => "no_operation_trait",
            Self::InvalidOptions { .. } => "invalid_options",
            Self::MissingFeature { .. } => "missing_feature",
            Self::ExperimentalInProduction => "experimental_in_production",
            Self::Panicked { .. } => "panicked",
            Self::UndeclaredFeature { .. } => "undeclared_feature",
            Self::AcceptsUnknownOptions => "accepts_unknown_options",
            Self::Unusable { .. } => "unusable",
        }
    }
}

impl fmt::Display for WhyNot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OtherName { selected } => write!(f, "INFRA selects `{selected}`"),
            Self::DuplicateProvider { packages } => write!(
                f,
                "the name is registered by more than one package: {}",
                packages.join(", ")
            ),
            Self::BuiltinClaimed { owner } => {
                write!(f, "the name is built in: only `{owner}` may register it")
            }
            Self::ContractMajor {
                driver,
                runtime,
                defined_by,
            } => {
                write!(
                    f,
                    "written for contract {driver}, and the contract linked (defined by `{defined_by}`) is {runtime}: another major version"
                )?;
                if driver.major == 0 || runtime.major == 0 {
                    write!(
                        f,
                        " (under 1.0 the leftmost non-zero component is the major: {} and {} differ)",
                        series(driver),
                        series(runtime)
                    )?;
                }
                Ok(())
            }
            Self::NoOperationTrait => write!(
                f,
                "the capability has no operation trait yet, so no driver can serve it"
            ),
            Self::InvalidOptions { message } => write!(f, "invalid options: {message}"),
            Self::MissingFeature {
                feature,
                module,
                with_other_options: true,
            } => write!(
                f,
                "module `{module}` requires feature `{feature}`, which it does not declare for these options (it supports it with others)"
            ),
            Self::MissingFeature {
                feature, module, ..
            } => write!(
                f,
                "module `{module}` requires feature `{feature}`, which it does not support"
            ),
            Self::ExperimentalInProduction => write!(
                f,
                "the capability is experimental, and the environment is production without the accepted risk `{EXPERIMENTAL_CAPABILITY_RISK}`"
            ),
            Self::Panicked { phase, message } => write!(f, "it panicked during {phase}: {message}"),
            Self::UndeclaredFeature { feature, why } => {
                write!(f, "it reports feature `{feature}`, which {why}")
            }
            Self::AcceptsUnknownOptions => write!(
                f,
                "its options type accepts keys it does not know, so a misspelt option would be silently ignored"
            ),
            Self::Unusable { description } => f.write_str(description),
        }
    }
}

/// A linked driver of the instance's capability, and whether it serves the instance.
///
/// ```
/// use sandloom_kernel::conditions::Candidate;
///
/// fn verdict(candidate: &Candidate) -> String {
///     if candidate.selected {
///         format!("{} is selected", candidate.driver)
///     } else {
///         let reasons: Vec<String> = candidate.reasons.iter().map(ToString::to_string).collect();
///         format!("{} ({}): {}", candidate.driver, candidate.package, reasons.join("; "))
///     }
/// }
/// # let _ = verdict;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Candidate {
    /// The driver name.
    pub driver: &'static str,
    /// The package that registers it.
    pub package: &'static str,
    /// The contract version it was written against.
    pub contract_version: Version,
    /// Every feature it may declare (for some options).
    pub supported_features: Vec<&'static str>,
    /// Whether it is the driver resolution selects for the instance.
    pub selected: bool,
    /// Why it does not serve the instance (or, for an unconfigured instance, could not); empty
    /// for the selected driver and for one that would satisfy an unconfigured instance.
    pub reasons: Vec<WhyNot>,
}

/// A module that requires the instance, with the features it requires.
///
/// ```
/// use sandloom_kernel::conditions::RequiredBy;
///
/// fn describe(required: &RequiredBy) -> String {
///     format!("{} requires {:?}", required.module, required.features)
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequiredBy {
    /// The module's package.
    pub module: &'static str,
    /// The features it requires of the instance.
    pub features: Vec<&'static str>,
}

/// The condition report of one instance. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConditionReport {
    /// The capability (`cache`).
    pub capability: String,
    /// The instance (`default`).
    pub instance: String,
    /// The environment `INFRA` sets.
    pub environment: Environment,
    /// The capability's stability; `None` when no linked package defines the capability.
    pub stability: Option<Stability>,
    /// The driver name `INFRA` selects for the instance; `None` when it does not configure it.
    pub configured: Option<String>,
    /// Where `INFRA` selects the driver (`driver = "…"`), the place `configured` shows: the
    /// one SANDLOOM-B020 points at for the same key.
    pub location: Option<Location>,
    /// The instance's table could not be read (a SANDLOOM-B010 of the configuration): whether
    /// it is configured, and how, is unknown.
    pub left_out: bool,
    /// The modules that require the instance, sorted.
    pub required_by: Vec<RequiredBy>,
    /// Every linked driver of the capability, sorted by name then package.
    pub candidates: Vec<Candidate>,
    /// What the dry run reports about this instance (every code, with its action).
    pub problems: Vec<Problem>,
    /// The options `INFRA` writes as secret references, by option, sorted: shown as written,
    /// never read.
    pub references: Vec<(String, SecretReference)>,
}

impl ConditionReport {
    /// The report of `capability.instance` under `config`, with the drivers and module
    /// requirements linked into this binary (`linked` as the application's `link_drivers!`
    /// gave it, for the names of unlinked crates in SANDLOOM-B020).
    ///
    /// ```
    /// use sandloom_kernel::conditions::ConditionReport;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let report = ConditionReport::evaluate(&config, &sandloom_kernel::link_drivers!(), "lock", "default");
    /// assert_eq!(report.configured, None);
    /// assert!(report.required_by.is_empty()); // no module in this example requires it
    /// assert!(report.problems.is_empty());
    /// ```
    pub fn evaluate(
        config: &InfraConfig,
        linked: &LinkedDrivers,
        capability: &str,
        instance: &str,
    ) -> Self {
        Self::evaluate_in(
            config,
            linked,
            registry::drivers(),
            registry::capabilities(),
            capability,
            instance,
        )
    }

    fn evaluate_in(
        config: &InfraConfig,
        linked: &LinkedDrivers,
        drivers: &'static [DriverEntry],
        specs: &'static [CapabilitySpec],
        capability: &str,
        instance: &str,
    ) -> Self {
        let inputs = Inputs {
            config,
            drivers,
            specs,
            requirements: linked_requirements(),
            linked,
        };
        let (mut problems, verdicts) = resolve_for_report(&inputs, capability, instance);
        let configured = config.instance(capability, instance);
        if configured.is_some_and(|c| !c.references.is_empty()) {
            // What `check` reports about them, judged where `check` judges them.
            problems.extend(crate::references::judge(config, drivers));
            crate::config::order_by_location(&mut problems, config);
        }
        Self {
            capability: capability.to_owned(),
            instance: instance.to_owned(),
            environment: config.environment(),
            stability: specs
                .iter()
                .find(|spec| spec.name == capability)
                .map(|spec| spec.stability),
            configured: configured.map(|c| c.driver.clone()),
            location: configured.map(|c| c.driver_location.clone()),
            left_out: configured.is_none() && config.is_left_out(capability, Some(instance)),
            required_by: verdicts
                .required_by
                .into_iter()
                .map(|(module, features)| RequiredBy { module, features })
                .collect(),
            candidates: verdicts.candidates.iter().map(candidate).collect(),
            problems: problems
                .into_iter()
                .filter(|problem| concerns(problem, capability, instance, configured))
                .collect(),
            references: configured
                .map(|c| {
                    c.references()
                        .map(|(option, r)| (option.to_owned(), r.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The selected driver, when resolution selects one.
    ///
    /// ```
    /// use sandloom_kernel::conditions::ConditionReport;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let config = InfraConfig::embedded_defaults();
    /// let report = ConditionReport::evaluate(&config, &sandloom_kernel::link_drivers!(), "cache", "default");
    /// // With `sandloom_embedded` linked, this is `memory`; this example links no driver.
    /// assert!(report.selected().is_none());
    /// ```
    pub fn selected(&self) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.selected)
    }

    /// The linked drivers that would satisfy the instance if it were configured with them (with
    /// their default options): for an instance a module requires and `INFRA` does not
    /// configure, what to choose from.
    ///
    /// ```
    /// use sandloom_kernel::conditions::ConditionReport;
    /// use sandloom_kernel::InfraConfig;
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let report = ConditionReport::evaluate(&config, &sandloom_kernel::link_drivers!(), "cache", "sessions");
    /// assert!(report.satisfying().next().is_none()); // no driver is linked here
    /// ```
    pub fn satisfying(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| {
            c.reasons
                .iter()
                .all(|r| matches!(r, WhyNot::OtherName { .. }))
        })
    }
}

/// A verdict of resolution, as the report shows it.
fn candidate(verdict: &CandidateVerdict) -> Candidate {
    let entry = verdict.entry;
    Candidate {
        driver: entry.name,
        package: entry.package,
        contract_version: entry.contract_version.clone(),
        supported_features: verdict.supported.to_vec(),
        selected: verdict.verdict == Verdict::Selected,
        reasons: verdict
            .refusals()
            .iter()
            .map(|refusal| why_not(refusal, verdict.supported, entry.capability))
            .collect(),
    }
}

/// A refusal as the report words it; `supported` is what the driver supports for some options.
fn why_not(refusal: &Refusal, supported: &[&'static str], capability: &str) -> WhyNot {
    match refusal {
        Refusal::OtherName { selected } => WhyNot::OtherName {
            selected: selected.clone(),
        },
        Refusal::DuplicateProvider { packages } => WhyNot::DuplicateProvider {
            packages: packages.clone(),
        },
        Refusal::BuiltinClaimed { owner } => WhyNot::BuiltinClaimed { owner },
        Refusal::MissingFeature { feature, module } => WhyNot::MissingFeature {
            feature,
            module,
            with_other_options: supported.contains(feature),
        },
        Refusal::ExperimentalInProduction => WhyNot::ExperimentalInProduction,
        Refusal::Unusable(reason) => match reason {
            UnusableReason::ContractVersion {
                driver,
                runtime,
                defined_by,
            } => WhyNot::ContractMajor {
                driver: driver.clone(),
                runtime: runtime.clone(),
                defined_by,
            },
            UnusableReason::NoOperationTrait => WhyNot::NoOperationTrait,
            UnusableReason::Options { error, .. } => WhyNot::InvalidOptions {
                message: error.to_string(),
            },
            UnusableReason::UndeclaredFeature { feature, why } => WhyNot::UndeclaredFeature {
                feature,
                why: why.clone(),
            },
            UnusableReason::AcceptsUnknownOptions => WhyNot::AcceptsUnknownOptions,
            UnusableReason::Panicked { phase, message } => WhyNot::Panicked {
                phase,
                message: message.clone(),
            },
            other => WhyNot::Unusable {
                description: other.describe(capability),
            },
        },
    }
}

/// Whether `problem` is about the instance (or the name it selects).
fn concerns(
    problem: &Problem,
    capability: &str,
    instance: &str,
    configured: Option<&crate::config::InstanceConfig>,
) -> bool {
    match problem {
        Problem::NoDriver {
            capability: c,
            instance: i,
            ..
        }
        | Problem::NoInstance {
            capability: c,
            instance: i,
            ..
        }
        | Problem::Unusable {
            capability: c,
            instance: i,
            ..
        }
        | Problem::Experimental {
            capability: c,
            instance: i,
            ..
        }
        | Problem::Reference {
            capability: c,
            instance: i,
            ..
        } => c == capability && i == instance,
        Problem::Conflict {
            capability: c,
            name,
            ..
        } => c == capability && configured.is_some_and(|configured| &configured.driver == name),
        Problem::InvalidRequirement { capability: c, .. } => c == capability,
        _ => false,
    }
}

impl fmt::Display for ConditionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format!("{}.{}", self.capability, self.instance);
        let stability = match self.stability {
            // Its stability says nothing a user can act on: no driver can serve it at all.
            Some(_) if WITHOUT_OPERATION_TRAIT.contains(&self.capability.as_str()) => {
                "reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it".to_owned()
            }
            Some(stability) => stability.to_string(),
            None => "not defined by any linked package".to_owned(),
        };
        writeln!(
            f,
            "Why `{name}` ({} environment; `{}` is {stability}):",
            self.environment, self.capability
        )?;
        match (&self.configured, &self.location) {
            (Some(driver), Some(location)) => {
                writeln!(f, "  configured: driver = \"{driver}\" (at {location})")?;
            }
            (Some(driver), None) => writeln!(f, "  configured: driver = \"{driver}\"")?,
            (None, _) if self.left_out => writeln!(
                f,
                "  configured: unknown: its table could not be read (see SANDLOOM-B010 in `infra check`)"
            )?,
            (None, _) => writeln!(f, "  configured: no: INFRA has no `[{name}]`")?,
        }
        for (option, reference) in &self.references {
            writeln!(
                f,
                "  secret reference: {option} = {reference} (at {}; read at startup, never shown)",
                reference.location
            )?;
        }
        if self.required_by.is_empty() {
            writeln!(f, "  required by: no module")?;
        }
        for required in &self.required_by {
            let features = if required.features.is_empty() {
                String::new()
            } else {
                format!(" (features: {})", required.features.join(", "))
            };
            writeln!(f, "  required by: module `{}`{features}", required.module)?;
        }
        match self.selected() {
            Some(selected) => writeln!(
                f,
                "  selected: `{}` from `{}` (contract {})",
                selected.driver, selected.package, selected.contract_version
            )?,
            None => writeln!(f, "  selected: none")?,
        }
        if self.candidates.is_empty() {
            writeln!(f, "  candidates: no linked driver of `{}`", self.capability)?;
        } else {
            writeln!(f, "  candidates:")?;
        }
        for candidate in &self.candidates {
            let verdict = if candidate.selected {
                "selected"
            } else if self.configured.is_none() && candidate.reasons.is_empty() && !self.left_out {
                if self.required_by.is_empty() {
                    "could serve it"
                } else {
                    "would satisfy it"
                }
            } else if candidate.reasons.is_empty() {
                "usable"
            } else {
                "not selected"
            };
            writeln!(
                f,
                "    {} ({}, contract {}): {verdict}",
                candidate.driver, candidate.package, candidate.contract_version
            )?;
            for reason in &candidate.reasons {
                match reason.code() {
                    Some(code) => writeln!(f, "      - [{code}] {reason}")?,
                    None => writeln!(f, "      - {reason}")?,
                }
            }
        }
        if !self.problems.is_empty() {
            writeln!(f, "  problems (as `infra check` reports them):")?;
            for problem in &self.problems {
                writeln!(f, "    [{}] {}", problem.code(), problem.description())?;
                writeln!(f, "      Action: {}", problem.action())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{WhyNot, why_not};
    use crate::codes;
    use crate::error::UnusableReason;
    use crate::resolve::Refusal;

    #[test]
    fn a_reason_resolution_does_not_give_today_is_worded_not_a_panic() {
        let refusal = Refusal::Unusable(UnusableReason::BuildFailed {
            message: "cannot parse the certificate".to_owned(),
        });
        let reason = why_not(&refusal, &[], "cache");
        let WhyNot::Unusable { description } = &reason else {
            panic!("{reason:?}");
        };
        assert!(
            description.contains("cannot parse the certificate"),
            "{description}"
        );
        assert_eq!(reason.code(), Some(codes::UNUSABLE));
        assert_eq!(reason.to_string(), *description);
    }
}
