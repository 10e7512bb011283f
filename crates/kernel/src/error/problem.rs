//! One thing that stops startup (or a clean shutdown), with its stable code, a description
//! and an action.

use std::fmt::{self, Write as _};

use super::reason::{ConflictKind, UnusableReason, conflict_action};
use crate::codes;
use crate::location::Location;
use crate::references::ReferenceReason;

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
        /// register drivers (their sources call `register_driver!`) and are not named in
        /// `link_drivers!`, as crate names (`my_driver_crate`), sorted. Those whose name
        /// mentions the driver or capability when there are any, else every such dependency.
        /// Empty when the dependencies' sources cannot be read (a deployed binary).
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
        /// Where the capability's name is written for the instance (`cache` in
        /// `[cache.default]`).
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
    /// SANDLOOM-B025: a secret reference in `INFRA` cannot be resolved.
    #[non_exhaustive]
    Reference {
        /// The capability of the instance whose option holds the reference.
        capability: String,
        /// That instance.
        instance: String,
        /// The option.
        option: String,
        /// The `secrets` instance it reads from, as written (`default` when it names none).
        store: String,
        /// The secret's name, as written (empty when none is).
        secret: String,
        /// Where the reference is written.
        location: Location,
        /// Why it cannot be resolved.
        reason: ReferenceReason,
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
            Self::Reference { .. } => codes::REFERENCE,
            Self::StopFailed { .. } => codes::STOP_FAILED,
        }
    }

    /// Where in `INFRA` the problem was found, when it carries the place itself: a key, a
    /// driver name, an instance's table, invalid options. A problem about an instance with no
    /// place of its own (a driver that failed to start, say) is placed by
    /// [`InfraConfig::problem_location`](crate::InfraConfig::problem_location), which knows
    /// where each instance is configured.
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem};
    ///
    /// let problem = Problem::config(Location::at("infra.toml", 4, 1), "unknown key `enviroment`", "fix it");
    /// assert_eq!(problem.location(), Some(&Location::at("infra.toml", 4, 1)));
    /// assert_eq!(Problem::NoRuntime.location(), None);
    /// ```
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::Config { location, .. }
            | Self::Reference { location, .. }
            | Self::NoDriver { location, .. }
            | Self::Experimental { location, .. }
            | Self::Unusable {
                reason: UnusableReason::Options { location, .. },
                ..
            } => Some(location),
            _ => None,
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
                        ". Dependencies of this application that register drivers but are not named in `link_drivers!`, so are not linked into the binary, and may provide it: {}",
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
            Self::Reference { .. } => crate::references::describe(self),
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
                        "`{capability}` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it and INFRA cannot use it; remove `[{capability}.{instance}]` from INFRA (it becomes usable when a Sandloom release publishes its operation trait and conformance kit)"
                    );
                }
                let crate_ident = |package: &str| package.replace('-', "_");
                if provided_by.is_none() && !candidates.is_empty() {
                    let which = match candidates.len() {
                        1 => format!("{} registers drivers, is not named there and may provide it", list_or_none(candidates)),
                        2 | 3 => format!("{} register drivers, are not named there and may provide it", list_or_none(candidates)),
                        n => format!("the {n} listed above register drivers, are not named there and may provide it"),
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
            // Configuring a reserved capability with no operation trait only meets B022 next.
            Self::NoInstance {
                capability,
                module,
                ..
            } if crate::specs::WITHOUT_OPERATION_TRAIT.contains(&capability.as_str()) => format!(
                "`{capability}` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it and INFRA cannot configure it. Remove the requirement from module `{module}`; `{capability}` becomes usable when a Sandloom release publishes its operation trait"
            ),
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
                crate::risk::EXPERIMENTAL_CAPABILITY_RISK
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
            Self::Reference { .. } => crate::references::act(self),
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
