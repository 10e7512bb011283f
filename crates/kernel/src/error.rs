//! Coded startup problems, and the one error that lists them all.

use std::fmt::{self, Write as _};
use std::time::Duration;

use semver::Version;

use crate::codes;
use crate::config::{InfraConfig, Location};
use crate::options::OptionsError;
use crate::wait::StartAttempts;

/// Why two providers conflict (SANDLOOM-B021).
///
/// ```
/// use sandloom_kernel::{ConflictKind, Problem, StartupError};
///
/// /// One line per conflict, for an operator.
/// fn conflicts(err: &StartupError) -> Vec<String> {
///     err.problems()
///         .iter()
///         .filter_map(|problem| match problem {
///             Problem::Conflict { name, kind: ConflictKind::BuiltinClaimed { owner }, .. } => {
///                 Some(format!("`{name}` is built in; only {owner} may register it"))
///             }
///             Problem::Conflict { name, packages, .. } => {
///                 Some(format!("`{name}` is registered by {}", packages.join(" and ")))
///             }
///             _ => None,
///         })
///         .collect()
/// }
/// assert!(conflicts(&StartupError::new(vec![Problem::NoRuntime])).is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConflictKind {
    /// A name `INFRA` selects is registered by more than one package (or twice by one).
    SelectedTwice,
    /// A package other than the owner registers a built-in driver's name.
    BuiltinClaimed {
        /// The built-in's owner.
        owner: &'static str,
    },
    /// Two packages define a capability spec of the same name.
    CapabilityDefinedTwice,
}

impl ConflictKind {
    fn describe(&self, capability: &str, name: &str, packages: &[String]) -> String {
        match self {
            Self::SelectedTwice => format!(
                "driver `{capability}.{name}` is provided by more than one package: {}",
                packages.join(" and ")
            ),
            Self::BuiltinClaimed { owner } => format!(
                "`{capability}.{name}` is a built-in driver of `{owner}`, and {} also registers it",
                packages
                    .iter()
                    .filter(|p| p != owner)
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::CapabilityDefinedTwice => format!(
                "capability `{capability}` is defined by more than one package: {}",
                packages.join(" and ")
            ),
        }
    }
}

/// Why a selected driver cannot be used (SANDLOOM-B022).
///
/// ```
/// use sandloom_kernel::{Problem, UnusableReason};
///
/// /// Whether starting again later might succeed (a backend that was down), as opposed to a
/// /// problem of configuration or of the driver itself.
/// fn may_pass_on_retry(problem: &Problem) -> bool {
///     matches!(
///         problem,
///         Problem::Unusable {
///             reason: UnusableReason::StartFailed { .. } | UnusableReason::TimedOut { .. },
///             ..
///         }
///     )
/// }
/// assert!(!may_pass_on_retry(&Problem::NoRuntime));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnusableReason {
    /// The driver targets another major version of the contract than the one linked. Minor and
    /// patch differences are accepted both ways (see `CapabilitySpec::contract_version`).
    #[non_exhaustive]
    ContractVersion {
        /// The version the driver was written against.
        driver: Version,
        /// The version of the contract linked into this binary (the capability spec's).
        runtime: Version,
        /// The package that defines the contract (`CapabilitySpec::package`):
        /// `sandloom-kernel` for the built-in capabilities.
        defined_by: &'static str,
    },
    /// The options did not deserialize into the driver's options type.
    #[non_exhaustive]
    Options {
        /// What serde said, with path and suggestion.
        error: OptionsError,
        /// Where the failing key (or the instance) is configured.
        location: Location,
    },
    /// A module requires a feature the driver does not declare (for these options).
    #[non_exhaustive]
    MissingFeature {
        /// The feature.
        feature: String,
        /// The package that requires it.
        module: &'static str,
        /// What the driver declares.
        declared: Vec<&'static str>,
    },
    /// The driver reports a feature it may not: not among its `supported_features`, or not a
    /// feature of the capability at all.
    #[non_exhaustive]
    UndeclaredFeature {
        /// The feature.
        feature: &'static str,
        /// Why it is refused.
        why: String,
    },
    /// Construction returned an error.
    #[non_exhaustive]
    BuildFailed {
        /// The error, with its causes.
        message: String,
    },
    /// `start` returned an error: at once, or (with `start_wait_ms`) on every attempt until the
    /// wait was spent.
    #[non_exhaustive]
    StartFailed {
        /// The last attempt's error, with its causes.
        message: String,
        /// How many attempts, in how long, and whether the last error was transient.
        attempts: StartAttempts,
    },
    /// Construction or `start` panicked; the panic was caught.
    #[non_exhaustive]
    Panicked {
        /// `build` or `start`.
        phase: &'static str,
        /// The panic message.
        message: String,
    },
    /// The driver's options type accepts keys it does not know, so a misspelt option would be
    /// ignored: it must carry `#[serde(deny_unknown_fields)]`.
    AcceptsUnknownOptions,
    /// `start` did not finish within the start timeout, and was cancelled at an `await` (on
    /// every attempt, when `start_wait_ms` allowed more than one).
    #[non_exhaustive]
    TimedOut {
        /// The timeout.
        after: Duration,
        /// How many attempts, in how long.
        attempts: StartAttempts,
    },
    /// `start` overran the start timeout because it blocked its thread (one poll of its future
    /// ran past the deadline). A blocked thread cannot be cancelled, so startup waited for
    /// `start` to give the thread back (up to the stop timeout) and then stopped the driver; a
    /// `start` still running after that wait is stopped in the background once it ends.
    #[non_exhaustive]
    BlockedThread {
        /// The start timeout.
        timeout: Duration,
        /// How long `start` ran: until it ended, or until startup stopped waiting for it.
        elapsed: Duration,
        /// Whether `start` had ended when startup went on.
        ended: bool,
    },
    /// The capability is defined by Sandloom but has no operation trait yet (`graph_store`,
    /// `workflow`, `search`, `secrets`): modules cannot call it, and no driver can serve it.
    NoOperationTrait,
}

