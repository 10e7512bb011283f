//! Which packages a module may not depend on, and why: the verdict both C004 checks (direct
//! uses in [`super`], re-exports in [`super::reexport`]) ask for, in a file of its own so that
//! neither imports the other for it.

use crate::config::{CONFORMANCE, DRIVERKIT};
use crate::report::Role;
use crate::rules::krate::Crate;
use crate::workspace::Workspace;

const HELP_DRIVERKIT: &str = "a module reaches infrastructure through `sandloom-sdk-infra` \
     (`Infra` and the capability keys); driver code belongs in a driver crate";
const HELP_CONFORMANCE: &str = "the conformance kits test drivers; a module tests against \
     fakes built with `Infra::builder()` (`sandloom-sdk-infra`)";
pub(super) const HELP_DRIVER: &str = "depend on the capability instead (`sandloom-sdk-infra`, or the \
     contract crate that defines it): the application links drivers and INFRA selects them";
const HELP_SDK: &str = "ask `Infra` for the capability (cache, objectstore, notifier, \
     taskqueue, lock) and let a driver crate wrap the SDK";

/// Why a package is forbidden to modules, and what to do instead.
pub(super) struct Forbidden {
    pub(super) what: String,
    pub(super) help: &'static str,
}

/// Whether a module may depend on `package`, and if not, why.
pub(super) fn classify(
    workspace: &Workspace,
    crates: &[Crate<'_>],
    package: &str,
) -> Option<Forbidden> {
    let is_driver = |name: &str| {
        workspace.config.is_declared_driver(name)
            || workspace
                .index(name)
                .is_some_and(|i| crates[i].role.is(Role::Driver))
    };
    if package == DRIVERKIT {
        return Some(Forbidden {
            what: format!("`{DRIVERKIT}`, the driver authors' door"),
            help: HELP_DRIVERKIT,
        });
    }
    if package == CONFORMANCE {
        return Some(Forbidden {
            what: format!("`{CONFORMANCE}`, the drivers' conformance kits"),
            help: HELP_CONFORMANCE,
        });
    }
    if is_driver(package) {
        return Some(Forbidden {
            what: format!("`{package}`, a driver crate"),
            help: HELP_DRIVER,
        });
    }
    if workspace.config.is_banned_sdk(package) {
        return Some(Forbidden {
            what: format!("`{package}`, a banned backend SDK"),
            help: HELP_SDK,
        });
    }
    let member = workspace.member(package)?;
    let reached = workspace.reachable(member, |d| d.kind.ships());
    let (driver, (_, chain)) = reached
        .iter()
        .filter(|(name, _)| is_driver(name))
        .min_by_key(|(_, (_, chain))| chain.len())?;
    Some(Forbidden {
        what: format!(
            "`{package}`, a parent of the driver crate `{driver}` ({package} → {})",
            chain.join(" → ")
        ),
        help: HELP_DRIVER,
    })
}
