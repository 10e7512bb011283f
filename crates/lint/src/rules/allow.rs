//! Allowances: violations `[[workspace.metadata.sandloom.allow]]` expects, each with a reason,
//! set apart from the failing ones; an allowance that matches nothing is A001.

use crate::config::matches;
use crate::manifest::Manifest;
use crate::report::{Allowed, Code, Location, Violation};
use crate::workspace::Workspace;

/// Split `violations` into failing and allowed ones, adding A001 for stale allowances.
pub(super) fn apply(
    workspace: &Workspace,
    violations: Vec<Violation>,
) -> (Vec<Violation>, Vec<Allowed>) {
    let allowances = &workspace.config.allow;
    let mut used = vec![false; allowances.len()];
    let mut failing = Vec::new();
    let mut allowed = Vec::new();
    for violation in violations {
        let found = allowances
            .iter()
            .position(|a| a.code == violation.code && matches(&a.krate, &violation.krate));
        match found {
            Some(i) => {
                used[i] = true;
                allowed.push(Allowed {
                    violation,
                    reason: allowances[i].reason.clone(),
                });
            }
            None => failing.push(violation),
        }
    }
    let manifest_path = workspace.root.join("Cargo.toml");
    let manifest = Manifest::read(&manifest_path);
    for (i, allowance) in allowances.iter().enumerate().filter(|(i, _)| !used[*i]) {
        let position = manifest.array_item(&["workspace", "metadata", "sandloom", "allow"], i);
        failing.push(Violation {
            code: Code::A001,
            krate: allowance.krate.clone(),
            location: Location {
                file: workspace.relative(&manifest_path),
                line: position.map(|p| p.0),
                column: position.map(|p| p.1),
                entry: Some(format!(
                    "[[workspace.metadata.sandloom.allow]] crate = \"{}\", code = \"{}\"",
                    allowance.krate, allowance.code
                )),
            },
            message: format!(
                "the allowance of {} in `{}` matches no violation",
                allowance.code, allowance.krate
            ),
            help: "remove the allowance: what it excused is gone (or the crate name is misspelt)"
                .to_owned(),
        });
    }
    (failing, allowed)
}
