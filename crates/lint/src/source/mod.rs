//! Reading a package's shipped source with syn: every file of its module tree, starting from
//! the lib, bin, proc-macro and build-script roots, following `mod x;` (and `#[path]` when it
//! stays inside the package), leaving out items under `#[cfg(test)]`.

mod attrs;
mod facts;
mod tokens;
mod visit;

use std::collections::{HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};

use syn::visit::Visit as _;

pub(crate) use facts::{ExternCrate, Facts, Import, IncludeArg, Loc, PathAttr, TypeDef};

use crate::error::LintError;

struct Job {
    path: PathBuf,
    module: Vec<String>,
    mod_rs: bool,
    /// Reached through `include!`: may be an expression rather than items; skipped if so.
    fragment: bool,
}

/// Parse the module tree of a package and collect its [`Facts`].
pub(crate) fn scan(dir: &Path, roots: &[PathBuf]) -> Result<Facts, LintError> {
    let mut facts = Facts::default();
    let mut queue: VecDeque<Job> = roots
        .iter()
        .map(|root| Job {
            path: root.clone(),
            module: Vec::new(),
            mod_rs: true,
            fragment: false,
        })
        .collect();
    let mut seen = HashSet::new();
    while let Some(job) = queue.pop_front() {
        if !seen.insert(job.path.clone()) {
            continue;
        }
        let text = match std::fs::read_to_string(&job.path) {
            Ok(text) => text,
            // A missing module file does not compile; there is nothing in it to check.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(LintError::Source {
                    file: job.path,
                    message: e.to_string(),
                });
            }
        };
        let file = match syn::parse_file(&text) {
            Ok(file) => file,
            Err(_) if job.fragment => continue,
            Err(e) => {
                let at = e.span().start();
                return Err(LintError::Source {
                    file: job.path,
                    message: format!("{}:{}: {e}", at.line, at.column + 1),
                });
            }
        };
        let includes_before = facts.includes.len();
        let mut visitor = visit::Visitor::new(&job.path, job.module.clone(), &mut facts);
        visitor.visit_file(&file);
        let decls = std::mem::take(&mut visitor.decls);
        for decl in decls {
            let (target, mod_rs) = module_file(&job.path, job.mod_rs, &decl);
            let mut module = job.module.clone();
            module.extend(decl.inline.iter().map(|(n, _)| n.clone()));
            module.push(decl.name.clone());
            if let Some(written) = &decl.path_attr {
                facts.path_attrs.push(PathAttr {
                    written: written.clone(),
                    target: target.clone(),
                    loc: decl.loc.clone(),
                });
                if !is_inside(dir, &target) {
                    continue;
                }
            }
            queue.push_back(Job {
                path: target,
                module,
                mod_rs,
                fragment: false,
            });
        }
        for include in &facts.includes[includes_before..] {
            if let IncludeArg::Literal(written) = &include.arg {
                let target = include_target(&include.from, written);
                if is_inside(dir, &target) {
                    queue.push_back(Job {
                        path: target,
                        module: job.module.clone(),
                        mod_rs: job.mod_rs,
                        fragment: true,
                    });
                }
            }
        }
    }
    Ok(facts)
}

/// The file a `#[path]` or module name resolves to, given the declaring file.
fn module_file(file: &Path, mod_rs: bool, decl: &visit::ModDecl) -> (PathBuf, bool) {
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut base = if mod_rs {
        dir.clone()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    for (name, path) in &decl.inline {
        base.push(path.as_deref().unwrap_or(name));
    }
    match &decl.path_attr {
        Some(written) if decl.inline.is_empty() => (dir.join(written), true),
        Some(written) => (base.join(written), true),
        None => {
            let flat = base.join(format!("{}.rs", decl.name));
            if flat.exists() {
                (flat, false)
            } else {
                (base.join(&decl.name).join("mod.rs"), true)
            }
        }
    }
}

/// The file `include!("written")` in `from` reads.
pub(crate) fn include_target(from: &Path, written: &str) -> PathBuf {
    from.parent().unwrap_or(Path::new("")).join(written)
}

/// Whether `path` lies inside the package directory `dir`, after resolving `..` (and symbolic
/// links, when the file exists).
pub(crate) fn is_inside(dir: &Path, path: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::fs::canonicalize(path)) {
        (Ok(dir), Ok(path)) => path.starts_with(dir),
        _ => normalize(path).starts_with(normalize(dir)),
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
