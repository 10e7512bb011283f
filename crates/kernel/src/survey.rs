//! What the application's dependencies provide, read from their sources when an error is being
//! explained: which register drivers (`register_driver!`) and which define capabilities
//! (`define_capability!`, by name). SANDLOOM-B020 names only unlinked dependencies that
//! register drivers, and SANDLOOM-B010 for an unknown capability names the unlinked dependency
//! that defines it.
//!
//! A crate that no code names is not in the binary, so nothing linked can say what it holds:
//! its source is the only witness. Cargo locates it (`cargo metadata`, with the `cargo` that
//! built the application, offline, without writing its lock file); where Cargo or the sources are not there (a deployed
//! binary), there is no survey, and the errors name no crate rather than guess.
//!
//! `cargo metadata` wants every package of the lock file on disk, also those no build of this
//! target ever fetches (an optional dependency no enabled feature turns on: `lapin`'s
//! `tcp-stream` on a fresh machine). Offline, it then fails; the survey is then read from what
//! is on disk instead ([`survey_from_disk`]): the application's manifest as Cargo reads it
//! (`cargo metadata --no-deps`, which needs no other package), the versions its lock file
//! pins, and those packages' sources where Cargo unpacked them (a path, or the registry's
//! `src` directory under `CARGO_HOME`). A dependency that is not on disk is not built here,
//! and is left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::link::LinkedDrivers;

/// What one dependency's sources show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Provides {
    /// It calls `register_driver!`.
    pub(crate) drivers: bool,
    /// The names of the capabilities it defines with `define_capability!`.
    pub(crate) capabilities: Vec<String>,
}

/// Each direct dependency of the application, by the name code uses (`my_drivers`), with what
/// its sources provide.
pub(crate) type Survey = BTreeMap<String, Provides>;

/// Sandloom's own crates, which hold the macros rather than use them.
const SANDLOOM_CRATES: &[&str] = &[
    "sandloom",
    "sandloom-kernel",
    "sandloom-sdk-infra",
    "sandloom-driverkit",
    "sandloom-conformance",
    "sandloom-cli",
];

/// A crate's sources are read up to this many files: a driver crate is small, and an error
/// must not wait on a large dependency's tree.
const MAX_FILES: usize = 2_000;

/// The survey of `linked`'s application, made once per process (`cargo metadata` takes a
/// fraction of a second), or `None` when Cargo or the sources cannot be found.
pub(crate) fn survey(linked: &LinkedDrivers) -> Option<&'static Survey> {
    if linked.manifest_dir().is_empty() {
        return None;
    }
    let mut surveys = surveys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *surveys
        .entry(linked.manifest_dir())
        // Leaked once per application manifest: a process has one.
        .or_insert_with(|| take_survey(linked).map(|survey| &*Box::leak(Box::new(survey))))
}

/// The surveys taken, by manifest directory.
type Surveys = Mutex<BTreeMap<&'static str, Option<&'static Survey>>>;

fn surveys() -> &'static Surveys {
    static SURVEYS: OnceLock<Surveys> = OnceLock::new();
    SURVEYS.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Give the application at `manifest_dir` (a made-up one) `survey`, for tests of the errors
/// that read it.
#[cfg(test)]
pub(crate) fn preset(manifest_dir: &'static str, survey: Survey) {
    surveys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(manifest_dir, Some(Box::leak(Box::new(survey))));
}

#[derive(serde::Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    resolve: Option<Resolve>,
}

#[derive(serde::Deserialize)]
struct Package {
    id: String,
    name: String,
    targets: Vec<Target>,
}

#[derive(serde::Deserialize)]
struct Target {
    kind: Vec<String>,
    src_path: PathBuf,
}

#[derive(serde::Deserialize)]
struct Resolve {
    root: Option<String>,
    nodes: Vec<Node>,
}

#[derive(serde::Deserialize)]
struct Node {
    id: String,
    deps: Vec<NodeDep>,
}

#[derive(serde::Deserialize)]
struct NodeDep {
    name: String,
    pkg: String,
}

fn take_survey(linked: &LinkedDrivers) -> Option<Survey> {
    let manifest = Path::new(linked.manifest_dir()).join("Cargo.toml");
    if !manifest.is_file() {
        return None;
    }
    let cargo = linked
        .cargo()
        .filter(|cargo| Path::new(cargo).is_file())
        .map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    // `--filter-platform`: no package of another platform needs to be on disk.
    match cargo_metadata(
        &cargo,
        &manifest,
        &["--filter-platform", env!("SANDLOOM_KERNEL_TARGET")],
    ) {
        Some(metadata) => Some(survey_of(&metadata)),
        // Some package of the lock file is not on disk (see the module's documentation).
        None => survey_from_disk(&cargo, &manifest),
    }
}

