//! The rules, one file each, run over every member; what they share is in [`krate`] and
//! [`crate::sink`], which import no rule.

mod allow;
mod containment;
mod escape;
mod krate;
mod layering;
mod options;
mod resolve;
mod secret_names;

use crate::error::LintError;
use crate::report::Report;
use crate::roles;
use crate::sink::Sink;
use crate::source::{self, Facts};
use crate::workspace::{Member, Workspace};
use krate::Crate;

/// Read every member's source, give each a role, and run every rule.
pub(crate) fn run(workspace: &Workspace) -> Result<Report, LintError> {
    let facts = scan_all(&workspace.members)?;
    let mut sink = Sink::new(workspace);
    let crates: Vec<Crate<'_>> = workspace
        .members
        .iter()
        .zip(facts)
        .map(|(member, facts)| {
            let role = roles::assign(member, &facts, &mut sink);
            Crate {
                member,
                facts,
                role,
            }
        })
        .collect();
    layering::validate(workspace, &crates)?;
    for krate in &crates {
        containment::check(workspace, &crates, krate, &mut sink);
        layering::check(workspace, krate, &mut sink);
        options::check(krate, &mut sink);
        escape::check(krate, &mut sink);
    }
    let (violations, allowed) = allow::apply(workspace, sink.finish());
    Ok(Report {
        workspace_root: workspace.root.clone(),
        crates: crates.iter().map(|c| c.role.summary.clone()).collect(),
        violations,
        allowed,
    })
}

/// Parse members on as many threads as there are cores (two on CI).
fn scan_all(members: &[Member]) -> Result<Vec<Facts>, LintError> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = members.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = members
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|m| source::scan(&m.dir, &m.roots))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        let mut all = Vec::with_capacity(members.len());
        for handle in handles {
            match handle.join() {
                Ok(part) => all.extend(part?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(all)
    })
}
