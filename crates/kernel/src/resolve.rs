//! From `INFRA` and the linked slices to a plan of drivers to build, or every problem found.
//!
//! Resolution constructs nothing: it deserializes options and asks for features, both of which
//! are declared on the driver's type. `check` is resolution alone.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use sandloom_sdk_infra::Requirement;
use semver::Version;

use crate::config::order_by_location;
use crate::config::{EXPERIMENTAL_CAPABILITY_RISK, Environment, InfraConfig, InstanceConfig};
use crate::construct;
use crate::error::{ConflictKind, Problem, UnusableReason};
use crate::known::{BUILTIN_DRIVERS, BUILTIN_OWNER, is_builtin, provider_of};
use crate::link::LinkedDrivers;
use crate::panic_message;
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions, Stability};
use crate::specs::{KERNEL_PACKAGE, WITHOUT_OPERATION_TRAIT};
use crate::suggest::closest;

/// What resolution selected for one instance.
pub(crate) struct PlannedInstance<'a> {
    /// Which instance: its names, all that startup needs once its options are parsed.
    pub(crate) config: InstanceNames<'a>,
    pub(crate) spec: &'static CapabilitySpec,
    pub(crate) entry: &'static DriverEntry,
    pub(crate) options: ParsedOptions,
}

/// The names of a configured instance, borrowed from the configuration: copying them (or the
/// whole `InstanceConfig`, options and locations included) for each instance was a measurable
/// part of a resolution, for values only an error or the report needs owned.
#[derive(Clone, Copy)]
pub(crate) struct InstanceNames<'a> {
    pub(crate) capability: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) driver: &'a str,
    /// `telemetry` of the instance's table (what its gate is built with).
    pub(crate) telemetry: bool,
}

impl<'a> InstanceNames<'a> {
    fn of(instance: &'a InstanceConfig) -> Self {
        Self {
            capability: &instance.capability,
            instance: &instance.instance,
            driver: &instance.driver,
            telemetry: instance.telemetry(),
        }
    }
}

/// Everything resolution reads.
pub(crate) struct Inputs<'a> {
    pub(crate) config: &'a InfraConfig,
    pub(crate) drivers: &'static [DriverEntry],
    pub(crate) specs: &'static [CapabilitySpec],
    pub(crate) requirements: &'a [Requirement],
    pub(crate) linked: &'a LinkedDrivers,
}

/// Resolve every instance the configuration could read; the problems it could not read are
/// reported with the others, all ordered by location.
pub(crate) fn resolve<'a>(inputs: &Inputs<'a>) -> Result<Vec<PlannedInstance<'a>>, Vec<Problem>> {
    let config = inputs.config;
    let mut problems = config.problems.clone();

    let Scan {
        providers,
        claimed_builtins,
    } = scan(inputs, &mut problems);

    let mut planned = Vec::with_capacity(config.instances().size_hint().0);
    for (index, instance) in config.instances().enumerate() {
        let Some(spec) = find_spec(inputs, &instance.capability, &mut problems, instance) else {
            continue;
        };
        // With `accepted_risks` unreadable (reported already), whether the risk is accepted is
        // unknown: no B023 on top.
        if spec.stability == Stability::Experimental
            && config.environment() == Environment::Production
            && !config.accepts(EXPERIMENTAL_CAPABILITY_RISK)
            && !config.is_left_out("accepted_risks", None)
        {
            problems.push(Problem::Experimental {
                capability: instance.capability.clone(),
                instance: instance.instance.clone(),
                location: instance.location.clone(),
            });
        }
        if claimed_builtins
            .iter()
            .any(|&(c, d)| c == instance.capability && d == instance.driver)
        {
            continue; // already reported as a built-in claim
        }
        let mut found = providers
            .iter()
            .filter(|&&(i, _)| i == index)
            .map(|&(_, entry)| entry);
        let entry = match (found.next(), found.next()) {
            (None, _) => {
                problems.push(no_driver(inputs, instance));
                continue;
            }
            (Some(entry), None) => entry,
            (Some(first), Some(second)) => {
                let mut packages: Vec<String> = [first, second]
                    .into_iter()
                    .chain(found)
                    .map(|e| e.package.to_owned())
                    .collect();
                packages.sort();
                problems.push(Problem::Conflict {
                    capability: instance.capability.clone(),
                    name: instance.driver.clone(),
                    packages,
                    kind: ConflictKind::SelectedTwice,
                });
                continue;
            }
        };
        if spec.package == KERNEL_PACKAGE && WITHOUT_OPERATION_TRAIT.contains(&spec.name) {
            problems.push(unusable(
                &InstanceNames::of(instance),
                entry,
                UnusableReason::NoOperationTrait,
            ));
            continue;
        }
        match check_entry(spec, entry, instance) {
            Ok(options) => planned.push(PlannedInstance {
                config: InstanceNames::of(instance),
                spec,
                entry,
                options,
            }),
            Err(reasons) => problems.extend(
                reasons
                    .into_iter()
                    .map(|reason| unusable(&InstanceNames::of(instance), entry, reason)),
            ),
        }
    }

    check_requirements(inputs, &planned, &mut problems);
    if problems.is_empty() {
        Ok(planned)
    } else {
        order_by_location(&mut problems, config);
        Err(problems)
    }
}

