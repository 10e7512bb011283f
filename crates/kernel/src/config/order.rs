//! Problems placed in the `INFRA` they concern, and ordered by that place.
//!
//! Here, not beside `Problem`: placing a problem needs the configuration (where each instance
//! is configured), and problems must not depend on `config`.

use super::{InfraConfig, Location};
use crate::error::{ConflictKind, Problem, UnusableReason};

impl InfraConfig {
    /// Where in this `INFRA` `problem` is: its own [location](Problem::location), else where
    /// the instance it concerns is configured, at the token the problem is about (the driver's
    /// name for a driver at another contract version, a name two packages provide; the table
    /// for a driver that failed to start); `None` for a problem with no place in `INFRA` (a module's
    /// requirement, a conflict between packages no instance selects). The one way to place a
    /// problem: `check` orders problems by it, and the command line shows it.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel, Location};
    ///
    /// let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "infra.toml").unwrap();
    /// // No driver crate is linked into this example: SANDLOOM-B020, at the driver's name.
    /// let err = Kernel::new(config.clone(), sandloom_kernel::link_drivers!()).check().unwrap_err();
    /// assert_eq!(config.problem_location(&err.problems()[0]), Some(&Location::at("infra.toml", 2, 1)));
    /// ```
    pub fn problem_location<'a>(&'a self, problem: &'a Problem) -> Option<&'a Location> {
        if let Some(location) = problem.location() {
            return Some(location);
        }
        match problem {
            // At the token the reason is about: the driver's name for what is wrong with the
            // driver, the capability's for a capability no driver can serve, else the table.
            Problem::Unusable {
                capability,
                instance,
                reason,
                ..
            } => self.instance(capability, instance).map(|i| match reason {
                UnusableReason::ContractVersion { .. }
                | UnusableReason::MissingFeature { .. }
                | UnusableReason::UndeclaredFeature { .. }
                | UnusableReason::AcceptsUnknownOptions => &i.driver_location,
                UnusableReason::NoOperationTrait => &i.capability_location,
                _ => &i.location,
            }),
            Problem::StopFailed {
                capability,
                instance,
                ..
            } => self.instance(capability, instance).map(|i| &i.location),
            // A built-in name claimed, or a name two packages provide: where INFRA selects it.
            Problem::Conflict {
                capability,
                name,
                kind: ConflictKind::SelectedTwice | ConflictKind::BuiltinClaimed { .. },
                ..
            } => self
                .instances()
                .find(|i| &i.capability == capability && &i.driver == name)
                .map(|i| &i.driver_location),
            _ => None,
        }
    }
}

/// Order `problems` by where they are configured ([`InfraConfig::problem_location`]):
/// positions in a source by origin, line and column (a whole file before its positions), then
/// override variables by name, then configuration given in code, then problems with no place
/// in `INFRA`. The sort is stable, so problems at one place, and those with no place, keep the
/// order they were found in.
pub(crate) fn order_by_location(problems: &mut [Problem], config: &InfraConfig) {
    problems.sort_by(|a, b| place(a, config).cmp(&place(b, config)));
}

fn place<'a>(problem: &'a Problem, config: &'a InfraConfig) -> (u8, &'a str, usize, usize) {
    match config.problem_location(problem) {
        Some(Location::Source {
            origin,
            line,
            column,
        }) => (0, &**origin, *line, *column),
        Some(Location::File(origin)) => (0, &**origin, 0, 0),
        Some(Location::Variable(name)) => (1, name, 0, 0),
        Some(Location::Code) => (2, "", 0, 0),
        None => (3, "", 0, 0),
    }
}