impl UnusableReason {
    fn describe(&self, capability: &str) -> String {
        match self {
            Self::ContractVersion {
                driver,
                runtime,
                defined_by,
            } => format!(
                "it implements contract {driver} of `{capability}`, and the contract linked into this binary (defined by package `{defined_by}`) is {runtime}: another major version"
            ),
            Self::Options { error, location } => {
                format!("invalid options at {location}: {error}")
            }
            Self::MissingFeature {
                feature,
                module,
                declared,
            } => format!(
                "module `{module}` requires feature `{feature}`, which it does not declare (declared: {})",
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            ),
            Self::UndeclaredFeature { feature, why } => {
                format!("it reports feature `{feature}`, which {why}")
            }
            Self::BuildFailed { message } => {
                format!("construction failed: {message}")
            }
            Self::StartFailed { message, attempts } => describe_start_failed(message, attempts),
            Self::Panicked { phase, message } => {
                format!("it panicked during {phase}: {message}")
            }
            Self::TimedOut { after, attempts } if attempts.count > 1 => format!(
                "start did not finish within the {} ms start timeout on any of {} attempts over {} ms ({})",
                after.as_millis(),
                attempts.count,
                attempts.spent.as_millis(),
                attempts.wait_setting()
            ),
            Self::TimedOut { after, .. } => {
                format!("start did not finish within {} ms", after.as_millis())
            }
            Self::BlockedThread {
                timeout,
                elapsed,
                ended: true,
            } => format!(
                "its `start` blocked its thread past the {} ms start timeout: it held the thread until {} ms. A blocked thread cannot be cancelled (on a single-threaded runtime the timeout cannot even fire), so startup waited for it, then stopped the driver",
                timeout.as_millis(),
                elapsed.as_millis()
            ),
            Self::BlockedThread {
                timeout,
                elapsed,
                ended: false,
            } => format!(
                "its `start` blocks its thread: it was still running after {} ms, over the {} ms start timeout; a blocked thread cannot be cancelled, so the driver will be stopped in the background when `start` returns",
                elapsed.as_millis(),
                timeout.as_millis()
            ),
            Self::NoOperationTrait => format!(
                "capability `{capability}` is defined by Sandloom but has no operation trait yet, so no driver can serve it: modules have no way to call it, and its operations cannot be checked"
            ),
            Self::AcceptsUnknownOptions => "its options type accepts keys it does not know, so a misspelt option would be silently ignored".to_owned(),
        }
    }

