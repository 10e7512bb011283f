//! The sink every rule reports into: it collects violations and turns the positions the
//! source scan and the manifests give into report locations.
//!
//! Its own file, below the rules and the roles that both report into it, so that neither has
//! to import the other to reach it.

use std::collections::{HashMap, HashSet};

use crate::manifest::Manifest;
use crate::report::{Location, Violation};
use crate::source::Loc;
use crate::workspace::{Dep, Member, Workspace};

/// Collects violations and turns facts' positions into report locations.
pub(crate) struct Sink<'w> {
    workspace: &'w Workspace,
    manifests: HashMap<String, Manifest>,
    violations: Vec<Violation>,
}

impl<'w> Sink<'w> {
    pub(crate) fn new(workspace: &'w Workspace) -> Self {
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
    pub(crate) fn finish(self) -> Vec<Violation> {
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
