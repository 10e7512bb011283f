//! Why a problem happened, where one code covers several causes: the reasons of a conflict
//! (SANDLOOM-B021) and of an unusable driver (SANDLOOM-B022), each with its description and
//! the action it calls for.

use std::time::Duration;

use semver::Version;

use super::attempts::StartAttempts;
use crate::contract_version::series;
use crate::location::Location;
use crate::options::OptionsError;
use crate::specs::KERNEL_PACKAGE;

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
    pub(super) fn describe(&self, capability: &str, name: &str, packages: &[String]) -> String {
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
    /// `workflow`, `search`): modules cannot call it, and no driver can serve it.
    NoOperationTrait,
    /// A reload built and started the new instance, and its health check answered unhealthy
    /// (or did not answer within `health_timeout_ms`): it never took traffic.
    #[non_exhaustive]
    Unhealthy {
        /// What the health check answered.
        health: String,
    },
    /// A reload would replace an instance whose running driver was made without a route (a
    /// test double building its entry by hand), so no handle could be switched to a new one.
    NotReplaceable,
}

impl UnusableReason {
    pub(crate) fn describe(&self, capability: &str) -> String {
        match self {
            Self::ContractVersion {
                driver,
                runtime,
                defined_by,
            } => {
                // Under 1.0 the rule surprises whoever reads versions as SemVer's spec does.
                let rule = if driver.major == 0 || runtime.major == 0 {
                    format!(
                        " (under 1.0 the leftmost non-zero component is the major: {} and {} differ)",
                        series(driver),
                        series(runtime)
                    )
                } else {
                    String::new()
                };
                format!(
                    "it implements contract {driver} of `{capability}`, and the contract linked into this binary (defined by package `{defined_by}`) is {runtime}: another major version{rule}"
                )
            }
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
            Self::Unhealthy { health } => format!(
                "the new instance started, and its health check answered: {health}; it took no traffic and was stopped"
            ),
            Self::NotReplaceable => "the running instance was made without a route, so a reload cannot switch its handles to a new one".to_owned(),
        }
    }

    pub(super) fn action(
        &self,
        capability: &str,
        instance: &str,
        driver: &str,
        package: &str,
    ) -> String {
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
            Self::Unhealthy { .. } => format!(
                "make the backend of `{capability}.{instance}` reachable and healthy (or fix its options), then reload again; the old instance keeps serving meanwhile"
            ),
            Self::NotReplaceable => format!(
                "restart the application to change `{capability}.{instance}`; drivers registered with `register_driver!` can always be replaced live"
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

/// What to do about a conflict (SANDLOOM-B021).
pub(super) fn conflict_action(
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
    let contract_behind = driver > runtime;
    let (driver, runtime) = (series(driver), series(runtime));
    if contract_behind {
        format!(
            "the contract is behind: upgrade {contract} to a version with contract {driver}, or use a version of `{driver_package}` written for contract {runtime}"
        )
    } else {
        format!(
            "the driver is behind: upgrade `{driver_package}` to a version written for contract {runtime} of `{capability}`, or use a version of {contract} with contract {driver}"
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
