//! L001: the layering rules of `[workspace.metadata.sandloom]`.

use crate::config::{LayeringRule, matches};
use crate::error::LintError;
use crate::report::{Code, Violation};
use crate::rules::krate::Crate;
use crate::sink::Sink;
use crate::workspace::{Dep, Workspace};

/// A rule naming a crate that is not a member is a typo, not a pass.
pub(super) fn validate(workspace: &Workspace, crates: &[Crate<'_>]) -> Result<(), LintError> {
    for rule in &workspace.config.layering {
        if let Some(pattern) = &rule.krate
            && !crates.iter().any(|c| matches(pattern, &c.member.name))
        {
            return Err(LintError::Config(format!(
                "layering rule for crate `{pattern}`: no workspace member has that name"
            )));
        }
    }
    Ok(())
}

pub(super) fn check(workspace: &Workspace, krate: &Crate<'_>, sink: &mut Sink<'_>) {
    let member = krate.member;
    for rule in &workspace.config.layering {
        let applies = match (&rule.krate, rule.role) {
            (Some(pattern), _) => matches(pattern, &member.name),
            (None, Some(role)) => krate.role.is(role),
            (None, None) => false,
        };
        if !applies {
            continue;
        }
        let first_hop = |d: &Dep| d.kind.ships() || rule.include_dev;
        let forbidden = |name: &str| rule.must_not_depend_on.iter().any(|p| matches(p, name));
        for dep in member
            .deps
            .iter()
            .filter(|d| first_hop(d) && forbidden(&d.package))
        {
            let location = sink.dep_location(member, dep);
            sink.push(violation(&member.name, &dep.package, None, rule, location));
        }
        if !rule.transitive {
            continue;
        }
        for (package, (first, chain)) in workspace.reachable(member, first_hop) {
            if chain.len() >= 2 && forbidden(&package) {
                let dep = &member.deps[first];
                let location = sink.dep_location(member, dep);
                let through = format!("{} → {}", member.name, chain.join(" → "));
                sink.push(violation(
                    &member.name,
                    &package,
                    Some(&through),
                    rule,
                    location,
                ));
            }
        }
    }
}

fn violation(
    krate: &str,
    package: &str,
    through: Option<&str>,
    rule: &LayeringRule,
    location: crate::report::Location,
) -> Violation {
    let subject = match (&rule.krate, rule.role) {
        (Some(pattern), _) => format!("`{pattern}`"),
        (None, Some(kind)) => format!("a {}", kind.as_str()),
        (None, None) => "this crate".to_owned(),
    };
    let how = match through {
        Some(chain) => format!(" through {chain}"),
        None => String::new(),
    };
    let scope = if rule.transitive { "" } else { " directly" };
    let reason = rule
        .reason
        .clone()
        .unwrap_or_else(|| "the workspace's layering forbids it".to_owned());
    Violation {
        code: Code::L001,
        krate: krate.to_owned(),
        location,
        message: format!(
            "`{krate}` depends on `{package}`{how}, but {subject} must not depend{scope} on {}",
            rule.must_not_depend_on.join(", ")
        ),
        help: format!(
            "{reason}: remove the dependency, or move what it provides into a crate both may depend on"
        ),
    }
}