    fn action(&self, capability: &str, instance: &str, driver: &str, package: &str) -> String {
        match self {
            Self::ContractVersion {
                driver: d,
                runtime,
                defined_by,
            } => contract_version_action(capability, package, d, runtime, defined_by),
            Self::Options {
                error,
                location: Location::Variable(variable),
            } => options_variable_action(error, variable),
            Self::Options { error, .. } => match (error.unknown_field(), error.suggestion()) {
                (Some(field), Some(close)) => {
                    format!("rename `{field}` to `{close}` in `[{capability}.{instance}]`")
                }
                (Some(field), None) => format!(
                    "remove `{field}` from `[{capability}.{instance}]`; see the options of `{capability}.{driver}` in `{package}`'s documentation"
                ),
                _ => format!(
                    "fix the option in `[{capability}.{instance}]`; see the options of `{capability}.{driver}` in `{package}`'s documentation"
                ),
            },
            Self::MissingFeature { feature, .. } => format!(
                "select a `{capability}` driver that declares `{feature}` for `{capability}.{instance}`, or change its options if the feature depends on them"
            ),
            Self::AcceptsUnknownOptions => format!(
                "report this to the maintainers of `{package}`: its options type needs `#[serde(deny_unknown_fields)]`; meanwhile select another driver"
            ),
            Self::UndeclaredFeature { .. } => format!(
                "report this to the maintainers of `{package}`; meanwhile select another driver"
            ),
            Self::StartFailed { attempts, .. } if attempts.transient => {
                start_wait_action(capability, instance, attempts)
            }
            Self::BuildFailed { .. } | Self::StartFailed { .. } => format!(
                "fix the cause above (options, a backend that must be reachable) and start again, or select another driver for `{capability}.{instance}`"
            ),
            Self::Panicked { .. } => format!(
                "report the panic to the maintainers of `{package}`; meanwhile select another driver"
            ),
            Self::TimedOut { attempts, .. } if !attempts.wait.is_zero() => format!(
                "check that the backend of `{capability}.{instance}` is up and reachable from here; raise `start_timeout_ms` if one start needs longer, or `start_wait_ms` if the backend needs longer to come up"
            ),
            Self::TimedOut { .. } => format!(
                "check that the backend of `{capability}.{instance}` is reachable, or raise `start_timeout_ms` in INFRA"
            ),
            Self::BlockedThread { .. } => format!(
                "`start` of `{capability}.{driver}` must never block its thread: await async I/O, or move blocking work into `tokio::task::spawn_blocking`. If `{package}` is not yours, report this to its maintainers, and meanwhile select another driver for `{capability}.{instance}`"
            ),
            Self::NoOperationTrait => format!(
                "remove `[{capability}.{instance}]` from INFRA: `{capability}` becomes usable when Sandloom publishes its operation trait and conformance kit; `{package}` registers a driver for it anyway, so report this to its maintainers"
            ),
        }
    }
}

/// A failed `start`: the error alone when it was tried once with no reason to wait; otherwise
/// the attempts, the time spent and the last error.
fn describe_start_failed(message: &str, attempts: &StartAttempts) -> String {
    let StartAttempts {
        count,
        spent,
        wait,
        transient,
    } = *attempts;
    match (count, transient) {
        (1, false) if !wait.is_zero() => format!(
            "start failed: {message} (not retried: startup waits only on a transient error, `Unavailable` or `Timeout`, and this one is not marked as such)"
        ),
        (1, _) => format!("start failed: {message}"),
        (_, true) => format!(
            "start failed on each of {count} attempts over {} ms ({}); the last error: {message}",
            spent.as_millis(),
            attempts.wait_setting()
        ),
        (_, false) => format!(
            "start failed on attempt {count}, after {} ms of waiting for the backend, with an error that is not transient, so startup stopped waiting: {message}",
            spent.as_millis()
        ),
    }
}

/// What to do when a transient `start` failure outlasted the wait (or there was none).
fn start_wait_action(capability: &str, instance: &str, attempts: &StartAttempts) -> String {
    if attempts.wait.is_zero() {
        format!(
            "check that the backend of `{capability}.{instance}` is up and reachable from here; if it is still starting (compose, Kubernetes start order), set `start_wait_ms` in INFRA (at the top, or in `[{capability}.{instance}]`) to wait for it"
        )
    } else {
        format!(
            "check that the backend of `{capability}.{instance}` is up and reachable from here, or raise `start_wait_ms` (now {} ms) if it needs longer to come up",
            attempts.wait.as_millis()
        )
    }
}

