//! Following a path across the workspace's crates, through their `pub use` and
//! `pub extern crate` re-exports, to the crate it really leads into.
//!
//! The resolution is name-based and reads members only (their source is all the lint has):
//! a path's first segment is looked up as Rust 2018 does — `crate::`, `self::`, `super::`, a
//! child module, an item, a `use`d name, a glob import, then a dependency's extern name — and
//! every later segment in the module it leads to. Entering another member follows only what
//! that member makes public (`pub`, not `pub(crate)`). Entering a crate the caller forbids
//! stops there: what that crate contains does not matter, only that the path went in.

use std::collections::HashMap;

use crate::config::{DRIVERKIT, SDK_INFRA};
use crate::rules::krate::{Crate, names_of};
use crate::source::{ExternCrate, Import, Loc};
use crate::workspace::Workspace;

/// Deep enough for any real chain; stops cycles (`pub use self::*`, globs of each other).
const DEPTH: usize = 48;

/// Lookups one path may take: modules that all glob each other have a number of routes that
/// grows with the factorial of their count; past this, the path is taken to lead nowhere.
const BUDGET: usize = 20_000;

/// A re-export followed on the way: the crate, the item as written, and where.
#[derive(Debug, Clone)]
pub(crate) struct Hop {
    pub(crate) krate: String,
    pub(crate) item: String,
    pub(crate) loc: Loc,
}

/// Where a path leads.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    /// Into a forbidden crate: its package, the path from its crate name
    /// (`sandloom_driverkit::__private::DRIVERS`), the re-exports of other crates than the
    /// origin followed to get there (outermost first), and whether the last name was only
    /// supplied by a glob re-export of that crate (`pub use sandloom_driverkit::*;`), which is
    /// not read.
    Forbidden {
        package: String,
        target: Vec<String>,
        hops: Vec<Hop>,
        guessed: bool,
    },
    /// A module of a member (a crate root included), with the re-exports followed.
    Module {
        krate: usize,
        module: Vec<String>,
        hops: Vec<Hop>,
    },
    /// An item a member defines.
    Defined,
    /// Into a crate that is allowed but not read (`std`, a registry crate); `guessed` when
    /// only a glob re-export of such a crate could supply the name.
    Opaque { guessed: bool },
    /// Nothing of that name where the path leads.
    Missing,
}

impl Found {
    /// Rank when several globs could supply a name: one that a member defines for sure wins
    /// (two globs supplying the same name do not compile), then a forbidden crate, then an
    /// unread one.
    fn glob_rank(&self) -> u8 {
        match self {
            Found::Module { .. } | Found::Defined => 3,
            Found::Forbidden { .. } => 2,
            Found::Opaque { .. } => 1,
            Found::Missing => 0,
        }
    }

    /// How many re-exports were followed: of two equal findings, the shorter chain is shown.
    fn hops(&self) -> usize {
        match self {
            Found::Forbidden { hops, .. } | Found::Module { hops, .. } => hops.len(),
            _ => 0,
        }
    }

    /// Supplied by a glob of a crate that is not read: any other meaning of the name wins.
    fn guessed(&self) -> bool {
        matches!(
            self,
            Found::Forbidden { guessed: true, .. } | Found::Opaque { guessed: true }
        )
    }

    /// The same, reached after `first` re-exports.
    fn after(mut self, first: Vec<Hop>) -> Found {
        if let Found::Forbidden { hops, .. } | Found::Module { hops, .. } = &mut self {
            hops.splice(0..0, first);
        }
        self
    }

    fn with_hop(self, hop: Option<Hop>) -> Found {
        self.after(hop.into_iter().collect())
    }
}

/// Where a name is looked up: a module of crate `c`, from outside the crate or not.
struct Scope<'s> {
    c: usize,
    module: &'s [String],
    public_only: bool,
    depth: usize,
}

/// Resolves paths written in the origin crate (the module checked) across the members.
pub(crate) struct Resolver<'a, 'm, F> {
    workspace: &'a Workspace,
    crates: &'a [Crate<'m>],
    /// The crate whose code is checked: its own imports are not re-exports.
    origin: usize,
    forbids: F,
    forbidden: HashMap<String, bool>,
    externs: HashMap<usize, HashMap<String, String>>,
    /// The imports being followed (crate, index in its `imports`): an import's own path never
    /// resolves through itself (`use sandloom_driverkit;`, `use contracts::*;`).
    active: Vec<(usize, usize)>,
    /// Lookups left for the path being resolved.
    budget: usize,
}

