//! C004 through re-exports: a module uses a path that another member's `pub use` or
//! `pub extern crate` leads into `sandloom-driverkit`, a driver crate (or a parent of one) or
//! a banned backend SDK.
//!
//! What counts, precisely (the README says it with examples):
//!
//! - Every path the module's shipped code writes is resolved through the members' re-exports
//!   (see `rules::resolve`): each leaf of a `use` tree; every path of two or more segments, or
//!   with a leading `::`, in types, expressions, patterns, macro paths, macro bodies and
//!   attribute arguments; and a one-segment type, trait or macro name that a glob import
//!   supplies (values are left out: a local variable is no import). The module is in
//!   violation when the path enters a forbidden crate after at least one re-export of another
//!   member (`contracts::kit::__private::DRIVERS` with `pub use sandloom_driverkit as kit;` in
//!   `contracts`).
//! - A glob import is in violation when its path enters a forbidden crate, or when the module
//!   it names glob-re-exports one (`use contracts::prelude::*;` with
//!   `pub use sandloom_driverkit::*;` in `contracts::prelude`); the names it brings are not
//!   reported again at each use. A name only a glob re-export of a forbidden crate could supply
//!   is taken to come from it, unless another glob leads to a member that defines it.
//! - Not in violation: depending on a crate that re-exports a forbidden one (a contract crate
//!   depends on driverkit by design), using that crate's own items or what it re-exports from
//!   an allowed crate (`sandloom-sdk-infra`, also as `sandloom_driverkit::sdk`, which is
//!   sdk-infra), and code under `#[cfg(test)]`.
//!
//! The re-exporting crate itself is not reported: a re-export links nothing new into the
//! module (a contract crate depends on driverkit anyway), a contract may need it for macros it
//! exports to its drivers (`$crate::kit::…`), and a crate cannot know which of its dependants
//! are modules. The harm is a module using it, which is where the violation is reported,
//! naming every re-export on the way so that the contract's author can see it too.

use super::forbidden::classify;
use crate::report::{Code, Violation};
use crate::rules::krate::Crate;
use crate::rules::resolve::{Found, Hop, Resolver};
use crate::sink::Sink;
use crate::source::Loc;
use crate::workspace::Workspace;

pub(super) fn check(
    workspace: &Workspace,
    crates: &[Crate<'_>],
    origin: usize,
    sink: &mut Sink<'_>,
) {
    let krate = &crates[origin];
    let facts = &krate.facts;
    let mut resolver = Resolver::new(workspace, crates, origin, |package| {
        classify(workspace, crates, package).is_some()
    });
    // What the module writes, as the message shows it, where, and where it leads.
    let mut found: Vec<(String, &Loc, Found)> = Vec::new();
    for import in &facts.imports {
        let (absolute, path) = (import.absolute, &import.path);
        let (written, result) = if import.local == "*" {
            let result = resolver.glob(&import.module, path, absolute);
            (format!("`{}::*`", join(absolute, path)), result)
        } else {
            let result = resolver.path(&import.module, path, absolute);
            (format!("`{}`", join(absolute, path)), result)
        };
        found.push((written, &import.loc, result));
    }
    for path in &facts.paths {
        let bang = if path.macro_call { "!" } else { "" };
        let mut written = format!("`{}{bang}`", join(path.absolute, &path.segments));
        let result = match path.segments.as_slice() {
            [name] if !path.absolute => match resolver.bare(&path.module, name) {
                Some((result, glob)) => {
                    let line = sink.source_location(&glob.loc).line.unwrap_or(0);
                    let glob = join(glob.absolute, &glob.path);
                    written = format!("{written} (imported by `use {glob}::*;` at line {line})");
                    result
                }
                None => Found::Missing,
            },
            segments => resolver.path(&path.module, segments, path.absolute),
        };
        found.push((written, &path.loc, result));
    }
    for (written, loc, result) in found {
        report(workspace, crates, krate, sink, &written, loc, result);
    }
}

fn report(
    workspace: &Workspace,
    crates: &[Crate<'_>],
    krate: &Crate<'_>,
    sink: &mut Sink<'_>,
    written: &str,
    loc: &Loc,
    found: Found,
) {
    let Found::Forbidden {
        package,
        target,
        hops,
        ..
    } = found
    else {
        return;
    };
    // No re-export of another crate on the way: the module names the forbidden crate itself,
    // which the direct check reports.
    let (Some(first), Some(last)) = (hops.first(), hops.last()) else {
        return;
    };
    let Some(forbidden) = classify(workspace, crates, &package) else {
        return;
    };
    let message = format!(
        "module `{}` uses {written}, which leads to `{}` in {}, through re-exports: {} → {package}",
        krate.member.name,
        target.join("::"),
        forbidden.what,
        chain(sink, &hops),
    );
    let what = if first.krate == last.krate {
        format!("what it re-exports from `{package}`")
    } else {
        format!(
            "what it passes on from `{package}` (re-exported by `{}`)",
            last.krate
        )
    };
    let help = format!(
        "use `{}` for its own items only (a contract's operation trait and `CapabilityRef`), not \
         for {what}; {}",
        first.krate, forbidden.help
    );
    let location = sink.source_location(loc);
    sink.push(Violation {
        code: Code::C004,
        krate: krate.member.name.clone(),
        location,
        message,
        help,
    });
}

/// The re-exports, crate by crate: ``contracts (`pub use sandloom_driverkit as kit;` at
/// contracts/src/lib.rs:7)``.
fn chain(sink: &Sink<'_>, hops: &[Hop]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for hop in hops {
        let at = sink.source_location(&hop.loc);
        let line = at.line.unwrap_or(0);
        let item = format!("`{}` at {}:{line}", hop.item, at.file.display());
        match groups.last_mut() {
            Some((krate, items)) if *krate == hop.krate => items.push(item),
            _ => groups.push((&hop.krate, vec![item])),
        }
    }
    groups
        .iter()
        .map(|(krate, items)| format!("{krate} ({})", items.join(", ")))
        .collect::<Vec<_>>()
        .join(" → ")
}

fn join(absolute: bool, segments: &[String]) -> String {
    let colons = if absolute { "::" } else { "" };
    format!("{colons}{}", segments.join("::"))
}