/// The kernel's own package, which defines the built-in capabilities.
/// What to do about a conflict (SANDLOOM-B021).
fn conflict_action(
    kind: &ConflictKind,
    capability: &str,
    name: &str,
    packages: &[String],
) -> String {
    match kind {
        ConflictKind::SelectedTwice => format!(
            "remove one of the packages from the application; there is no override: a different behaviour needs a different name than `{capability}.{name}`"
        ),
        ConflictKind::BuiltinClaimed { .. } => format!(
            "rename the other package's driver (built-in names cannot be replaced) and select the new name in INFRA instead of `{name}`"
        ),
        ConflictKind::CapabilityDefinedTwice => {
            let others: Vec<String> = packages
                .iter()
                .filter(|p| *p != KERNEL_PACKAGE)
                .map(|p| format!("`{p}`"))
                .collect();
            if others.len() < packages.len() {
                // One definer is the runtime: its names are reserved, so the other
                // package must rename, and depending on only one is impossible.
                format!(
                    "`{capability}` is a name the Sandloom runtime defines and reserves: rename the capability that {} defines (its `define_capability!`), and the `[{capability}.*]` tables of INFRA that meant it",
                    others.join(" and ")
                )
            } else {
                format!(
                    "depend on only one of {}, or have one of them rename its capability",
                    others.join(" and ")
                )
            }
        }
    }
}

const KERNEL_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// Whom to upgrade when a driver and the linked contract differ in major version: the one that
/// is behind, named by package.
fn contract_version_action(
    capability: &str,
    driver_package: &str,
    driver: &Version,
    runtime: &Version,
    defined_by: &str,
) -> String {
    let contract = if defined_by == KERNEL_PACKAGE {
        format!("Sandloom (package `{defined_by}`, which defines `{capability}`)")
    } else {
        format!("`{defined_by}` (the package that defines `{capability}`)")
    };
    if driver.major > runtime.major {
        format!(
            "the contract is behind: upgrade {contract} to a version with contract {}.x, or use a version of `{driver_package}` written for contract {}.x",
            driver.major, runtime.major
        )
    } else {
        format!(
            "the driver is behind: upgrade `{driver_package}` to a version written for contract {}.x of `{capability}`, or use a version of {contract} with contract {}.x",
            runtime.major, driver.major
        )
    }
}

/// The action for invalid options set by an override variable: name the variable.
fn options_variable_action(error: &OptionsError, variable: &str) -> String {
    match (error.unknown_field(), error.suggestion()) {
        (Some(_), Some(close)) => {
            // The key is the last `__` segment of the variable; keep the rest as written.
            let renamed = match variable.rsplit_once("__") {
                Some((head, _)) => format!("{head}__{}", close.to_ascii_uppercase()),
                None => close.to_ascii_uppercase(),
            };
            format!("rename the environment variable `{variable}` to `{renamed}`")
        }
        (Some(_), None) => {
            format!("unset the environment variable `{variable}`: the driver has no such option")
        }
        _ => format!("fix the value of the environment variable `{variable}`, or unset it"),
    }
}