/// `cargo metadata` of `manifest` with `args`, offline and without writing its lock file
/// (`--frozen`), or `None` when Cargo fails.
fn cargo_metadata<M: serde::de::DeserializeOwned>(
    cargo: &Path,
    manifest: &Path,
    args: &[&str],
) -> Option<M> {
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--frozen"])
        .args(args)
        .arg("--manifest-path")
        .arg(manifest)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

/// `cargo metadata --no-deps`: the workspace's own packages, with their dependencies as
/// declared.
#[derive(serde::Deserialize)]
struct Declared {
    packages: Vec<DeclaredPackage>,
    workspace_root: PathBuf,
}

#[derive(serde::Deserialize)]
struct DeclaredPackage {
    manifest_path: PathBuf,
    dependencies: Vec<Dependency>,
}

#[derive(serde::Deserialize)]
struct Dependency {
    name: String,
    rename: Option<String>,
    req: String,
    source: Option<String>,
    path: Option<PathBuf>,
}

/// The packages a lock file pins.
#[derive(serde::Deserialize, Default)]
struct Lock {
    #[serde(default)]
    package: Vec<Locked>,
}

#[derive(serde::Deserialize)]
struct Locked {
    name: String,
    version: String,
    source: Option<String>,
}

/// The survey read from what is on disk, when `cargo metadata` cannot see every package of the
/// lock file (see the module's documentation).
fn survey_from_disk(cargo: &Path, manifest: &Path) -> Option<Survey> {
    let declared: Declared = cargo_metadata(cargo, manifest, &["--no-deps"])?;
    let manifest = manifest.canonicalize().ok()?;
    let root = declared
        .packages
        .iter()
        .find(|p| p.manifest_path.canonicalize().ok().as_deref() == Some(manifest.as_path()))?;
    let lock: Lock = std::fs::read_to_string(declared.workspace_root.join("Cargo.lock"))
        .ok()
        .and_then(|text| toml::from_str(&text).ok())
        .unwrap_or_default();
    let registry_sources = cargo_home().map(|home| home.join("registry").join("src"));
    let mut survey = Survey::new();
    for dependency in &root.dependencies {
        if SANDLOOM_CRATES.contains(&dependency.name.as_str()) {
            continue;
        }
        let dir = match (&dependency.path, &dependency.source) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(source)) if source.starts_with("registry+") => registry_sources
                .as_deref()
                .and_then(|sources| unpacked(sources, dependency, &lock)),
            // A git dependency, or one with no source Cargo reports: not looked for.
            _ => None,
        };
        let Some(dir) = dir.filter(|dir| dir.join("Cargo.toml").is_file()) else {
            continue;
        };
        let (library, sources) = library_of(&dir, &dependency.name);
        let name = dependency
            .rename
            .clone()
            .unwrap_or(library)
            .replace('-', "_");
        // A dependency declared twice (normal and dev, or per target) is read once.
        survey.entry(name).or_insert_with(|| read_sources(&sources));
    }
    Some(survey)
}

/// Where Cargo unpacked the version of registry `dependency` that `lock` pins (the highest
/// that its requirement accepts, when several are pinned).
fn unpacked(sources: &Path, dependency: &Dependency, lock: &Lock) -> Option<PathBuf> {
    let requirement = semver::VersionReq::parse(&dependency.req).ok()?;
    let version = lock
        .package
        .iter()
        .filter(|p| {
            p.name == dependency.name
                && p.source
                    .as_deref()
                    .is_some_and(|s| s.starts_with("registry+"))
        })
        .filter_map(|p| semver::Version::parse(&p.version).ok())
        .filter(|version| requirement.matches(version))
        .max()?;
    let directory = format!("{}-{version}", dependency.name);
    // One directory per registry (`index.crates.io-…`).
    std::fs::read_dir(sources)
        .ok()?
        .flatten()
        .map(|registry| registry.path().join(&directory))
        .find(|dir| dir.is_dir())
}

/// The library name code uses and the directory of its sources, for the package at `dir`:
/// its manifest's `[lib]` `name` and `path`, or the defaults (`package`, `src/`).
fn library_of(dir: &Path, package: &str) -> (String, PathBuf) {
    #[derive(serde::Deserialize, Default)]
    struct Manifest {
        #[serde(default)]
        lib: Library,
    }
    #[derive(serde::Deserialize, Default)]
    struct Library {
        name: Option<String>,
        path: Option<PathBuf>,
    }
    let manifest: Manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|text| toml::from_str(&text).ok())
        .unwrap_or_default();
    let sources = manifest
        .lib
        .path
        .and_then(|path| dir.join(path).parent().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.join("src"));
    (
        manifest.lib.name.unwrap_or_else(|| package.to_owned()),
        sources,
    )
}

/// Cargo's home: `CARGO_HOME`, or `.cargo` in the user's home directory.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
}

