//! The `secrets` kit against `secrets.memory`, `secrets.env` and `secrets.file`, each with the
//! seeder that writes where the driver reads.

use sandloom_conformance::secrets::Seed;
use sandloom_embedded::{
    EnvSecrets, EnvSecretsOptions, FileSecrets, FileSecretsOptions, MemorySecretStore,
    MemorySecrets, MemorySecretsOptions,
};

/// The memory store of an instance: named after its scratch directory, unique per instance
/// (the namespace is shared by the two runs of the memory kit below).
fn store_name(request: &sandloom_conformance::KitRequest) -> String {
    request.scratch_dir.display().to_string()
}

/// `secrets.memory`: the instance's named store, seeded through its handle.
fn memory_seed(request: &sandloom_conformance::KitRequest, seed: &Seed) -> Result<(), String> {
    let store = MemorySecretStore::named(&store_name(request));
    match seed {
        Seed::Set { name, value } => store.set(name, value.clone()).map(drop),
        Seed::Remove { name } => store.remove(name).map(drop),
        _ => return Err(format!("this seeder does not know {seed:?}")),
    }
    .map_err(|e| e.to_string())
}

sandloom_conformance::secrets_conformance!(
    memory: MemorySecrets,
    |request| MemorySecretsOptions {
        store: Some(store_name(request)),
        ..Default::default()
    },
    .seeder(memory_seed)
);

sandloom_conformance::secrets_conformance!(
    memory_small_limit: MemorySecrets,
    |request| MemorySecretsOptions {
        store: Some(store_name(request)),
        max_value_bytes: 4096,
    },
    .seeder(memory_seed)
    .max_value_bytes(4096)
);

/// `secrets.env`: the prefix of the instance's variables, made from its scratch directory's
/// name (unique per instance).
fn env_prefix(request: &sandloom_conformance::KitRequest) -> String {
    let directory: String = request
        .scratch_dir
        .file_name()
        .expect("a temporary directory has a name")
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("SANDLOOM_KIT_{directory}_")
}

/// `secrets.env`: sets and removes the process's variables. Each obligation's instance has a
/// prefix of its own, so obligations running at once never see each other's variables; Rust's
/// own `getenv`/`setenv` calls are serialized by the standard library.
fn env_seed(request: &sandloom_conformance::KitRequest, seed: &Seed) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let prefix = env_prefix(request);
    match seed {
        Seed::Set { name, value } => {
            let variable = EnvSecrets::variable(&prefix, name).map_err(|e| e.to_string())?;
            // SAFETY: the test process reads its environment only through `std::env`, which
            // takes the standard library's environment lock; no C code of ours calls getenv.
            #[allow(unsafe_code)]
            unsafe {
                std::env::set_var(variable, std::ffi::OsStr::from_bytes(value));
            }
        }
        Seed::Remove { name } => {
            let variable = EnvSecrets::variable(&prefix, name).map_err(|e| e.to_string())?;
            // SAFETY: as above.
            #[allow(unsafe_code)]
            unsafe {
                std::env::remove_var(variable);
            }
        }
        _ => return Err(format!("this seeder does not know {seed:?}")),
    }
    Ok(())
}

sandloom_conformance::secrets_conformance!(
    env: EnvSecrets,
    |request| EnvSecretsOptions::new(env_prefix(request)),
    .seeder(env_seed)
    .without_nul_bytes()
);

/// `secrets.file`, a plain tree: the directory the instance reads.
fn file_root(request: &sandloom_conformance::KitRequest) -> std::path::PathBuf {
    request.scratch_dir.join("secrets")
}