/// One thing that stops startup. Every problem has a stable [`code`](Problem::code), a
/// [`description`](Problem::description) and an [`action`](Problem::action).
///
/// ```
/// use sandloom_kernel::{Location, Problem};
/// let p = Problem::config(Location::at("infra.toml", 2, 1), "unknown top-level key `enviroment`", "did you mean `environment`?");
/// assert_eq!(p.code(), "SANDLOOM-B010");
/// assert!(p.to_string().starts_with("[SANDLOOM-B010] unknown top-level key"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// SANDLOOM-B001.
    NoRuntime,
    /// SANDLOOM-B010.
    #[non_exhaustive]
    Config {
        /// Where.
        location: Location,
        /// What is wrong.
        message: String,
        /// What to do.
        action: String,
    },
    /// SANDLOOM-B020: a selected driver name has no provider linked.
    #[non_exhaustive]
    NoDriver {
        /// The capability.
        capability: String,
        /// The instance that selects it.
        instance: String,
        /// The selected driver name.
        driver: String,
        /// Where `driver` is set.
        location: Location,
        /// The linked drivers of that capability, sorted.
        linked: Vec<String>,
        /// The package known to provide the name, when known.
        provided_by: Option<&'static str>,
        /// That package is a dependency of the application but was not linked.
        dependency_not_linked: bool,
        /// When no package is known to provide the name: the application's dependencies that
        /// are not named in `link_drivers!` and may provide it, as crate names
        /// (`my_driver_crate`), sorted. Those whose name mentions the driver or capability
        /// when there are any, else every such dependency.
        candidates: Vec<String>,
        /// The closest linked name, when one is close.
        suggestion: Option<String>,
    },
    /// SANDLOOM-B020: a module requires an instance `INFRA` does not configure.
    #[non_exhaustive]
    NoInstance {
        /// The capability.
        capability: String,
        /// The instance.
        instance: String,
        /// The module that requires it.
        module: &'static str,
        /// The configured instances of that capability, sorted.
        configured: Vec<String>,
    },
    /// SANDLOOM-B021.
    #[non_exhaustive]
    Conflict {
        /// The capability.
        capability: String,
        /// The driver name (or capability name, for a spec conflict).
        name: String,
        /// Every package involved, sorted.
        packages: Vec<String>,
        /// Why.
        kind: ConflictKind,
    },
    /// SANDLOOM-B022.
    #[non_exhaustive]
    Unusable {
        /// The capability.
        capability: String,
        /// The instance.
        instance: String,
        /// The driver name.
        driver: String,
        /// The driver's package.
        package: &'static str,
        /// Why.
        reason: UnusableReason,
    },
    /// SANDLOOM-B023.
    #[non_exhaustive]
    Experimental {
        /// The capability.
        capability: String,
        /// The instance.
        instance: String,
        /// Where it is configured.
        location: Location,
    },
    /// SANDLOOM-B024: a module requires a feature its capability does not define.
    #[non_exhaustive]
    InvalidRequirement {
        /// The capability.
        capability: String,
        /// The unknown feature.
        feature: String,
        /// The module that requires it.
        module: &'static str,
        /// The capability's features.
        known: Vec<&'static str>,
    },
    /// SANDLOOM-B030.
    #[non_exhaustive]
    StopFailed {
        /// The capability.
        capability: String,
        /// The instance.
        instance: String,
        /// The driver name.
        driver: String,
        /// What went wrong.
        reason: String,
    },
}

