//! What a run found: the crates and their roles, the violations, and how both are printed.
//!
//! The words every other file uses ([`Code`], [`Role`], [`Violation`], …) live here, in a file
//! that imports none of them, so the rules, the roles and the configuration all build on it.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The stable code of a rule. Codes never change meaning; a retired rule's code is not reused.
///
/// ```
/// use sandloom_lint::Code;
/// assert_eq!(Code::C004.as_str(), "C004");
/// assert_eq!(Code::ALL.len(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Code {
    /// A module depends on or uses `sandloom-driverkit`, a driver crate or a parent of one, or
    /// a banned backend SDK, by its own name or through other members' re-exports; or a crate
    /// declared a module registers drivers.
    C004,
    /// A crate breaks a layering rule of `[workspace.metadata.sandloom]`.
    L001,
    /// A driver's options type (or a type inside it) derives `Deserialize` without
    /// `#[serde(deny_unknown_fields)]`.
    O001,
    /// A driver's options type (or a type inside it) has a field whose name says it holds a
    /// credential (`password`, `token`, `api_key`, …) but whose type is not `Secret` or
    /// `SecretUrl`, so its value shows in `Debug` and in logs.
    O002,
    /// A module or driver loads code dynamically (libloading and friends, `dlopen`/`dlsym`).
    E001,
    /// A module or driver pulls source from outside its package (`#[path]`, `include!`).
    E002,
    /// `[package.metadata.sandloom]` is invalid (unknown role or key).
    R001,
    /// An allowance of `[workspace.metadata.sandloom]` matches no violation.
    A001,
}

impl Code {
    /// Every code, in the order of the documentation's table.
    pub const ALL: [Code; 8] = [
        Code::C004,
        Code::L001,
        Code::O001,
        Code::O002,
        Code::E001,
        Code::E002,
        Code::R001,
        Code::A001,
    ];

    /// The code as printed: `"C004"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::C004 => "C004",
            Code::L001 => "L001",
            Code::O001 => "O001",
            Code::O002 => "O002",
            Code::E001 => "E001",
            Code::E002 => "E002",
            Code::R001 => "R001",
            Code::A001 => "A001",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a violation is: a source position, or a `Cargo.toml` entry (then `entry` names it,
/// like `[dependencies] dk (package "sandloom-driverkit")`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// The file, relative to the workspace root when it lies under it.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters), when known.
    pub column: Option<usize>,
    /// The `Cargo.toml` entry, for a violation in a manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(entry) = &self.entry {
            write!(f, "  {entry}")?;
        }
        Ok(())
    }
}

/// One broken rule: its code, where, what is wrong and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The rule's stable code.
    pub code: Code,
    /// The package the violation belongs to.
    #[serde(rename = "crate")]
    pub krate: String,
    /// Where it is.
    #[serde(flatten)]
    pub location: Location,
    /// What is wrong.
    pub message: String,
    /// What to do instead.
    pub help: String,
}

/// What a crate is, which decides the rules it must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// Business code: uses capabilities through `sandloom-sdk-infra` only (C004, E001, E002).
    Module,
    /// Registers drivers (O001, E001, E002, and the layering rules for drivers).
    Driver,
    /// Defines capabilities (`define_capability!`) that modules and drivers share.
    Contract,
    /// Builds the binary: links drivers, reads `INFRA`, starts the kernel.
    Application,
    /// Sandloom's own crates (`sandloom`, `sandloom-sdk-infra`, `sandloom-kernel`,
    /// `sandloom-driverkit`); never declared, only inferred from the name.
    Framework,
}

impl Role {
    /// The role as written in `Cargo.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Module => "module",
            Role::Driver => "driver",
            Role::Contract => "contract",
            Role::Application => "application",
            Role::Framework => "framework",
        }
    }

    /// The role `[package.metadata.sandloom] role = "…"` names; `None` for `framework`,
    /// which is only inferred, and for anything unknown.
    pub(crate) fn declarable(name: &str) -> Option<Role> {
        match name {
            "module" => Some(Role::Module),
            "driver" => Some(Role::Driver),
            "contract" => Some(Role::Contract),
            "application" => Some(Role::Application),
            _ => None,
        }
    }
}