/// What the pass over the linked entries found.
struct Scan {
    /// A provider of each instance's driver name, with the index of the instance in
    /// `InfraConfig::instances`.
    providers: Vec<(usize, &'static DriverEntry)>,
    /// Built-in names another package claims, each reported once in `problems`.
    claimed_builtins: Vec<(&'static str, &'static str)>,
}

/// One pass over every linked entry: the few selected names collect their providers, and any
/// claim on a built-in name by another package is a conflict whether selected or not.
///
/// Only an entry named like a selected or a built-in driver can matter, and nearly all are not:
/// the pass tells them apart by the length of their name, which reads no string, so it costs
/// less than a bare scan comparing every entry with the selected names, and allocates nothing
/// for an entry that does not matter (`BENCHMARKS.md`).
fn scan(inputs: &Inputs<'_>, problems: &mut Vec<Problem>) -> Scan {
    let selected: Vec<(&str, &str)> = inputs
        .config
        .instances()
        .map(|i| (i.capability.as_str(), i.driver.as_str()))
        .collect();
    let lengths = NameLengths::of(selected.iter().chain(BUILTIN_DRIVERS).map(|&(_, d)| d));
    let mut providers: Vec<(usize, &'static DriverEntry)> = Vec::new();
    let mut claimed_builtins: Vec<(&'static str, &'static str)> = Vec::new();
    let mut entries = inputs.drivers.iter();
    // `find` keeps the walk over the entries that do not matter a loop of a few instructions.
    while let Some(entry) = entries.find(|entry| lengths.may_be(entry.name)) {
        if is_builtin(entry.capability, entry.name) && entry.package != BUILTIN_OWNER {
            let problem = builtin_claim(inputs.drivers, entry);
            if !problems.contains(&problem) {
                problems.push(problem);
            }
            claimed_builtins.push((entry.capability, entry.name));
        }
        for (index, &(capability, driver)) in selected.iter().enumerate() {
            if entry.name == driver && entry.capability == capability {
                providers.push((index, entry));
            }
        }
    }
    Scan {
        providers,
        claimed_builtins,
    }
}

/// The lengths of a few names modulo 64, as a bit set: a name whose length is not in it is none
/// of them. Testing a name is a shift and a mask of its length, reading no string; a name that
/// passes (one of as many lengths as there are names) is compared in full.
struct NameLengths(u64);

impl NameLengths {
    fn bit(name: &str) -> u64 {
        1 << (name.len() % 64)
    }

    fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        Self(names.into_iter().fold(0, |set, name| set | Self::bit(name)))
    }

    /// Whether `name` may be one of the names.
    fn may_be(&self, name: &str) -> bool {
        self.0 & Self::bit(name) != 0
    }
}

fn find_spec(
    inputs: &Inputs<'_>,
    capability: &str,
    problems: &mut Vec<Problem>,
    instance: &InstanceConfig,
) -> Option<&'static CapabilitySpec> {
    let mut matching = inputs.specs.iter().filter(|spec| spec.name == capability);
    let first = matching.next();
    let Some(spec) = first else {
        let mut names: Vec<&str> = inputs.specs.iter().map(|spec| spec.name).collect();
        names.sort_unstable();
        names.dedup();
        let hint = closest(capability, names.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        problems.push(Problem::config(
            instance.location.clone(),
            format!("unknown capability `{capability}`{hint}"),
            format!(
                "known capabilities are {}; a third-party capability is known once the crate defining it is linked",
                names.join(", ")
            ),
        ));
        return None;
    };
    let others: Vec<&CapabilitySpec> = matching.collect();
    if others.is_empty() {
        return Some(spec);
    }
    let mut packages: Vec<String> = std::iter::once(spec)
        .chain(others)
        .map(|s| s.package.to_owned())
        .collect();
    packages.sort();
    let problem = Problem::Conflict {
        capability: capability.to_owned(),
        name: capability.to_owned(),
        packages,
        kind: ConflictKind::CapabilityDefinedTwice,
    };
    if !problems.contains(&problem) {
        problems.push(problem);
    }
    None
}

fn builtin_claim(drivers: &'static [DriverEntry], claimer: &DriverEntry) -> Problem {
    let mut packages: Vec<String> = drivers
        .iter()
        .filter(|e| e.capability == claimer.capability && e.name == claimer.name)
        .map(|e| e.package.to_owned())
        .collect();
    if !packages.iter().any(|p| p == BUILTIN_OWNER) {
        packages.push(BUILTIN_OWNER.to_owned());
    }
    packages.sort();
    packages.dedup();
    Problem::Conflict {
        capability: claimer.capability.to_owned(),
        name: claimer.name.to_owned(),
        packages,
        kind: ConflictKind::BuiltinClaimed {
            owner: BUILTIN_OWNER,
        },
    }
}

fn no_driver(inputs: &Inputs<'_>, instance: &InstanceConfig) -> Problem {
    let mut linked: Vec<String> = inputs
        .drivers
        .iter()
        .filter(|e| e.capability == instance.capability)
        .map(|e| e.name.to_owned())
        .collect();
    linked.sort();
    linked.dedup();
    let provided_by = provider_of(&instance.capability, &instance.driver);
    let dependency_not_linked = provided_by.is_some_and(|package| {
        !inputs.linked.links(package) && inputs.linked.is_dependency(package)
    });
    let suggestion =
        closest(&instance.driver, linked.iter().map(String::as_str)).map(str::to_owned);
    let candidates = if provided_by.is_some() {
        Vec::new()
    } else {
        candidates(inputs, instance)
    };
    Problem::NoDriver {
        capability: instance.capability.clone(),
        instance: instance.instance.clone(),
        driver: instance.driver.clone(),
        location: instance.driver_location.clone(),
        linked,
        provided_by,
        dependency_not_linked,
        candidates,
        suggestion,
    }
}

/// The application's dependencies that may provide `instance`'s driver, whose provider no one
/// knows: those not named in `link_drivers!` and not known to provide none. Known to provide
/// none are Sandloom's crates other than drivers, general-purpose crates of the ecosystem (no
/// driver crate is named like them), packages linked already (their drivers or capabilities
/// are in the binary) and modules (they declare requirements). Of the rest, those whose name
/// mentions the driver or the capability when there are any, else all of them.
fn candidates(inputs: &Inputs<'_>, instance: &InstanceConfig) -> Vec<String> {
    const NOT_DRIVERS: &[&str] = &[
        "sandloom",
        "sandloom-kernel",
        "sandloom-sdk-infra",
        "sandloom-driverkit",
    ];
    /// Prefixes of ecosystem crates that are never driver crates.
    const GENERAL_PURPOSE: &[&str] = &[
        "anyhow",
        "async-trait",
        "bytes",
        "chrono",
        "clap",
        "criterion",
        "env_logger",
        "futures",
        "insta",
        "jsonschema",
        "linkme",
        "log",
        "once_cell",
        "pretty_assertions",
        "proptest",
        "rand",
        "regex",
        "semver",
        "serde",
        "tempfile",
        "thiserror",
        "time",
        "tokio",
        "toml",
        "tower",
        "tracing",
        "trybuild",
        "url",
        "uuid",
    ];
    let general = |package: &str| {
        GENERAL_PURPOSE.iter().any(|prefix| {
            package == *prefix
                || package
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with(['-', '_']))
        })
    };
    let linked = inputs.linked;
    let mut unlinked: Vec<String> = linked
        .dependencies()
        .into_iter()
        .filter(|(_, package)| {
            !NOT_DRIVERS.contains(&package.as_str())
                && !general(package)
                && *package != linked.application()
                && !inputs.drivers.iter().any(|e| e.package == package)
                && !inputs.specs.iter().any(|s| s.package == package)
                && !inputs.requirements.iter().any(|r| r.module() == package)
        })
        .map(|(name, _)| name.replace('-', "_"))
        .filter(|name| !linked.crates().contains(&name.as_str()))
        .collect();
    unlinked.sort();
    unlinked.dedup();
    let words = |name: &str| name.to_ascii_lowercase().replace('-', "_");
    let (driver, capability) = (words(&instance.driver), words(&instance.capability));
    let named: Vec<String> = unlinked
        .iter()
        .filter(|name| name.contains(&driver) || name.contains(&capability))
        .cloned()
        .collect();
    if named.is_empty() { unlinked } else { named }
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

/// A driver written against contract `driver` is accepted with the linked contract `runtime`
/// when both have the same major version (ADR-0011, decision 5: only another major is refused).
/// Minor and patch differences are accepted in both directions, and under 1.0 the major is
/// still the major: 0.2 and 0.1 are compatible, 1.x and 0.x are not.
pub(crate) fn contract_compatible(driver: &Version, runtime: &Version) -> bool {
    driver.major == runtime.major
}

fn check_entry(
    spec: &CapabilitySpec,
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, Vec<UnusableReason>> {
    let mut reasons = Vec::new();
    if !contract_compatible(&entry.contract_version, &spec.contract_version) {
        reasons.push(UnusableReason::ContractVersion {
            driver: entry.contract_version.clone(),
            runtime: spec.contract_version.clone(),
            defined_by: spec.package,
        });
    }
    let parsed = match parse_options(entry, instance) {
        Ok(parsed) => Some(parsed),
        Err(reason) => {
            reasons.push(reason);
            None
        }
    };
    let supported = match guarded("supported_features", entry.supported_features) {
        Ok(supported) => supported,
        Err(reason) => {
            reasons.push(reason);
            return Err(reasons);
        }
    };
    let declared = parsed
        .as_ref()
        .map_or(&[][..], |parsed| &parsed.features[..]);
    reasons.extend(construct::refused_features(spec, supported, declared));
    match parsed {
        Some(parsed) if reasons.is_empty() => Ok(parsed),
        _ => Err(reasons),
    }
}

/// Deserialize the instance's options, catching panics, letting environment overrides be
/// strings where the driver wants strings, and refusing types that accept unknown fields.
fn parse_options(
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, UnusableReason> {
    // Copied only when an override has to be made a string, which is rare.
    let mut options = Cow::Borrowed(&instance.options);
    let parsed = loop {
        match guarded("option parsing", || (entry.parse_options)(&options))? {
            Ok(parsed) => break parsed,
            Err(error) => {
                // `SANDLOOM__…__PASSWORD=123456` reads as an integer; a string field wants text.
                let key = error.key_path().into_iter().next();
                if let Some((key, raw)) = key.and_then(|k| instance.env_strings.get_key_value(&k))
                    && !options.is_str(key)
                {
                    options.to_mut().set_str(key, raw);
                    continue;
                }
                let key = error.key_path();
                let location = key.first().map_or_else(
                    || instance.location.clone(),
                    |k| instance.option_location(k).clone(),
                );
                return Err(UnusableReason::Options { error, location });
            }
        }
    };
    if guarded("option parsing", || (entry.accepts_unknown_keys)(&options))? {
        return Err(UnusableReason::AcceptsUnknownOptions);
    }
    Ok(parsed)
}

/// Call driver code, turning a panic into a reason the instance is unusable.
fn guarded<T>(phase: &'static str, call: impl FnOnce() -> T) -> Result<T, UnusableReason> {
    catch_unwind(AssertUnwindSafe(call)).map_err(|payload| UnusableReason::Panicked {
        phase,
        message: panic_message(payload.as_ref()),
    })
}

fn check_requirements(
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
            } else if !plan.options.features.contains(feature) {
                problems.push(unusable(
                    &plan.config,
                    plan.entry,
                    UnusableReason::MissingFeature {
                        feature: (*feature).to_owned(),
                        module: requirement.module(),
                        declared: plan.options.features.clone(),
                    },
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use semver::Version;

    use super::{Inputs, contract_compatible, resolve};
    use crate::config::InfraConfig;
    use crate::error::{Problem, UnusableReason};
    use crate::link::LinkedDrivers;
    use crate::options::{OptionsError, RawOptions, accepts_unknown_keys};
    use crate::registry::{
        BoxError, BuildContext, BuiltDriver, CapabilitySpec, DriverEntry, ParsedOptions, Stability,
        capabilities,
    };

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct ProbeOptions {
        capacity: Option<u64>,
    }

    fn no_features() -> &'static [&'static str] {
        &[]
    }

    fn no_schema() -> Option<String> {
        None
    }

    fn parse(raw: &RawOptions) -> Result<ParsedOptions, OptionsError> {
        let options: ProbeOptions = raw.deserialize()?;
        Ok(ParsedOptions {
            value: Box::new(options),
            features: Vec::new(),
        })
    }

    fn build(_: ParsedOptions, _: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
        Err("resolution builds nothing".into())
    }

    /// A hand-made entry, as driverkit's `register_driver!` would make it.
    fn entry(
        capability: &'static str,
        name: &'static str,
        package: &'static str,
        version: &str,
    ) -> DriverEntry {
        DriverEntry {
            capability,
            name,
            package,
            contract_version: Version::parse(version).unwrap(),
            supported_features: no_features,
            parse_options: parse,
            accepts_unknown_keys: accepts_unknown_keys::<ProbeOptions>,
            options_schema: no_schema,
            build,
        }
    }

    fn spec(name: &'static str, package: &'static str, version: &str) -> CapabilitySpec {
        CapabilitySpec {
            name,
            stability: Stability::Stable,
            contract_version: Version::parse(version).unwrap(),
            required_operations: &["query"],
            features: &[],
            package,
        }
    }

    fn leak<T>(items: Vec<T>) -> &'static [T] {
        Box::leak(items.into_boxed_slice())
    }

    /// Resolve `config` against `drivers` and the kernel's own specs plus `specs`.
    fn problems(
        config: &InfraConfig,
        drivers: Vec<DriverEntry>,
        specs: Vec<CapabilitySpec>,
        linked: &LinkedDrivers,
    ) -> Vec<Problem> {
        let specs: Vec<CapabilitySpec> = capabilities()
            .iter()
            .map(|s| CapabilitySpec {
                name: s.name,
                stability: s.stability,
                contract_version: s.contract_version.clone(),
                required_operations: s.required_operations,
                features: s.features,
                package: s.package,
            })
            .chain(specs)
            .collect();
        match resolve(&Inputs {
            config,
            drivers: leak(drivers),
            specs: leak(specs),
            requirements: &[],
            linked,
        }) {
            Ok(_) => Vec::new(),
            Err(problems) => problems,
        }
    }

    fn config(text: &str) -> InfraConfig {
        InfraConfig::from_toml_str(text, "infra.toml").unwrap()
    }

    #[test]
    fn only_another_major_is_refused() {
        let v = |s: &str| Version::parse(s).unwrap();
        for (driver, runtime) in [
            ("1.0.0", "1.0.0"),
            ("0.1.1", "0.1.0"),
            ("0.1.0", "0.1.1"),
            ("1.4.0", "1.3.0"),
            ("1.0.0", "1.3.0"),
            ("0.2.0", "0.1.0"),
            ("0.1.0", "0.2.0"),
        ] {
            assert!(
                contract_compatible(&v(driver), &v(runtime)),
                "driver {driver} with contract {runtime} is the same major: accepted"
            );
        }
        for (driver, runtime) in [
            ("2.0.0", "1.3.0"),
            ("1.3.0", "2.0.0"),
            ("1.0.0", "0.9.0"),
            ("0.9.0", "1.0.0"),
        ] {
            assert!(
                !contract_compatible(&v(driver), &v(runtime)),
                "driver {driver} with contract {runtime} is another major: refused"
            );
        }
    }

    #[test]
    fn minor_and_patch_differences_resolve() {
        let config =
            config("[fulltext.default]\ndriver = \"tantivy\"\n[cache.default]\ndriver = \"probe\"");
        let found = problems(
            &config,
            vec![
                entry("fulltext", "tantivy", "fulltext-tantivy", "0.1.1"),
                entry("cache", "probe", "probe-cache", "1.4.0"),
            ],
            vec![spec("fulltext", "fulltext-contracts", "0.1.0")],
            &crate::link_drivers!(),
        );
        assert!(found.is_empty(), "{found:#?}");
    }

    fn contract_action(
        driver_version: &str,
        spec_package: &'static str,
        capability: &'static str,
    ) -> (String, String) {
        let config = config(&format!("[{capability}.default]\ndriver = \"tantivy\""));
        let specs = if capability == "cache" {
            Vec::new()
        } else {
            vec![spec(capability, spec_package, "1.2.0")]
        };
        let found = problems(
            &config,
            vec![entry(
                capability,
                "tantivy",
                "fulltext-tantivy",
                driver_version,
            )],
            specs,
            &crate::link_drivers!(),
        );
        let [problem] = found.as_slice() else {
            panic!("{found:#?}")
        };
        assert!(
            matches!(
                problem,
                Problem::Unusable {
                    reason: UnusableReason::ContractVersion { .. },
                    ..
                }
            ),
            "{problem}"
        );
        (problem.description(), problem.action())
    }

    #[test]
    fn another_major_names_the_contract_package_and_whom_to_upgrade() {
        // A third-party contract that is behind the driver: upgrade the contract package.
        let (description, action) = contract_action("2.0.0", "fulltext-contracts", "fulltext");
        assert!(
            description.contains("defined by package `fulltext-contracts`"),
            "{description}"
        );
        assert_eq!(
            action,
            "the contract is behind: upgrade `fulltext-contracts` (the package that defines `fulltext`) to a version with contract 2.x, or use a version of `fulltext-tantivy` written for contract 1.x"
        );
        assert!(!action.contains("Sandloom"), "{action}");

        // A driver behind a third-party contract: upgrade the driver crate.
        let (_, action) = contract_action("0.3.0", "fulltext-contracts", "fulltext");
        assert_eq!(
            action,
            "the driver is behind: upgrade `fulltext-tantivy` to a version written for contract 1.x of `fulltext`, or use a version of `fulltext-contracts` (the package that defines `fulltext`) with contract 0.x"
        );

        // The kernel's own contract: upgrade Sandloom.
        let (_, action) = contract_action("2.0.0", "sandloom-kernel", "cache");
        assert_eq!(
            action,
            "the contract is behind: upgrade Sandloom (package `sandloom-kernel`, which defines `cache`) to a version with contract 2.x, or use a version of `fulltext-tantivy` written for contract 1.x"
        );
    }

    #[test]
    fn a_misspelt_override_names_the_variable_to_rename() {
        let action_for = |variable: &str, value: &str| {
            let overridden = config("[cache.default]\ndriver = \"probe\"")
                .with_overrides([(variable.to_owned(), value.to_owned())])
                .unwrap();
            let found = problems(
                &overridden,
                vec![entry("cache", "probe", "probe-cache", "1.0.0")],
                vec![],
                &crate::link_drivers!(),
            );
            let [problem] = found.as_slice() else {
                panic!("{found:#?}")
            };
            problem.action()
        };
        assert_eq!(
            action_for("SANDLOOM__CACHE__DEFAULT__CAPACTIY", "5"),
            "rename the environment variable `SANDLOOM__CACHE__DEFAULT__CAPACTIY` to `SANDLOOM__CACHE__DEFAULT__CAPACITY`"
        );
        assert_eq!(
            action_for("SANDLOOM__CACHE__DEFAULT__COLOUR", "5"),
            "unset the environment variable `SANDLOOM__CACHE__DEFAULT__COLOUR`: the driver has no such option"
        );
        assert_eq!(
            action_for("SANDLOOM__CACHE__DEFAULT__CAPACITY", "many"),
            "fix the value of the environment variable `SANDLOOM__CACHE__DEFAULT__CAPACITY`, or unset it"
        );
    }

    /// An application's manifest, as `link_drivers!` embeds it.
    const SHOP: &str = r#"
        [package]
        name = "shop"

        [dependencies]
        sandloom = "0.1"
        fulltext-tantivy = "1"
        acme-drivers = "1"
        serde = { version = "1", features = ["derive"] }
        tokio = "1"

        [target.'cfg(unix)'.dependencies]
        maps-tools = "1"

        [dev-dependencies]
        mail = { package = "acme-mail", version = "1" }
    "#;

    fn no_driver(text: &str, linked: &[&'static str]) -> Problem {
        let linked = LinkedDrivers::__new(leak(linked.to_vec()), SHOP, "shop");
        let found = problems(
            &config(text),
            vec![],
            vec![
                spec("fulltext", "fulltext-contracts", "1.0.0"),
                spec("geo", "geo-contracts", "1.0.0"),
            ],
            &linked,
        );
        let [problem @ Problem::NoDriver { .. }] = found.as_slice() else {
            panic!("{found:#?}")
        };
        problem.clone()
    }

    #[test]
    fn an_unknown_driver_names_the_unlinked_dependencies_that_may_provide_it() {
        // None is named like `osm` or `routing`: every unlinked dependency that may hold a
        // driver is a candidate (not sandloom, not serde or tokio), under the name code uses.
        let problem = no_driver("[geo.routing]\ndriver = \"osm\"", &[]);
        let Problem::NoDriver { candidates, .. } = &problem else {
            unreachable!()
        };
        assert_eq!(
            candidates,
            &["acme_drivers", "fulltext_tantivy", "mail", "maps_tools"]
        );
        assert!(
            problem.description().ends_with(
                "Dependencies of this application that are not named in `link_drivers!`, so not linked into the binary, and may provide it: `acme_drivers`, `fulltext_tantivy`, `mail`, `maps_tools`"
            ),
            "{problem}"
        );
        assert_eq!(
            problem.action(),
            "name the crate that provides `geo.osm` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, the 4 listed above are not named there and may provide it (for example `sandloom::link_drivers!(…, acme_drivers)`); if none does, add the crate that provides it with `cargo add` and name it there too"
        );

        // A crate named in `link_drivers!` is linked: no candidate.
        let problem = no_driver("[geo.routing]\ndriver = \"osm\"", &["acme_drivers", "mail"]);
        let Problem::NoDriver { candidates, .. } = &problem else {
            unreachable!()
        };
        assert_eq!(candidates, &["fulltext_tantivy", "maps_tools"]);
        assert!(
            problem.action().contains(
                "of its dependencies, `fulltext_tantivy`, `maps_tools` are not named there and may provide it"
            ),
            "{problem}"
        );

        // A dependency named like the capability or the driver is the one named.
        let problem = no_driver("[fulltext.default]\ndriver = \"elastic\"", &[]);
        let Problem::NoDriver { candidates, .. } = &problem else {
            unreachable!()
        };
        assert_eq!(candidates, &["fulltext_tantivy"]);
        assert_eq!(
            problem.action(),
            "name the crate that provides `fulltext.elastic` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, `fulltext_tantivy` is not named there and may provide it (for example `sandloom::link_drivers!(…, fulltext_tantivy)`); if none does, add the crate that provides it with `cargo add` and name it there too"
        );
    }

    #[test]
    fn a_driver_for_a_capability_without_an_operation_trait_is_refused() {
        for capability in ["graph_store", "workflow", "search", "secrets"] {
            let configured = config(&format!("[{capability}.default]\ndriver = \"rogue\""));
            let found = problems(
                &configured,
                vec![entry(capability, "rogue", "rogue-driver", "0.1.0")],
                vec![],
                &crate::link_drivers!(),
            );
            let [problem] = found.as_slice() else {
                panic!("{found:#?}")
            };
            assert_eq!(problem.code(), "SANDLOOM-B022");
            assert!(
                matches!(
                    problem,
                    Problem::Unusable {
                        reason: UnusableReason::NoOperationTrait,
                        ..
                    }
                ),
                "{problem}"
            );
            assert!(
                problem.description().ends_with(&format!(
                    "cannot be used: capability `{capability}` is defined by Sandloom but has no operation trait yet, so no driver can serve it: modules have no way to call it, and its operations cannot be checked"
                )),
                "{problem}"
            );
            assert!(
                problem
                    .action()
                    .starts_with(&format!("remove `[{capability}.default]` from INFRA")),
                "{problem}"
            );
        }
    }

    #[test]
    fn every_problem_is_reported_at_once_ordered_by_location() {
        let text = "environment = \"production\"\n\
                    [lock.default]\n\
                    driver = \"memory\"\n\
                    [cache.default]\n\
                    driver = \"probe\"\n\
                    capacity = 18446744073709551616\n\
                    [cache.other]\n\
                    driver = \"probe\"\n\
                    capacty = 3\n\
                    [notifier.default]\n\
                    level = \"info\"\n";
        let found = problems(
            &config(text),
            vec![entry("cache", "probe", "probe-cache", "1.0.0")],
            vec![],
            &crate::link_drivers!(),
        );
        let summary: Vec<(&str, String)> = found
            .iter()
            .map(|p| {
                let description = p.description();
                let at = description
                    .split_once("(at ")
                    .and_then(|(_, rest)| rest.split(')').next())
                    .unwrap_or_default()
                    .to_owned();
                (p.code(), at)
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("SANDLOOM-B023", "infra.toml:2:7".to_owned()),
                ("SANDLOOM-B020", "infra.toml:3:1".to_owned()),
                ("SANDLOOM-B010", "infra.toml:6:12".to_owned()),
                ("SANDLOOM-B022", String::new()),
                ("SANDLOOM-B010", "infra.toml:10:11".to_owned()),
            ],
            "{found:#?}"
        );
        assert!(
            found[3]
                .description()
                .contains("invalid options at infra.toml:9:1"),
            "{}",
            found[3]
        );
    }
}
