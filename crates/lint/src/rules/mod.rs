//! The rules, one file each, and the sink they report into.

mod allow;
mod containment;
mod escape;
mod layering;
mod options;
mod resolve;

use std::collections::{HashMap, HashSet};

use crate::error::LintError;
use crate::manifest::Manifest;
use crate::report::{Location, Report, Violation};
use crate::roles::{self, Assigned};
use crate::source::{self, Facts, Loc};
use crate::workspace::{Dep, Member, Workspace};

/// A member with its facts and role, as the rules see it.
pub(crate) struct Crate<'a> {
    pub(crate) member: &'a Member,
    pub(crate) facts: Facts,
    pub(crate) role: Assigned,
}

/// Collects violations and turns facts' positions into report locations.
pub(crate) struct Sink<'w> {
    workspace: &'w Workspace,
    manifests: HashMap<String, Manifest>,
    violations: Vec<Violation>,
}

impl<'w> Sink<'w> {
    fn new(workspace: &'w Workspace) -> Self {
        Sink {
            workspace,
            manifests: HashMap::new(),
            violations: Vec::new(),
        }
    }

    /// The member's `Cargo.toml`, read once.
    pub(crate) fn manifest(&mut self, member: &Member) -> &Manifest {
        self.manifests
            .entry(member.name.clone())
            .or_insert_with(|| Manifest::read(&member.manifest_path))
    }

    /// A location in the member's `Cargo.toml`.
    pub(crate) fn manifest_location(
        &self,
        member: &Member,
        position: Option<(usize, usize)>,
        entry: String,
    ) -> Location {
        Location {
            file: self.workspace.relative(&member.manifest_path),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            entry: Some(entry),
        }
    }

    /// The location of a dependency entry.
    pub(crate) fn dep_location(&mut self, member: &Member, dep: &Dep) -> Location {
        let position = self.manifest(member).dependency(dep);
        self.manifest_location(member, position, dep.entry())
    }

    /// A location in source.
    pub(crate) fn source_location(&self, loc: &Loc) -> Location {
        Location {
            file: self.workspace.relative(&loc.file),
            line: Some(loc.line),
            column: Some(loc.column),
            entry: None,
        }
    }

    pub(crate) fn push(&mut self, violation: Violation) {
        self.violations.push(violation);
    }

    /// Sorted by place; one violation per code and source position (the first reported wins,
    /// so a specific message pushed first hides a generic one at the same spot). Manifest
    /// entries keep one violation per message: one entry can lead to several forbidden crates.
    fn finish(self) -> Vec<Violation> {
        let mut seen = HashSet::new();
        let mut violations: Vec<Violation> = self
            .violations
            .into_iter()
            .filter(|v| {
                let detail = v.location.entry.is_some().then(|| v.message.clone());
                seen.insert((v.code, v.location.clone(), detail))
            })
            .collect();
        violations.sort_by(|a, b| {
            (&a.location, a.code, &a.message).cmp(&(&b.location, b.code, &b.message))
        });
        violations
    }
}

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

/// The extern names of `member`'s dependencies on packages `pick` accepts, with what `pick`
/// said about each, plus the aliases `extern crate name as alias;` gives them.
pub(crate) fn names_of(
    member: &Member,
    facts: &Facts,
    mut pick: impl FnMut(&str) -> Option<String>,
) -> HashMap<String, String> {
    let mut names: HashMap<String, String> = HashMap::new();
    for dep in &member.deps {
        if let Some(what) = pick(&dep.package) {
            names.insert(dep.extern_name.clone(), what);
        }
    }
    for extern_crate in &facts.extern_crates {
        if let (Some(alias), Some(what)) = (&extern_crate.alias, names.get(&extern_crate.name)) {
            names.insert(alias.clone(), what.clone());
        }
    }
    names
}
