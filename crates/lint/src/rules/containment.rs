//! C004: a module depends on or uses `sandloom-driverkit`, a driver crate or a parent of one,
//! or a banned backend SDK — by its own name or through another member's re-exports
//! ([`reexport`]); or a crate declared a module registers drivers.

mod reexport;

use super::{Crate, Sink, names_of};
use crate::config::{CONFORMANCE, DRIVERKIT};
use crate::report::{Code, Violation};
use crate::roles::Role;
use crate::workspace::Workspace;

const HELP_DRIVERKIT: &str = "a module reaches infrastructure through `sandloom-sdk-infra` \
     (`Infra` and the capability keys); driver code belongs in a driver crate";
const HELP_CONFORMANCE: &str = "the conformance kits test drivers; a module tests against \
     fakes built with `Infra::builder()` (`sandloom-sdk-infra`)";
const HELP_DRIVER: &str = "depend on the capability instead (`sandloom-sdk-infra`, or the \
     contract crate that defines it): the application links drivers and INFRA selects them";
const HELP_SDK: &str = "ask `Infra` for the capability (cache, objectstore, notifier, \
     taskqueue, lock) and let a driver crate wrap the SDK";

/// Why a package is forbidden to modules, and what to do instead.
struct Forbidden {
    what: String,
    help: &'static str,
}

pub(super) fn check(
    workspace: &Workspace,
    crates: &[Crate<'_>],
    krate: &Crate<'_>,
    sink: &mut Sink<'_>,
) {
    if !krate.role.is_module() {
        return;
    }
    let member = krate.member;
    if krate.role.declared == Some(Role::Module) {
        for loc in &krate.facts.registrations {
            let location = sink.source_location(loc);
            sink.push(Violation {
                code: Code::C004,
                krate: member.name.clone(),
                location,
                message: format!(
                    "`{}` is declared a module, but registers a driver here",
                    member.name
                ),
                help: "move the driver into a driver crate (`role = \"driver\"`) that the \
                       application links; a module only uses capabilities"
                    .to_owned(),
            });
        }
    }
    for dep in member.deps.iter().filter(|d| d.kind.ships()) {
        if let Some(forbidden) = classify(workspace, crates, &dep.package) {
            let location = sink.dep_location(member, dep);
            sink.push(Violation {
                code: Code::C004,
                krate: member.name.clone(),
                location,
                message: format!("module `{}` depends on {}", member.name, forbidden.what),
                help: forbidden.help.to_owned(),
            });
        }
    }
    // Dev-dependencies are allowed (a module's tests may run it on a real driver), but their
    // names are still forbidden in shipped code, which is all the source scan reads.
    let mut helps = std::collections::HashMap::new();
    let names = names_of(member, &krate.facts, |package| {
        classify(workspace, crates, package).map(|f| {
            helps.insert(f.what.clone(), f.help);
            f.what
        })
    });
    for root in &krate.facts.roots {
        if let Some(what) = names.get(&root.name) {
            let location = sink.source_location(&root.loc);
            sink.push(Violation {
                code: Code::C004,
                krate: member.name.clone(),
                location,
                message: format!("module `{}` uses `{}` ({what})", member.name, root.name),
                help: helps.get(what).copied().unwrap_or(HELP_DRIVER).to_owned(),
            });
        }
    }
    // After the direct uses: at a position both report, the direct message wins.
    if let Some(origin) = workspace.index(&member.name) {
        reexport::check(workspace, crates, origin, sink);
    }
}

/// Whether a module may depend on `package`, and if not, why.
fn classify(workspace: &Workspace, crates: &[Crate<'_>], package: &str) -> Option<Forbidden> {
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