impl Problem {
    /// A SANDLOOM-B010 problem.
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem};
    ///
    /// let problem = Problem::config(
    ///     Location::variable("SANDLOOM__CACHE__DEFAULT__CAPACITY"),
    ///     "`capacity` must be a number",
    ///     "set it to a whole number of entries",
    /// );
    /// assert_eq!(problem.code(), "SANDLOOM-B010");
    /// assert_eq!(problem.action(), "set it to a whole number of entries");
    /// ```
    pub fn config(
        location: Location,
        message: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        Self::Config {
            location,
            message: message.into(),
            action: action.into(),
        }
    }

    /// The stable code, such as `SANDLOOM-B020`; see [`codes`].
    ///
    /// ```
    /// use sandloom_kernel::{codes, Problem};
    /// assert_eq!(Problem::NoRuntime.code(), codes::NO_RUNTIME);
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoRuntime => codes::NO_RUNTIME,
            Self::Config { .. } => codes::CONFIG,
            Self::NoDriver { .. } | Self::NoInstance { .. } => codes::NO_DRIVER,
            Self::Conflict { .. } => codes::CONFLICT,
            Self::Unusable { .. } => codes::UNUSABLE,
            Self::Experimental { .. } => codes::EXPERIMENTAL,
            Self::InvalidRequirement { .. } => codes::INVALID_REQUIREMENT,
            Self::StopFailed { .. } => codes::STOP_FAILED,
        }
    }

    /// What happened, with the names involved.
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem};
    ///
    /// let problem = Problem::config(Location::at("infra.toml", 4, 1), "unknown key `enviroment`", "fix it");
    /// assert_eq!(problem.description(), "unknown key `enviroment` (at infra.toml:4:1)");
    /// ```
    pub fn description(&self) -> String {
        match self {
            Self::NoRuntime => {
                "Sandloom was started outside a Tokio runtime, or on one built without timers"
                    .to_owned()
            }
            Self::Config {
                location, message, ..
            } => format!("{message} (at {location})"),
            Self::NoDriver {
                capability,
                instance,
                driver,
                location,
                linked,
                dependency_not_linked,
                provided_by,
                candidates,
                ..
            } => {
                let mut text = format!(
                    "no driver `{capability}.{driver}` is linked; `{capability}.{instance}` selects it (at {location}). Linked `{capability}` drivers: {}",
                    list_or_none(linked)
                );
                if let (true, Some(package)) = (dependency_not_linked, provided_by) {
                    let _ = write!(
                        text,
                        ". Package `{package}` provides it and is a dependency of this application, but no code names it, so it is not linked into the binary"
                    );
                } else if provided_by.is_none() && !candidates.is_empty() {
                    let _ = write!(
                        text,
                        ". Dependencies of this application that are not named in `link_drivers!`, so not linked into the binary, and may provide it: {}",
                        list_or_none(candidates)
                    );
                }
                text
            }
            Self::NoInstance {
                capability,
                instance,
                module,
                configured,
            } => format!(
                "module `{module}` requires `{capability}.{instance}`, which INFRA does not configure (configured `{capability}` instances: {})",
                list_or_none(configured)
            ),
            Self::Conflict {
                capability,
                name,
                packages,
                kind,
            } => kind.describe(capability, name, packages),
            Self::Unusable {
                capability,
                instance,
                driver,
                package,
                reason,
            } => {
                let head = format!(
                    "driver `{capability}.{driver}` (package `{package}`) for `{capability}.{instance}` cannot be used: "
                );
                head + &reason.describe(capability)
            }
            Self::Experimental {
                capability,
                instance,
                location,
            } => format!(
                "capability `{capability}` is experimental, and `{capability}.{instance}` is configured in production (at {location})"
            ),
            Self::InvalidRequirement {
                capability,
                feature,
                module,
                known,
            } => format!(
                "module `{module}` requires feature `{feature}` of `{capability}`, which `{capability}` does not define (its features: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            Self::StopFailed {
                capability,
                instance,
                driver,
                reason,
            } => format!(
                "driver `{capability}.{driver}` of `{capability}.{instance}` did not stop cleanly: {reason}"
            ),
        }
    }

    /// What to do about it.
    ///
    /// ```
    /// let action = sandloom_kernel::Problem::NoRuntime.action();
    /// assert!(action.contains("#[tokio::main]"));
    /// ```
    pub fn action(&self) -> String {
        match self {
            Self::NoRuntime => "call `start` from inside a Tokio runtime with timers enabled (`#[tokio::main]`, or a `Builder` with `enable_all()`)".to_owned(),
            Self::Config { action, .. } => action.clone(),
            Self::NoDriver {
                capability,
                instance,
                driver,
                provided_by,
                dependency_not_linked,
                candidates,
                suggestion,
                ..
            } => {
                if crate::specs::WITHOUT_OPERATION_TRAIT.contains(&capability.as_str()) {
                    // No crate can provide it, so pointing at dependencies would send people
                    // looking for one.
                    return format!(
                        "`{capability}` is defined by Sandloom but not public: it has no operation trait yet, so no driver can serve it; remove `[{capability}.{instance}]` from INFRA"
                    );
                }
                let crate_ident = |package: &str| package.replace('-', "_");
                if provided_by.is_none() && !candidates.is_empty() {
                    let which = match candidates.len() {
                        1 => format!("{} is not named there and may provide it", list_or_none(candidates)),
                        2 | 3 => format!("{} are not named there and may provide it", list_or_none(candidates)),
                        n => format!("the {n} listed above are not named there and may provide it"),
                    };
                    let link = format!(
                        "name the crate that provides `{capability}.{driver}` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, {which} (for example `sandloom::link_drivers!(…, {})`); if none does, add the crate that provides it with `cargo add` and name it there too",
                        candidates[0]
                    );
                    return match suggestion {
                        Some(close) => format!(
                            "did you mean `{close}`? Set `driver = \"{close}\"` in `[{capability}.{instance}]`. Otherwise {link}"
                        ),
                        None => link,
                    };
                }
                match (provided_by, dependency_not_linked, suggestion) {
                    (Some(package), true, _) => format!(
                        "link it: add `{}` to the application's `sandloom::link_drivers!(…)` call",
                        crate_ident(package)
                    ),
                    (Some(package), false, _) => format!(
                        "add the package that provides it: `cargo add {package}`, then link it with `sandloom::link_drivers!({})` in the application",
                        crate_ident(package)
                    ),
                    (None, _, Some(close)) => format!(
                        "did you mean `{close}`? Set `driver = \"{close}\"` in `[{capability}.{instance}]`, or add and link the crate that provides `{capability}.{driver}`"
                    ),
                    (None, _, None) => format!(
                        "add the crate that provides `{capability}.{driver}` as a dependency and name it in `sandloom::link_drivers!(…)`, or select one of the linked drivers"
                    ),
                }
            }
            Self::NoInstance {
                capability,
                instance,
                ..
            } => format!(
                "configure it: add `[{capability}.{instance}]` with `driver = \"…\"` to INFRA"
            ),
            Self::Conflict {
                kind,
                capability,
                name,
                packages,
            } => conflict_action(kind, capability, name, packages),
            Self::Unusable {
                capability,
                instance,
                driver,
                package,
                reason,
            } => reason.action(capability, instance, driver, package),
            Self::Experimental { .. } => format!(
                "accept the risk with `accepted_risks = [\"{}\"]` at the top of INFRA, or remove the instance from the production configuration",
                crate::config::EXPERIMENTAL_CAPABILITY_RISK
            ),
            Self::InvalidRequirement {
                feature,
                known,
                module,
                ..
            } => match crate::suggest::closest(feature, known.iter().copied()) {
                Some(close) => {
                    format!("did you mean `{close}`? Fix the `requires!` of module `{module}`")
                }
                None => format!("remove `{feature}` from the `requires!` of module `{module}`"),
            },
            Self::StopFailed { .. } => {
                "check the backend for resources left behind (connections, locks)".to_owned()
            }
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {}\n    Action: {}",
            self.code(),
            self.description(),
            self.action()
        )
    }
}

