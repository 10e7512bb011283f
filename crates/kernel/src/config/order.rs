//! Problems in the order of the `INFRA` they concern.
//!
//! Here, not beside `Problem`: placing a problem needs the configuration (where each instance
//! is configured), and problems must not depend on `config`.

use super::{InfraConfig, Location};
use crate::error::{ConflictKind, Problem, UnusableReason};

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
