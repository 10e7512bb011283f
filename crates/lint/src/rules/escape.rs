//! E001 and E002: escape hatches. Modules and drivers load no code at run time and compile no
//! source from outside their package.

use crate::config::DYNAMIC_LOADING_CRATES;
use crate::report::{Code, Role, Violation};
use crate::rules::krate::{Crate, names_of};
use crate::sink::Sink;
use crate::source::{IncludeArg, Loc, include_target, is_inside};

const HELP_E001: &str = "modules and drivers are linked statically and selected by INFRA; \
     load nothing at run time: make the code a crate the application links";
const HELP_E002: &str = "keep the file inside the package directory, or turn the shared code \
     into a crate and depend on it";

pub(super) fn check(krate: &Crate<'_>, sink: &mut Sink<'_>) {
    if !(krate.role.is_module() || krate.role.is(Role::Driver)) {
        return;
    }
    let member = krate.member;
    let what = if krate.role.is(Role::Driver) {
        "driver"
    } else {
        "module"
    };
    let push = |sink: &mut Sink<'_>, code, location, message: String, help: &str| {
        sink.push(Violation {
            code,
            krate: member.name.clone(),
            location,
            message,
            help: help.to_owned(),
        });
    };
    let loading = |package: &str| {
        DYNAMIC_LOADING_CRATES
            .contains(&package)
            .then(|| package.to_owned())
    };
    for dep in member.deps.iter().filter(|d| d.kind.ships()) {
        if loading(&dep.package).is_some() {
            let location = sink.dep_location(member, dep);
            let message = format!(
                "{what} `{}` depends on `{}`, which loads code at run time",
                member.name, dep.package
            );
            push(sink, Code::E001, location, message, HELP_E001);
        }
    }
    let names = names_of(member, &krate.facts, loading);
    for root in &krate.facts.roots {
        if let Some(package) = names.get(&root.name) {
            let location = sink.source_location(&root.loc);
            let message = format!(
                "{what} `{}` uses `{}` ({package}), which loads code at run time",
                member.name, root.name
            );
            push(sink, Code::E001, location, message, HELP_E001);
        }
    }
    for symbol in &krate.facts.symbols {
        let location = sink.source_location(&symbol.loc);
        let message = format!(
            "{what} `{}` uses `{}`, which loads code or looks symbols up at run time",
            member.name, symbol.name
        );
        push(sink, Code::E001, location, message, HELP_E001);
    }
    for attr in &krate.facts.path_attrs {
        if !is_inside(&member.dir, &attr.target) {
            let location = sink.source_location(&attr.loc);
            let message = format!(
                "{what} `{}` compiles `#[path = \"{}\"]`, a file outside its package",
                member.name, attr.written
            );
            push(sink, Code::E002, location, message, HELP_E002);
        }
    }
    for include in &krate.facts.includes {
        let outside = |loc: &Loc, detail: String| (loc.clone(), detail);
        let found = match &include.arg {
            IncludeArg::OutDir => None,
            IncludeArg::Literal(written) => {
                let target = include_target(&include.from, written);
                (!is_inside(&member.dir, &target)).then(|| {
                    outside(
                        &include.loc,
                        format!("`include!(\"{written}\")`, a file outside its package"),
                    )
                })
            }
            IncludeArg::Computed => Some(outside(
                &include.loc,
                "`include!` with a computed path, which cannot be checked (only a literal \
                 path or `concat!(env!(\"OUT_DIR\"), …)` can)"
                    .to_owned(),
            )),
        };
        if let Some((loc, detail)) = found {
            let location = sink.source_location(&loc);
            let message = format!("{what} `{}` compiles {detail}", member.name);
            push(sink, Code::E002, location, message, HELP_E002);
        }
    }
}