impl std::error::Error for Problem {}

/// Startup refused (or a dry-run check failed, or `INFRA` could not be read): every problem
/// found, in a stable order.
///
/// Problems come ordered by where they are configured (file, line, column; then override
/// variables), and those with no place in `INFRA` after them, in a stable order.
///
/// ```
/// use sandloom_kernel::{InfraConfig, StartupError};
/// let err: StartupError = InfraConfig::from_toml_str("[cache", "infra.toml").unwrap_err();
/// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
/// println!("{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupError {
    problems: Vec<Problem>,
    phase: Phase,
}

/// What found the problems: it decides the heading of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `Kernel::start` (or anything an application does on the way to it).
    Start,
    /// `Kernel::check`, a dry run: nothing was refused, nothing started.
    Check,
    /// Reading `INFRA` failed as a whole (an unreadable file, not UTF-8, not TOML).
    Read,
}

impl StartupError {
    /// An error of these problems (for tests of code that reports startup errors).
    ///
    /// ```
    /// use sandloom_kernel::{Problem, StartupError};
    ///
    /// let err = StartupError::new(vec![Problem::NoRuntime]);
    /// assert!(err.to_string().starts_with("Sandloom refused to start: 1 problem found."));
    /// ```
    pub fn new(problems: Vec<Problem>) -> Self {
        Self {
            problems,
            phase: Phase::Start,
        }
    }

    /// The problems a dry run found.
    pub(crate) fn check(problems: Vec<Problem>) -> Self {
        Self {
            problems,
            phase: Phase::Check,
        }
    }

    /// `INFRA` could not be read at all.
    pub(crate) fn read(problems: Vec<Problem>) -> Self {
        Self {
            problems,
            phase: Phase::Read,
        }
    }

    /// Every problem.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("stop_timeout_ms = \"soon\"", "infra.toml").unwrap();
    /// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap_err();
    /// for problem in err.problems() {
    ///     eprintln!("{}: {}\n  -> {}", problem.code(), problem.description(), problem.action());
    /// }
    /// assert_eq!(err.problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The code of every problem, in order.
    ///
    /// ```
    /// use sandloom_kernel::{Problem, StartupError};
    /// assert_eq!(StartupError::new(vec![Problem::NoRuntime]).codes(), ["SANDLOOM-B001"]);
    /// ```
    pub fn codes(&self) -> Vec<&'static str> {
        self.problems.iter().map(Problem::code).collect()
    }
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        let found = format!("{count} problem{} found", if count == 1 { "" } else { "s" });
        let heading = match self.phase {
            Phase::Start => format!("Sandloom refused to start: {found}."),
            Phase::Check => {
                format!("Sandloom check (a dry run; nothing was started): {found}.")
            }
            Phase::Read => format!("Sandloom cannot read INFRA: {found}."),
        };
        write_problems(f, &heading, &self.problems)
    }
}