impl<'a, 'm, F: FnMut(&str) -> bool> Resolver<'a, 'm, F> {
    /// `forbids(package)`: whether a path entering that package stops as [`Found::Forbidden`].
    pub(crate) fn new(
        workspace: &'a Workspace,
        crates: &'a [Crate<'m>],
        origin: usize,
        forbids: F,
    ) -> Self {
        Resolver {
            workspace,
            crates,
            origin,
            forbids,
            forbidden: HashMap::new(),
            externs: HashMap::new(),
            active: Vec::new(),
            budget: BUDGET,
        }
    }

    /// Where `segments`, written in `module` of the origin, lead.
    pub(crate) fn path(&mut self, module: &[String], segments: &[String], absolute: bool) -> Found {
        self.budget = BUDGET;
        self.fresh(self.origin, module, segments, absolute, 0)
    }

    /// What a one-segment name written in `module` of the origin (a type, a trait, a macro)
    /// leads to when a glob import supplies it, with that glob; `None` when the module defines
    /// or imports it by name (a named import is checked where it is written).
    pub(crate) fn bare(&mut self, module: &[String], name: &str) -> Option<(Found, &'a Import)> {
        self.budget = BUDGET;
        let facts = &self.crates[self.origin].facts;
        let mut here = module.to_vec();
        here.push(name.to_owned());
        let named = facts
            .imports
            .iter()
            .any(|i| i.module == module && i.local == name)
            || facts
                .extern_crates
                .iter()
                .any(|e| e.module == module && e.alias.as_ref().unwrap_or(&e.name) == name);
        if named || facts.modules.contains(&here) || facts.items.contains(&here) {
            return None;
        }
        let scope = Scope {
            c: self.origin,
            module,
            public_only: false,
            depth: 0,
        };
        let crates: &'a [Crate<'m>] = self.crates;
        self.best_glob(&scope, &[name.to_owned()])
            .map(|(found, index)| (found, &crates[self.origin].facts.imports[index]))
    }

    /// What the glob import `use {segments}::*;` in `module` of the origin brings from a
    /// forbidden crate: the glob's own path leads into one (`use contracts::kit::*;`), or the
    /// module it names glob-re-exports one, directly or through further globs
    /// (`pub use sandloom_driverkit::*;` in `contracts::prelude`).
    pub(crate) fn glob(&mut self, module: &[String], segments: &[String], absolute: bool) -> Found {
        self.budget = BUDGET;
        match self.fresh(self.origin, module, segments, absolute, 0) {
            Found::Module {
                krate,
                module,
                hops,
            } => self.globbed(krate, &module, 0).after(hops),
            found => found,
        }
    }

    /// The first forbidden crate a glob of `module` of crate `c` brings in, or
    /// [`Found::Missing`].
    fn globbed(&mut self, c: usize, module: &[String], depth: usize) -> Found {
        if depth > DEPTH {
            return Found::Missing;
        }
        let scope = Scope {
            c,
            module,
            public_only: c != self.origin,
            depth,
        };
        for (index, glob) in self.imports(&scope, "*") {
            let hop = self.hop(c, render_use(glob), &glob.loc);
            self.active.push((c, index));
            let found = match self.follow(c, index, &glob.path, depth) {
                found @ Found::Forbidden { .. } => found,
                Found::Module {
                    krate,
                    module,
                    hops,
                } => self.globbed(krate, &module, depth + 1).after(hops),
                _ => Found::Missing,
            };
            self.active.pop();
            if matches!(found, Found::Forbidden { .. }) {
                return found.with_hop(hop);
            }
        }
        Found::Missing
    }

    /// A path as written in `module` of crate `c`: its first segment may be `crate`, `self`,
    /// `super`, a name in scope or a crate.
    fn fresh(
        &mut self,
        c: usize,
        module: &[String],
        segments: &[String],
        absolute: bool,
        depth: usize,
    ) -> Found {
        let Some((first, rest)) = segments.split_first() else {
            return self.inside(c, module, &[], false, depth);
        };
        if depth > DEPTH {
            return Found::Missing;
        }
        if absolute {
            return self.external(c, first, rest, depth + 1);
        }
        match first.as_str() {
            "crate" => self.inside(c, &[], rest, false, depth + 1),
            "self" => self.inside(c, module, rest, false, depth + 1),
            "super" => {
                let parent = &module[..module.len().saturating_sub(1)];
                if rest.first().is_some_and(|s| s == "super") {
                    self.fresh(c, parent, rest, false, depth + 1)
                } else {
                    self.inside(c, parent, rest, false, depth + 1)
                }
            }
            "Self" => Found::Missing,
            // A name in scope shadows a crate of the same name, unless only a glob of an unread
            // crate could supply it (`pub use sandloom_driverkit::*;` does not supply
            // `sandloom_sdk_infra`).
            _ => match self.inside(c, module, segments, false, depth + 1) {
                Found::Missing => self.external(c, first, rest, depth + 1),
                found if found.guessed() => match self.external(c, first, rest, depth + 1) {
                    Found::Missing => found,
                    crate_path => crate_path,
                },
                found => found,
            },
        }
    }

    /// `segments` looked up in `module` of crate `c`: child modules, items, named imports,
    /// then glob imports. From another crate (`public_only`), only `pub` imports count.
    fn inside(
        &mut self,
        c: usize,
        module: &[String],
        segments: &[String],
        public_only: bool,
        depth: usize,
    ) -> Found {
        let Some((name, rest)) = segments.split_first() else {
            return Found::Module {
                krate: c,
                module: module.to_vec(),
                hops: Vec::new(),
            };
        };
        if depth > DEPTH || self.budget == 0 {
            return Found::Missing;
        }
        self.budget -= 1;
        let facts = &self.crates[c].facts;
        let mut here = module.to_vec();
        here.push(name.clone());
        if facts.modules.contains(&here) {
            return self.inside(c, &here, rest, public_only, depth + 1);
        }
        if facts.items.contains(&here) {
            return Found::Defined;
        }
        let scope = Scope {
            c,
            module,
            public_only,
            depth,
        };
        match self.named(&scope, name, rest) {
            Found::Missing => self.globs(&scope, segments),
            found => found,
        }
    }

    /// `name` (then `rest`) through the `use` items and `extern crate` items that name it.
    fn named(&mut self, scope: &Scope<'_>, name: &str, rest: &[String]) -> Found {
        let crates = self.crates;
        let facts = &crates[scope.c].facts;
        let mut named = Found::Missing;
        for (index, import) in self.imports(scope, name) {
            let mut path = import.path.clone();
            path.extend_from_slice(rest);
            let hop = self.hop(scope.c, render_use(import), &import.loc);
            let found = self.follow(scope.c, index, &path, scope.depth);
            named = prefer_named(named, found.with_hop(hop));
        }
        // Within the crate, `extern crate x;` adds nothing to the extern prelude's `x`: only
        // an alias, or the item named from outside (`contracts::x`), is a step of its own.
        for item in facts.extern_crates.iter().filter(|e| {
            e.module == scope.module
                && e.alias.as_ref().unwrap_or(&e.name) == name
                && (e.public || !scope.public_only)
                && (scope.public_only || e.alias.is_some())
        }) {
            let hop = self.hop(scope.c, render_extern_crate(item), &item.loc);
            let found = self.external(scope.c, &item.name, rest, scope.depth + 1);
            named = prefer_named(named, found.with_hop(hop));
        }
        named
    }

    /// `segments` through the glob imports of the scope: the best of what they supply.
    fn globs(&mut self, scope: &Scope<'_>, segments: &[String]) -> Found {
        self.best_glob(scope, segments)
            .map_or(Found::Missing, |(found, _)| found)
    }

    /// The best of what the glob imports of the scope supply, with the glob that supplies it
    /// (its index in the crate's imports).
    fn best_glob(&mut self, scope: &Scope<'_>, segments: &[String]) -> Option<(Found, usize)> {
        let mut best: Option<(Found, usize)> = None;
        for (index, glob) in self.imports(scope, "*") {
            let found = self.through_glob(scope, index, glob, segments);
            let better = best.as_ref().is_none_or(|(current, _)| {
                found.glob_rank() > current.glob_rank()
                    || (found.glob_rank() == current.glob_rank() && found.hops() < current.hops())
            });
            if better && !matches!(found, Found::Missing) {
                best = Some((found, index));
            }
        }
        best
    }

    /// What the glob import `index` of the scope's crate supplies as `segments`.
    fn through_glob(
        &mut self,
        scope: &Scope<'_>,
        index: usize,
        glob: &Import,
        segments: &[String],
    ) -> Found {
        let c = scope.c;
        let hop = self.hop(c, render_use(glob), &glob.loc);
        // Held for the whole glob: modules that glob each other end here.
        self.active.push((c, index));
        let found = match self.follow(c, index, &glob.path, scope.depth) {
            Found::Forbidden {
                package,
                mut target,
                hops,
                ..
            } => {
                target.extend_from_slice(segments);
                Found::Forbidden {
                    package,
                    target,
                    hops,
                    guessed: true,
                }
            }
            Found::Module {
                krate,
                module,
                hops,
            } => self
                .inside(krate, &module, segments, krate != c, scope.depth + 1)
                .after(hops),
            Found::Opaque { .. } => Found::Opaque { guessed: true },
            other => other,
        };
        self.active.pop();
        // The origin's own globs are checked where they are written ([`Resolver::glob`]); the
        // names they might supply are not reported again at every use.
        if c == self.origin && matches!(found, Found::Forbidden { guessed: true, .. }) {
            return Found::Missing;
        }
        found.with_hop(hop)
    }

    /// The imports of the scope that bind `local` (`*` for globs), except those being
    /// followed.
    fn imports(&self, scope: &Scope<'_>, local: &str) -> Vec<(usize, &'a Import)> {
        let crates: &'a [Crate<'m>] = self.crates;
        crates[scope.c]
            .facts
            .imports
            .iter()
            .enumerate()
            .filter(|(index, i)| {
                i.module == scope.module
                    && i.local == local
                    && (i.public || !scope.public_only)
                    && !self.active.contains(&(scope.c, *index))
            })
            .collect()
    }

    /// `path` (the path of import `index` of crate `c`, or a longer one through it), resolved
    /// where the import is written without going through the import itself.
    fn follow(&mut self, c: usize, index: usize, path: &[String], depth: usize) -> Found {
        let crates = self.crates;
        let import = &crates[c].facts.imports[index];
        self.active.push((c, index));
        let found = self.fresh(c, &import.module, path, import.absolute, depth + 1);
        self.active.pop();
        found
    }

    /// `name` as a crate of `c` (a dependency's extern name, an `extern crate` alias, or a
    /// standard crate), then `rest` inside it.
    fn external(&mut self, c: usize, name: &str, rest: &[String], depth: usize) -> Found {
        if name == "self" {
            // `extern crate self as alias;`
            return self.inside(c, &[], rest, false, depth + 1);
        }
        match self.package_of(c, name) {
            Some(package) => self.enter(&package, rest, depth + 1),
            None if matches!(name, "std" | "core" | "alloc") => Found::Opaque { guessed: false },
            None => Found::Missing,
        }
    }

    /// `rest` inside `package`.
    fn enter(&mut self, package: &str, rest: &[String], depth: usize) -> Found {
        if self.is_forbidden(package) {
            // `sandloom_driverkit::sdk` is `sandloom-sdk-infra` (`pub use sandloom_sdk_infra as
            // sdk;` in driverkit): what a module may use anyway.
            if package == DRIVERKIT
                && let Some((sdk, inner)) = rest.split_first()
                && sdk == "sdk"
            {
                return self.enter(SDK_INFRA, inner, depth + 1);
            }
            let lib = self
                .workspace
                .member(package)
                .and_then(|m| m.lib_name.clone())
                .unwrap_or_else(|| package.replace('-', "_"));
            return Found::Forbidden {
                package: package.to_owned(),
                target: std::iter::once(lib).chain(rest.iter().cloned()).collect(),
                hops: Vec::new(),
                guessed: false,
            };
        }
        match self.workspace.index(package) {
            Some(_) if depth > DEPTH => Found::Missing,
            Some(k) => self.inside(k, &[], rest, true, depth + 1),
            None => Found::Opaque { guessed: false },
        }
    }

    fn is_forbidden(&mut self, package: &str) -> bool {
        if let Some(&known) = self.forbidden.get(package) {
            return known;
        }
        let verdict = (self.forbids)(package);
        self.forbidden.insert(package.to_owned(), verdict);
        verdict
    }

    /// The package `c` knows as `name`: a dependency (renames included) or an
    /// `extern crate … as name`.
    fn package_of(&mut self, c: usize, name: &str) -> Option<String> {
        let crates = self.crates;
        let externs = self.externs.entry(c).or_insert_with(|| {
            let krate = &crates[c];
            names_of(krate.member, &krate.facts, |p| Some(p.to_owned()))
        });
        externs.get(name).cloned()
    }

    /// A re-export of `c`, when `c` is not the origin.
    fn hop(&self, c: usize, item: String, loc: &Loc) -> Option<Hop> {
        (c != self.origin).then(|| Hop {
            krate: self.crates[c].member.name.clone(),
            item,
            loc: loc.clone(),
        })
    }
}

/// Of two meanings of one imported name (a type and a macro, say), the forbidden one, else
/// the first found.
fn prefer_named(current: Found, found: Found) -> Found {
    match (&current, &found) {
        (Found::Forbidden { .. }, _) => current,
        (_, Found::Forbidden { .. }) | (Found::Missing, _) => found,
        _ => current,
    }
}

/// `pub use ::sandloom_driverkit::__private as internals;`
fn render_use(import: &Import) -> String {
    let vis = if import.public { "pub " } else { "" };
    let colons = if import.absolute { "::" } else { "" };
    let path = import.path.join("::");
    let tail = if import.local == "*" {
        "::*".to_owned()
    } else if import.path.last() == Some(&import.local) {
        String::new()
    } else {
        format!(" as {}", import.local)
    };
    format!("{vis}use {colons}{path}{tail};")
}

/// `pub extern crate sandloom_driverkit as kit;`
fn render_extern_crate(item: &ExternCrate) -> String {
    let vis = if item.public { "pub " } else { "" };
    match &item.alias {
        Some(alias) => format!("{vis}extern crate {} as {alias};", item.name),
        None => format!("{vis}extern crate {};", item.name),
    }
}
