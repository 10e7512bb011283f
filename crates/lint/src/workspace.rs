//! The workspace as `cargo metadata --no-deps` describes it: members, their targets and their
//! declared dependencies (renames, kinds and target platforms included).
//!
//! Only members and their direct dependencies are needed: every rule is about what a member
//! declares or writes. `--no-deps` never resolves, downloads or writes `Cargo.lock`, so the
//! lint runs offline in a few milliseconds; the price is that a dependency from a registry or
//! git is known by its name only (see `driver_crates` in the configuration).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use cargo_metadata::{DependencyKind, MetadataCommand, TargetKind};

use crate::config::Config;
use crate::error::LintError;

/// The kind of a declared dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Normal,
    Build,
    Dev,
}

impl Kind {
    /// Normal and build dependencies end up in (or generate code for) what the crate ships;
    /// dev-dependencies only build its tests, examples and benchmarks.
    pub(crate) fn ships(self) -> bool {
        matches!(self, Kind::Normal | Kind::Build)
    }

    fn table(self) -> &'static str {
        match self {
            Kind::Normal => "dependencies",
            Kind::Build => "build-dependencies",
            Kind::Dev => "dev-dependencies",
        }
    }
}

/// One entry of a member's `[dependencies]`, `[build-dependencies]` or `[dev-dependencies]`,
/// possibly under `[target.'cfg(…)'.…]`.
#[derive(Debug, Clone)]
pub(crate) struct Dep {
    /// The package depended on (`package = "…"` when renamed).
    pub(crate) package: String,
    /// The key in `Cargo.toml` (the rename, if any).
    pub(crate) key: String,
    pub(crate) kind: Kind,
    /// The target platform (`cfg(unix)`), if target-specific.
    pub(crate) target: Option<String>,
    /// The name source code uses for it (`dk` for a rename, the lib name otherwise).
    pub(crate) extern_name: String,
}

impl Dep {
    /// The entry as written: `[target.'cfg(unix)'.dependencies] dk (package "sandloom-driverkit")`.
    pub(crate) fn entry(&self) -> String {
        let table = match &self.target {
            Some(target) => format!("[target.'{target}'.{}]", self.kind.table()),
            None => format!("[{}]", self.kind.table()),
        };
        if self.key == self.package {
            format!("{table} {}", self.key)
        } else {
            format!("{table} {} (package \"{}\")", self.key, self.package)
        }
    }

    /// The table path in `Cargo.toml`, for finding the entry's line.
    pub(crate) fn table_names(&self) -> [&'static str; 2] {
        match self.kind {
            Kind::Normal => ["dependencies", "dependencies"],
            Kind::Build => ["build-dependencies", "build_dependencies"],
            Kind::Dev => ["dev-dependencies", "dev_dependencies"],
        }
    }
}

/// A workspace member.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) manifest_path: PathBuf,
    /// The package directory.
    pub(crate) dir: PathBuf,
    /// Roots of what the package ships: lib, bins, proc-macro and build script (not tests,
    /// examples or benches, which build with dev-dependencies).
    pub(crate) roots: Vec<PathBuf>,
    /// The lib target's crate name, if it has one.
    pub(crate) lib_name: Option<String>,
    pub(crate) deps: Vec<Dep>,
    /// `[package.metadata.sandloom]`, if present.
    pub(crate) sandloom_metadata: Option<serde_json::Value>,
}

/// The members, the configuration and the root.
#[derive(Debug)]
pub(crate) struct Workspace {
    pub(crate) root: PathBuf,
    pub(crate) members: Vec<Member>,
    pub(crate) config: Config,
    by_name: HashMap<String, usize>,
}