fn write_problems(f: &mut fmt::Formatter<'_>, heading: &str, problems: &[Problem]) -> fmt::Result {
    writeln!(f, "{heading}")?;
    for (index, problem) in problems.iter().enumerate() {
        write!(
            f,
            "\n{}. [{}]\n    Description: {}\n    Action: {}\n",
            index + 1,
            problem.code(),
            problem.description(),
            problem.action()
        )?;
    }
    Ok(())
}

/// Order `problems` by where they are configured: positions in a source by origin, line and
/// column (a whole file before its positions), then override variables by name, then
/// configuration given in code, then problems with no place in `INFRA`. The sort is stable, so
/// problems at one place, and those with no place, keep the order they were found in.
///
/// A problem about an instance that carries no location of its own (a driver that failed to
/// start, say) is placed where the instance is configured.
pub(crate) fn order_by_location(problems: &mut [Problem], config: &InfraConfig) {
    problems.sort_by(|a, b| place(a, config).cmp(&place(b, config)));
}

fn place<'a>(problem: &'a Problem, config: &'a InfraConfig) -> (u8, &'a str, usize, usize) {
    let instance_location = |capability: &str, instance: &str| {
        config.instance(capability, instance).map(|i| &i.location)
    };
    let location = match problem {
        Problem::Config { location, .. }
        | Problem::NoDriver { location, .. }
        | Problem::Experimental { location, .. }
        | Problem::Unusable {
            reason: UnusableReason::Options { location, .. },
            ..
        } => Some(location),
        Problem::Unusable {
            capability,
            instance,
            ..
        }
        | Problem::StopFailed {
            capability,
            instance,
            ..
        } => instance_location(capability, instance),
        Problem::Conflict {
            capability,
            name,
            kind: ConflictKind::SelectedTwice,
            ..
        } => config
            .instances()
            .find(|i| &i.capability == capability && &i.driver == name)
            .map(|i| &i.driver_location),
        _ => None,
    };
    match location {
        Some(Location::Source {
            origin,
            line,
            column,
        }) => (0, origin, *line, *column),
        Some(Location::File(origin)) => (0, origin, 0, 0),
        Some(Location::Variable(name)) => (1, name, 0, 0),
        Some(Location::Code) => (2, "", 0, 0),
        None => (3, "", 0, 0),
    }
}

impl std::error::Error for StartupError {}

/// Shutdown finished, but some drivers did not stop cleanly (SANDLOOM-B030). Every other driver
/// was still stopped.
///
/// ```
/// # async fn example(running: sandloom_kernel::Running) {
/// if let Err(err) = running.shutdown().await {
///     assert!(err.codes().iter().all(|code| *code == "SANDLOOM-B030"));
///     eprintln!("{err}"); // "Sandloom did not shut down cleanly: 1 problem found. …"
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownError {
    problems: Vec<Problem>,
}

impl ShutdownError {
    /// An error of these problems (for tests of code that reports shutdown errors).
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem, ShutdownError};
    ///
    /// let problem = Problem::config(Location::Code, "example", "none");
    /// let err = ShutdownError::new(vec![problem]);
    /// assert!(err.to_string().starts_with("Sandloom did not shut down cleanly: 1 problem found."));
    /// ```
    pub fn new(problems: Vec<Problem>) -> Self {
        Self { problems }
    }

    /// Every problem.
    ///
    /// ```
    /// use sandloom_kernel::{Problem, ShutdownError};
    ///
    /// fn failed_instances(err: &ShutdownError) -> Vec<String> {
    ///     err.problems()
    ///         .iter()
    ///         .filter_map(|problem| match problem {
    ///             Problem::StopFailed { capability, instance, .. } => Some(format!("{capability}.{instance}")),
    ///             _ => None,
    ///         })
    ///         .collect()
    /// }
    /// assert!(failed_instances(&ShutdownError::new(Vec::new())).is_empty());
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The code of every problem, in order.
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem, ShutdownError};
    /// let err = ShutdownError::new(vec![Problem::config(Location::Code, "example", "none")]);
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// ```
    pub fn codes(&self) -> Vec<&'static str> {
        self.problems.iter().map(Problem::code).collect()
    }
}

impl fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        let heading = format!(
            "Sandloom did not shut down cleanly: {count} problem{} found.",
            if count == 1 { "" } else { "s" }
        );
        write_problems(f, &heading, &self.problems)
    }
}

impl std::error::Error for ShutdownError {}
