//! C004: a module depends on or uses `sandloom-driverkit`, a driver crate or a parent of one,
//! or a banned backend SDK — by its own name or through another member's re-exports
//! ([`reexport`]); or a crate declared a module registers drivers.

mod forbidden;
mod reexport;

use crate::report::{Code, Role, Violation};
use crate::rules::krate::{Crate, names_of};
use crate::sink::Sink;
use crate::workspace::Workspace;
use forbidden::{HELP_DRIVER, classify};

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