fn survey_of(metadata: &Metadata) -> Survey {
    let Some(resolve) = &metadata.resolve else {
        return Survey::new();
    };
    let Some(root) = resolve
        .root
        .as_ref()
        .and_then(|root| resolve.nodes.iter().find(|node| &node.id == root))
    else {
        return Survey::new();
    };
    let mut survey = Survey::new();
    for dependency in &root.deps {
        let Some(package) = metadata.packages.iter().find(|p| p.id == dependency.pkg) else {
            continue;
        };
        if SANDLOOM_CRATES.contains(&package.name.as_str()) {
            continue;
        }
        let provides = package
            .targets
            .iter()
            .find(|target| target.kind.iter().any(|kind| kind.ends_with("lib")))
            .and_then(|lib| lib.src_path.parent())
            .map(read_sources)
            .unwrap_or_default();
        survey.insert(dependency.name.clone(), provides);
    }
    survey
}

/// What the Rust files under `dir` call.
fn read_sources(dir: &Path) -> Provides {
    let mut provides = Provides::default();
    let mut pending = vec![dir.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && files < MAX_FILES {
                files += 1;
                if let Ok(text) = std::fs::read_to_string(&path) {
                    read_source(&text, &mut provides);
                }
            }
        }
    }
    provides.capabilities.sort();
    provides.capabilities.dedup();
    provides
}

/// The macro calls of one file, comments left out (doc examples mention the macros).
pub(crate) fn read_source(text: &str, provides: &mut Provides) {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    if code.contains("register_driver!") {
        provides.drivers = true;
    }
    let mut rest = code.as_str();
    while let Some(at) = rest.find("define_capability!") {
        rest = &rest[at + "define_capability!".len()..];
        // The capability's name is the first `name: "…"` of the call.
        let name = rest
            .find("name:")
            .map(|at| rest[at + "name:".len()..].trim_start())
            .and_then(|value| value.strip_prefix('"'))
            .and_then(|value| value.split_once('"'))
            .map(|(name, _)| name.to_owned());
        if let Some(name) = name {
            provides.capabilities.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{Provides, read_source};

    #[test]
    fn macro_calls_are_read_and_comments_are_not() {
        let mut provides = Provides::default();
        read_source(
            "//! ```\n//! sandloom_driverkit::register_driver!(cache, \"x\", X);\n//! ```\n\
             sandloom_driverkit::define_capability! {\n    pub capability Fulltext {\n        name: \"fulltext\",\n",
            &mut provides,
        );
        assert_eq!(
            provides,
            Provides {
                drivers: false,
                capabilities: vec!["fulltext".to_owned()]
            }
        );
        read_source(
            "register_driver!(capability = F, driver = \"m\", provider = M);",
            &mut provides,
        );
        assert!(provides.drivers);
    }

    /// Read from disk (as when `cargo metadata` cannot see every locked package): a registry
    /// dependency is found where Cargo unpacked it, a path dependency at its path, hyphenated
    /// names as code writes them, and the macros each one calls.
    #[test]
    fn the_survey_from_disk_finds_registry_and_path_dependencies() {
        let cargo = std::env::var_os("CARGO").map_or_else(|| "cargo".into(), PathBuf::from);
        let kernel = Path::new(env!("CARGO_MANIFEST_DIR"));
        let survey = super::survey_from_disk(&cargo, &kernel.join("Cargo.toml"))
            .expect("cargo and the sources are here");
        assert_eq!(
            survey.get("strsim"),
            Some(&Provides::default()),
            "{survey:?}"
        );
        assert!(survey.contains_key("serde_json"), "{survey:?}");
        assert!(!survey.contains_key("sandloom_kernel"), "{survey:?}");

        let tests = kernel.join("../integration-tests/Cargo.toml");
        let survey = super::survey_from_disk(&cargo, &tests).expect("the workspace's tests crate");
        let console = survey
            .get("sandloom_example_driver_console")
            .expect("a path dependency");
        assert!(console.drivers, "{survey:?}");
        let contracts = survey
            .get("sandloom_example_fulltext_contracts")
            .expect("a path dependency");
        assert_eq!(contracts.capabilities, ["fulltext"]);
        assert!(
            !survey.contains_key("sandloom"),
            "Sandloom's own crates are left out"
        );
    }

    #[test]
    fn this_workspace_s_driver_contract_and_module_crates_are_told_apart() {
        // The kernel's own manifest, as `link_drivers!` in the kernel embeds it: its
        // dependencies are no driver or contract crates.
        let linked = crate::link_drivers!();
        let survey = super::survey(&linked).expect("cargo and the sources are here");
        assert!(survey.contains_key("strsim"), "{survey:?}");
        assert!(
            survey
                .values()
                .all(|p| !p.drivers && p.capabilities.is_empty()),
            "{survey:?}"
        );
    }
}
