//! O001: every type a driver deserializes its options into refuses unknown fields.
//!
//! Which types count: in any crate, for every `impl … Driver for T` with `type Options = X;`,
//! the type `X` when it is defined in that crate (resolved through the impl's module, its
//! `use` items, `crate::`/`self::`/`super::` paths and child modules), and, recursively, every
//! type of that crate named in the fields of a counted type (`Option<Tls>` counts `Tls`).
//! A counted type that derives `Deserialize` and has named fields (a struct, or an enum with a
//! struct variant) must carry `#[serde(deny_unknown_fields)]`, and must not `flatten` (serde
//! cannot combine the two). Types from other crates are checked in their own crate; types with
//! a hand-written `Deserialize` impl are not checked.
//!
//! O002, on the same types: a field whose name says it holds a credential (see
//! [`secret_names`](super::secret_names)) must be typed `Secret` or `SecretUrl`.

use std::collections::HashSet;

use crate::report::{Code, Violation};
use crate::rules::krate::Crate;
use crate::rules::secret_names::reads_as_credential;
use crate::sink::Sink;
use crate::source::{Facts, TypeDef};

pub(super) fn check(krate: &Crate<'_>, sink: &mut Sink<'_>) {
    let facts = &krate.facts;
    if facts.driver_impls.is_empty() {
        return;
    }
    let mut externs: HashSet<String> = krate
        .member
        .deps
        .iter()
        .map(|d| d.extern_name.clone())
        .collect();
    externs.extend(facts.extern_crates.iter().filter_map(|e| e.alias.clone()));
    externs.extend(["std", "core", "alloc"].map(str::to_owned));
    let resolver = Resolver { facts, externs };
    let mut visited = HashSet::new();
    for imp in &facts.driver_impls {
        let Some(path) = &imp.options else { continue };
        let mut stack: Vec<(usize, Option<String>)> = resolver
            .resolve_or_guess(path, &imp.module)
            .into_iter()
            .map(|i| (i, None))
            .collect();
        while let Some((index, parent)) = stack.pop() {
            if !visited.insert(index) {
                continue;
            }
            let def = &facts.types[index];
            if !def.derives_deserialize {
                continue;
            }
            for field in &def.field_types {
                for inner in resolver.resolve_or_guess(field, &def.module) {
                    stack.push((inner, Some(def.ident.clone())));
                }
            }
            check_secret_fields(def, &imp.driver, sink, krate);
            if def.refuses_unknown && !def.flattens {
                continue;
            }
            let at = sink.source_location(&imp.loc);
            let whose = match &parent {
                None => format!("the options of driver `{}` ({at})", imp.driver),
                Some(outer) => format!(
                    "a field type of `{outer}`, inside the options of driver `{}` ({at})",
                    imp.driver
                ),
            };
            let (message, help) = if def.flattens {
                (
                    format!(
                        "`{}`, {whose}, uses `#[serde(flatten)]`, which serde cannot combine with `deny_unknown_fields`: unknown keys in INFRA would be ignored",
                        def.ident
                    ),
                    format!(
                        "spell the flattened fields out in `{}` and add `#[serde(deny_unknown_fields)]`",
                        def.ident
                    ),
                )
            } else {
                (
                    format!(
                        "`{}`, {whose}, derives `Deserialize` without `#[serde(deny_unknown_fields)]`: a misspelt key in INFRA would be silently ignored",
                        def.ident
                    ),
                    format!("add `#[serde(deny_unknown_fields)]` to `{}`", def.ident),
                )
            };
            let location = sink.source_location(&def.loc);
            sink.push(Violation {
                code: Code::O001,
                krate: krate.member.name.clone(),
                location,
                message,
                help,
            });
        }
    }
}

/// O002: every field of `def` whose name reads as a credential holds a `Secret`/`SecretUrl`.
fn check_secret_fields(def: &TypeDef, driver: &str, sink: &mut Sink<'_>, krate: &Crate<'_>) {
    for field in &def.fields {
        if field.holds_secret {
            continue;
        }
        let Some(name) = field.names.iter().find(|n| reads_as_credential(n)) else {
            continue;
        };
        let location = sink.source_location(&field.loc);
        sink.push(Violation {
            code: Code::O002,
            krate: krate.member.name.clone(),
            location,
            message: format!(
                "field `{name}` of `{}`, in the options of driver `{driver}`, reads as a credential but is not typed `Secret`/`SecretUrl`: its value would show in `Debug`, logs and errors, and the conformance kit would not know to check it",
                def.ident
            ),
            help: format!(
                "type it `Secret<…>` (or `SecretUrl` for an address), from `sandloom_driverkit` (the same `Secret` as `sandloom_sdk_infra::Secret`); if `{name}` is not a credential, rename it"
            ),
        });
    }
}

struct Resolver<'a> {
    facts: &'a Facts,
    externs: HashSet<String>,
}

impl Resolver<'_> {
    /// The crate's definitions `path` names from `module`. When the path leads nowhere
    /// known (a macro-made module, say) but is not another crate's, fall back to the
    /// definitions of that name anywhere in the crate.
    fn resolve_or_guess(&self, path: &[String], module: &[String]) -> Vec<usize> {
        match self.resolve(path, module, 0) {
            None => Vec::new(),
            Some(found) if !found.is_empty() => found,
            Some(_) => {
                let Some(last) = path.last() else {
                    return Vec::new();
                };
                self.facts
                    .types
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| &t.ident == last)
                    .map(|(i, _)| i)
                    .collect()
            }
        }
    }

    /// `None`: another crate's. `Some(empty)`: not found.
    fn resolve(&self, path: &[String], module: &[String], depth: usize) -> Option<Vec<usize>> {
        let (first, rest) = path.split_first()?;
        if depth > 16 {
            return Some(Vec::new());
        }
        match first.as_str() {
            "crate" => self.resolve(rest, &[], depth + 1),
            "self" => self.resolve(rest, module, depth + 1),
            "super" => self.resolve(rest, &module[..module.len().saturating_sub(1)], depth + 1),
            _ => self.lookup(first, rest, module, depth),
        }
    }

    fn lookup(
        &self,
        name: &str,
        rest: &[String],
        module: &[String],
        depth: usize,
    ) -> Option<Vec<usize>> {
        if rest.is_empty() {
            let found: Vec<usize> = self
                .facts
                .types
                .iter()
                .enumerate()
                .filter(|(_, t)| t.ident == name && t.module == module)
                .map(|(i, _)| i)
                .collect();
            if !found.is_empty() {
                return Some(found);
            }
        } else {
            let mut child = module.to_vec();
            child.push(name.to_owned());
            if self.facts.modules.contains(&child) {
                return self.resolve(rest, &child, depth + 1);
            }
        }
        let imports = || self.facts.imports.iter().filter(|i| i.module == module);
        let mut outside = false;
        for import in imports().filter(|i| i.local == name) {
            let mut path = import.path.clone();
            path.extend_from_slice(rest);
            match self.resolve(&path, &import.module, depth + 1) {
                Some(found) if !found.is_empty() => return Some(found),
                None => outside = true,
                Some(_) => {}
            }
        }
        if outside || self.externs.contains(name) {
            return None;
        }
        for glob in imports().filter(|i| i.local == "*") {
            let mut path = glob.path.clone();
            path.push(name.to_owned());
            path.extend_from_slice(rest);
            if let Some(found) = self.resolve(&path, &glob.module, depth + 1)
                && !found.is_empty()
            {
                return Some(found);
            }
        }
        Some(Vec::new())
    }
}