impl Workspace {
    /// Run `cargo metadata --no-deps --offline` on the manifest (or the current directory).
    pub(crate) fn load(manifest_path: Option<&Path>) -> Result<Workspace, LintError> {
        let mut command = MetadataCommand::new();
        command
            .no_deps()
            .other_options(vec!["--offline".to_owned()]);
        if let Some(path) = manifest_path {
            if !path.is_file() {
                return Err(LintError::NoManifest(path.to_owned()));
            }
            command.manifest_path(path);
        }
        let metadata = command.exec().map_err(|e| match e {
            cargo_metadata::Error::CargoMetadata { stderr } => {
                LintError::Metadata(stderr.trim_end().to_owned())
            }
            other => LintError::Metadata(other.to_string()),
        })?;
        let config = Config::from_workspace_metadata(&metadata.workspace_metadata)?;
        let mut members: Vec<Member> = metadata
            .workspace_packages()
            .into_iter()
            .map(|package| {
                let manifest_path = PathBuf::from(package.manifest_path.as_std_path());
                let dir = manifest_path
                    .parent()
                    .map_or_else(PathBuf::new, Path::to_path_buf);
                let mut roots = Vec::new();
                let mut lib_name = None;
                for target in &package.targets {
                    let ships = target.kind.iter().any(|k| {
                        !matches!(
                            k,
                            TargetKind::Test | TargetKind::Bench | TargetKind::Example
                        )
                    });
                    if ships {
                        roots.push(PathBuf::from(target.src_path.as_std_path()));
                    }
                    if target.is_lib() || target.is_proc_macro() {
                        lib_name = Some(target.name.replace('-', "_"));
                    }
                }
                let deps = package
                    .dependencies
                    .iter()
                    .map(|d| Dep {
                        package: d.name.clone(),
                        key: d.rename.clone().unwrap_or_else(|| d.name.clone()),
                        kind: match d.kind {
                            DependencyKind::Build => Kind::Build,
                            DependencyKind::Development => Kind::Dev,
                            _ => Kind::Normal,
                        },
                        target: d.target.as_ref().map(ToString::to_string),
                        extern_name: d.rename.as_ref().unwrap_or(&d.name).replace('-', "_"),
                    })
                    .collect();
                Member {
                    name: package.name.to_string(),
                    manifest_path,
                    dir,
                    roots,
                    lib_name,
                    deps,
                    sandloom_metadata: package.metadata.get("sandloom").cloned(),
                }
            })
            .collect();
        members.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = members
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), i))
            .collect();
        let mut workspace = Workspace {
            root: PathBuf::from(metadata.workspace_root.as_std_path()),
            members,
            config,
            by_name,
        };
        workspace.fix_extern_names();
        Ok(workspace)
    }

    /// A member's lib may be named apart from its package (`[lib] name = …`).
    fn fix_extern_names(&mut self) {
        let libs: HashMap<String, String> = self
            .members
            .iter()
            .filter_map(|m| m.lib_name.clone().map(|lib| (m.name.clone(), lib)))
            .collect();
        for member in &mut self.members {
            for dep in &mut member.deps {
                if dep.key == dep.package
                    && let Some(lib) = libs.get(&dep.package)
                {
                    dep.extern_name.clone_from(lib);
                }
            }
        }
    }

    /// The member of this name.
    pub(crate) fn member(&self, name: &str) -> Option<&Member> {
        self.by_name.get(name).map(|&i| &self.members[i])
    }

    /// Index of the member of this name.
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Everything `start` reaches through dependencies that ship (first hop: the kinds
    /// `first_hop` accepts), walking only through workspace members, since only their
    /// manifests are read. Each reached package comes with the shortest chain to it, starting
    /// with the direct dependency's index in `start.deps`.
    pub(crate) fn reachable(
        &self,
        start: &Member,
        first_hop: impl Fn(&Dep) -> bool,
    ) -> BTreeMap<String, (usize, Vec<String>)> {
        let mut seen: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
        let mut queue: std::collections::VecDeque<(String, usize, Vec<String>)> = start
            .deps
            .iter()
            .enumerate()
            .filter(|(_, d)| first_hop(d))
            .map(|(i, d)| (d.package.clone(), i, vec![d.package.clone()]))
            .collect();
        while let Some((name, first, chain)) = queue.pop_front() {
            if name == start.name || seen.contains_key(&name) {
                continue;
            }
            if let Some(member) = self.member(&name) {
                for dep in member.deps.iter().filter(|d| d.kind.ships()) {
                    let mut next = chain.clone();
                    next.push(dep.package.clone());
                    queue.push_back((dep.package.clone(), first, next));
                }
            }
            seen.insert(name, (first, chain));
        }
        seen
    }

    /// `path` relative to the workspace root when it lies under it.
    pub(crate) fn relative(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }
}