/// A file name no other write of this process uses, for staging a write beside the tree.
fn staging(request: &sandloom_conformance::KitRequest) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    request
        .scratch_dir
        .join(format!("staged-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// Write `value` at `path` atomically (staged beside the tree, then renamed into place), as a
/// deployment tool would, making the folders it needs.
fn write_atomically(
    request: &sandloom_conformance::KitRequest,
    path: &std::path::Path,
    value: &[u8],
) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let staged = staging(request);
    std::fs::write(&staged, value)?;
    std::fs::rename(staged, path)
}

fn remove_file(path: &std::path::Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// `secrets.file`, a plain tree: files written in place (atomically) and removed.
fn file_seed(request: &sandloom_conformance::KitRequest, seed: &Seed) -> Result<(), String> {
    let root = file_root(request);
    match seed {
        Seed::Set { name, value } => write_atomically(request, &root.join(name), value),
        Seed::Remove { name } => remove_file(&root.join(name)),
        _ => return Err(format!("this seeder does not know {seed:?}")),
    }
    .map_err(|e| e.to_string())
}

/// The volume goes away: its directory is moved out of the instance's reach.
fn file_outage(request: &sandloom_conformance::KitRequest) -> Result<(), String> {
    std::fs::rename(file_root(request), request.scratch_dir.join("unmounted"))
        .map_err(|e| e.to_string())
}

fn file_options(request: &sandloom_conformance::KitRequest) -> FileSecretsOptions {
    std::fs::create_dir_all(file_root(request)).expect("the kit's scratch directory");
    FileSecretsOptions {
        poll_interval_ms: 20,
        ..FileSecretsOptions::new(file_root(request))
    }
}

sandloom_conformance::secrets_conformance!(
    file: FileSecrets,
    file_options,
    .seeder(file_seed)
    .outage(file_outage)
);

/// `secrets.file` as Kubernetes mounts a secret: the volume's directory.
fn mount(request: &sandloom_conformance::KitRequest) -> std::path::PathBuf {
    request.scratch_dir.join("mount")
}

/// Copy the tree `from` into the new directory `to` (no links in it: the kit writes files only).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// What Kubernetes' atomic writer does for every update of a secret volume: a new timestamped
/// directory with the whole new content, a `..data_tmp` link to it renamed over `..data` (the
/// one atomic step), the visible top-level links `name -> ..data/name`, and the old directory
/// removed.
fn kubernetes_seed(request: &sandloom_conformance::KitRequest, seed: &Seed) -> Result<(), String> {
    use std::os::unix::fs::symlink;
    use std::sync::atomic::{AtomicU64, Ordering};
    static GENERATION: AtomicU64 = AtomicU64::new(0);
    let root = mount(request);
    let swap = || -> std::io::Result<()> {
        let old = std::fs::read_link(root.join("..data"))?;
        let new = format!(
            "..2026_12_02_{}",
            GENERATION.fetch_add(1, Ordering::Relaxed)
        );
        copy_tree(&root.join(&old), &root.join(&new))?;
        match seed {
            Seed::Set { name, value } => {
                let path = root.join(&new).join(name);
                std::fs::create_dir_all(path.parent().expect("a name has a parent here"))?;
                std::fs::write(path, value)?;
            }
            Seed::Remove { name } => remove_file(&root.join(&new).join(name))?,
            _ => return Err(std::io::Error::other(format!("unknown {seed:?}"))),
        }
        symlink(&new, root.join("..data_tmp"))?;
        std::fs::rename(root.join("..data_tmp"), root.join("..data"))?;
        for entry in std::fs::read_dir(root.join(&new))? {
            let visible = root.join(entry?.file_name());
            if std::fs::symlink_metadata(&visible).is_err() {
                let name = visible.file_name().expect("an entry has a name").to_owned();
                symlink(std::path::Path::new("..data").join(name), &visible)?;
            }
        }
        std::fs::remove_dir_all(root.join(old))
    };
    swap().map_err(|e| e.to_string())
}

fn kubernetes_options(request: &sandloom_conformance::KitRequest) -> FileSecretsOptions {
    use std::os::unix::fs::symlink;
    let root = mount(request);
    std::fs::create_dir_all(root.join("..2026_12_01_first")).expect("the kit's scratch directory");
    if std::fs::symlink_metadata(root.join("..data")).is_err() {
        symlink("..2026_12_01_first", root.join("..data")).expect("the first `..data`");
    }
    FileSecretsOptions {
        poll_interval_ms: 20,
        ..FileSecretsOptions::new(root)
    }
}

fn kubernetes_outage(request: &sandloom_conformance::KitRequest) -> Result<(), String> {
    std::fs::rename(mount(request), request.scratch_dir.join("unmounted"))
        .map_err(|e| e.to_string())
}

sandloom_conformance::secrets_conformance!(
    file_kubernetes: FileSecrets,
    kubernetes_options,
    .seeder(kubernetes_seed)
    .outage(kubernetes_outage)
);