/// Where a crate's role came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RoleOrigin {
    /// `[package.metadata.sandloom] role`.
    Declared,
    /// Inferred from what the crate does or depends on.
    Inferred,
    /// Declared as something else, but the crate registers drivers: it is a driver.
    Overridden,
    /// Neither declared nor inferred: only layering rules that name the crate apply.
    None,
}

/// A workspace member and the role the lint gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrateRole {
    /// The package name.
    pub name: String,
    /// The role the rules apply, if any.
    pub role: Option<Role>,
    /// Whether the role was declared, inferred or overridden.
    pub origin: RoleOrigin,
    /// Why, in words: `role inferred: driver (registers drivers)`.
    pub note: String,
}

/// A violation an allowance of `[workspace.metadata.sandloom]` expects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Allowed {
    /// The violation.
    #[serde(flatten)]
    pub violation: Violation,
    /// The allowance's reason.
    pub reason: String,
}

/// The result of linting one workspace.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The workspace root.
    pub workspace_root: PathBuf,
    /// Every member, sorted by name.
    pub crates: Vec<CrateRole>,
    /// Every violation, sorted by file, line and column.
    pub violations: Vec<Violation>,
    /// Violations that allowances expect: reported, but not failing the run.
    pub allowed: Vec<Allowed>,
}

impl Report {
    /// True when nothing was found.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violations of one code.
    pub fn with_code(&self, code: Code) -> impl Iterator<Item = &Violation> {
        self.violations.iter().filter(move |v| v.code == code)
    }

    /// Number of violations per code.
    pub fn counts(&self) -> BTreeMap<Code, usize> {
        let mut counts = BTreeMap::new();
        for violation in &self.violations {
            *counts.entry(violation.code).or_insert(0) += 1;
        }
        counts
    }

    /// The role of a member, if it is one.
    pub fn role_of(&self, name: &str) -> Option<&CrateRole> {
        self.crates.iter().find(|c| c.name == name)
    }

    /// The human-readable report: roles, then each violation with its location and help.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "sandloom-lint: {} crate(s) in {}",
            self.crates.len(),
            self.workspace_root.display()
        );
        let width = self.crates.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for krate in &self.crates {
            let role = krate.role.map_or("-", Role::as_str);
            let _ = writeln!(out, "  {:width$}  {role:11}  {}", krate.name, krate.note);
        }
        for v in &self.violations {
            let _ = writeln!(out, "\nerror[{}]: {}", v.code, v.message);
            let _ = writeln!(out, "  --> {}", v.location);
            let _ = writeln!(out, "   = help: {}", v.help);
        }
        for allowed in &self.allowed {
            let v = &allowed.violation;
            let _ = writeln!(out, "\nallowed[{}]: {}", v.code, v.message);
            let _ = writeln!(out, "  --> {}", v.location);
            let _ = writeln!(out, "   = allowed because: {}", allowed.reason);
        }
        if self.violations.is_empty() {
            let _ = writeln!(out, "\nno violations");
        } else {
            let counts: Vec<String> = self
                .counts()
                .iter()
                .map(|(code, n)| format!("{code}: {n}"))
                .collect();
            let _ = writeln!(
                out,
                "\n{} violation(s) ({})",
                self.violations.len(),
                counts.join(", ")
            );
        }
        out
    }

    /// The same report as JSON, for tooling: `workspace_root`, `crates`, `violations` (each
    /// with `code`, `crate`, `file`, `line`, `column`, `entry`, `message`, `help`), `allowed`
    /// (the same fields and `reason`) and `summary`.
    ///
    /// # Panics
    ///
    /// Never: every field serializes.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Summary {
            violations: usize,
            by_code: BTreeMap<Code, usize>,
            allowed: usize,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            tool: &'static str,
            version: &'static str,
            #[serde(flatten)]
            report: &'a Report,
            summary: Summary,
        }
        let json = Json {
            tool: "sandloom-lint",
            version: env!("CARGO_PKG_VERSION"),
            report: self,
            summary: Summary {
                violations: self.violations.len(),
                by_code: self.counts(),
                allowed: self.allowed.len(),
            },
        };
        serde_json::to_string_pretty(&json).expect("a report always serializes")
    }
}
