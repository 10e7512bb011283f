//! The file system work of `objectstore.fs`, run on the blocking pool.

use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, ErrorKind as IoKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sandloom_driverkit::DriverError;
use sandloom_driverkit::objectstore::{NAME, ObjectMeta, PutCondition, validate_key};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};

use super::TMP_DIR;
use crate::objectstore_memory::{EtagHasher, check_condition, etag_of};

/// How often a write retries its rename when a concurrent `delete` removed the (then empty)
/// parent directory between creating it and renaming into it.
const RENAME_ATTEMPTS: usize = 8;

/// What the path of a key is, looked at without following symbolic links.
#[derive(Debug)]
pub(super) enum Found {
    /// A regular file: the object.
    File,
    /// Nothing there.
    Missing,
    /// A directory: other keys have this key as a prefix.
    Dir,
    /// An ancestor is a file (an object), so nothing can be under it.
    UnderFile,
}

/// The root of a store and its staging directory.
#[derive(Debug)]
pub(crate) struct Paths {
    pub(super) root: PathBuf,
    tmp: PathBuf,
    /// Distinguishes staged files of driver instances sharing a root within one process.
    pub(super) salt: u64,
}

/// An I/O failure as an [`InfraError`]. `writing` says whether the operation creates files,
/// where meeting a directory or a file in the way means the key is taken (`Conflict`).
pub(super) fn io_error(action: &str, key: &str, writing: bool, err: io::Error) -> InfraError {
    let message = format!("cannot {action} {key:?}: {err}");
    let error = match err.kind() {
        IoKind::NotFound => InfraError::not_found(NAME, message),
        IoKind::NotADirectory | IoKind::IsADirectory if !writing => {
            InfraError::not_found(NAME, message)
        }
        IoKind::NotADirectory
        | IoKind::IsADirectory
        | IoKind::AlreadyExists
        | IoKind::DirectoryNotEmpty => InfraError::conflict(NAME, message),
        IoKind::InvalidFilename | IoKind::InvalidInput => InfraError::invalid_input(NAME, message),
        IoKind::StorageFull
        | IoKind::QuotaExceeded
        | IoKind::ResourceBusy
        | IoKind::TimedOut
        | IoKind::Interrupted
        | IoKind::WouldBlock
        | IoKind::OutOfMemory => InfraError::unavailable(NAME, message),
        _ => InfraError::new(sandloom_driverkit::sdk::ErrorKind::Backend, NAME, message),
    };
    error.with_source(err)
}

/// Removes a staged file when dropped, unless it was renamed into place.
struct Staged<'a> {
    path: &'a Path,
    done: bool,
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(self.path);
        }
    }
}

/// Read `file` to its end, hashing as it goes: its etag and size.
fn hash_file(file: &mut File) -> io::Result<EtagHasher> {
    let mut hasher = EtagHasher::default();
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Ok(hasher),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(err) if err.kind() == IoKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

/// Make sure `path`'s data and name reach the disk: sync its directory (Unix only; elsewhere
/// directories cannot be opened for syncing, and the rename is as durable as the OS makes it).
fn sync_dir(path: &Path) {
    if cfg!(unix)
        && let Ok(dir) = File::open(path)
    {
        let _ = dir.sync_all();
    }
}

impl Paths {
    pub(super) fn new(root: PathBuf) -> Self {
        Self {
            tmp: root.join(TMP_DIR),
            root,
            salt: RandomState::new().hash_one(SystemTime::now()),
        }
    }

    /// `start`: create the root and the staging directory, and clear stale staged files.
    pub(super) fn prepare(&self, stale_after: Duration) -> Result<(), DriverError> {
        let root = self.root.display();
        fs::create_dir_all(&self.root).map_err(|err| {
            DriverError::new(format!("cannot create the object store root {root}")).with_source(err)
        })?;
        let meta = fs::metadata(&self.root).map_err(|err| {
            DriverError::new(format!("cannot read the object store root {root}")).with_source(err)
        })?;
        if !meta.is_dir() {
            return Err(DriverError::new(format!(
                "the object store root {root} is not a directory"
            )));
        }
        match fs::symlink_metadata(&self.tmp) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(DriverError::new(format!(
                    "{} must be a directory (it stages writes)",
                    self.tmp.display()
                )));
            }
            Err(err) if err.kind() == IoKind::NotFound => {
                fs::create_dir(&self.tmp).map_err(|err| {
                    DriverError::new(format!("cannot create {}", self.tmp.display()))
                        .with_source(err)
                })?;
            }
            Err(err) => {
                return Err(
                    DriverError::new(format!("cannot read {}", self.tmp.display()))
                        .with_source(err),
                );
            }
        }
        // Best effort: a staged file this old belongs to a write that crashed.
        if let Ok(entries) = fs::read_dir(&self.tmp) {
            for entry in entries.flatten() {
                let stale = entry
                    .metadata()
                    .and_then(|meta| meta.modified())
                    .ok()
                    .and_then(|modified| modified.elapsed().ok())
                    .is_some_and(|age| age > stale_after);
                if stale {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// The path of `key`, or `InvalidInput` when the key breaks the rules.
    pub(super) fn resolve(&self, key: &str) -> InfraResult<PathBuf> {
        validate_key(key)?;
        if key.split('/').next() == Some(TMP_DIR) {
            return Err(InfraError::invalid_input(
                NAME,
                format!("object key {key:?} is reserved: `{TMP_DIR}` stages writes"),
            ));
        }
        Ok(self.root.join(key))
    }

    /// What is at `key`'s path. Refuses (`InvalidInput`) a path through a symbolic link.
    pub(super) fn inspect(&self, key: &str, writing: bool) -> InfraResult<(PathBuf, Found)> {
        let target = self.resolve(key)?;
        let mut path = self.root.clone();
        let mut segments = key.split('/').peekable();
        while let Some(segment) = segments.next() {
            path.push(segment);
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(err) if err.kind() == IoKind::NotFound => return Ok((target, Found::Missing)),
                Err(err) if err.kind() == IoKind::NotADirectory => {
                    return Ok((target, Found::UnderFile));
                }
                Err(err) => return Err(io_error("inspect", key, writing, err)),
            };
            if meta.file_type().is_symlink() {
                return Err(InfraError::invalid_input(
                    NAME,
                    format!("object key {key:?} passes through a symbolic link"),
                ));
            }
            let last = segments.peek().is_none();
            if last {
                return Ok((
                    target,
                    if meta.is_dir() {
                        Found::Dir
                    } else {
                        Found::File
                    },
                ));
            }
            if !meta.is_dir() {
                return Ok((target, Found::UnderFile));
            }
        }
        // `validate_key` refuses the empty key, so the loop always returns.
        Ok((target, Found::Missing))
    }

    /// The path of an existing object, or `NotFound`.
    fn object(&self, key: &str) -> InfraResult<PathBuf> {
        match self.inspect(key, false)? {
            (path, Found::File) => Ok(path),
            _ => Err(InfraError::not_found(NAME, format!("no object {key:?}"))),
        }
    }

    pub(super) fn get(&self, key: &str) -> InfraResult<Bytes> {
        let path = self.object(key)?;
        fs::read(&path)
            .map(Bytes::from)
            .map_err(|err| io_error("read", key, false, err))
    }

    pub(super) fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        let path = self.object(key)?;
        Self::meta_of(key, &path).map_err(|err| io_error("read", key, false, err))
    }

    /// Size, etag and modification time of the file at `path`, read through one handle so
    /// they describe the same version of it.
    pub(super) fn meta_of(key: &str, path: &Path) -> io::Result<ObjectMeta> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from(IoKind::IsADirectory));
        }
        let hasher = hash_file(&mut file)?;
        let mut object = ObjectMeta::new(key, hasher.len()).with_etag(hasher.finish());
        if let Ok(modified) = meta.modified() {
            object = object.with_last_modified(modified);
        }
        Ok(object)
    }

    /// Write `data` under `key` through the staging file `temp`, when `condition` holds.
    pub(super) fn put(
        &self,
        key: &str,
        data: &[u8],
        temp: &str,
        condition: Option<&PutCondition>,
    ) -> InfraResult<ObjectMeta> {
        let (path, found) = self.inspect(key, true)?;
        match found {
            Found::Dir => {
                return Err(InfraError::conflict(
                    NAME,
                    format!("{key:?} is the prefix of other objects, so it cannot be one"),
                ));
            }
            Found::UnderFile => {
                return Err(InfraError::conflict(
                    NAME,
                    format!("a prefix of {key:?} is an object, so nothing can be under it"),
                ));
            }
            Found::File | Found::Missing => {}
        }
        if let Some(condition) = condition {
            let current = match found {
                Found::File => match Self::meta_of(key, &path) {
                    Ok(meta) => meta.etag,
                    Err(err) if err.kind() == IoKind::NotFound => None,
                    Err(err) => return Err(io_error("read", key, true, err)),
                },
                _ => None,
            };
            check_condition(key, current.as_deref(), condition)?;
        }
        let fail = |err| io_error("write", key, true, err);
        let staged_path = self.tmp.join(temp);
        let mut staged = Staged {
            path: &staged_path,
            done: false,
        };
        let modified = {
            let mut file = match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&staged_path)
            {
                Err(err) if err.kind() == IoKind::NotFound => {
                    // The staging directory is gone (used before `start`, or removed): recreate.
                    fs::create_dir_all(&self.tmp).map_err(fail)?;
                    OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&staged_path)
                }
                other => other,
            }
            .map_err(fail)?;
            file.write_all(data).map_err(fail)?;
            file.sync_all().map_err(fail)?;
            file.metadata().and_then(|meta| meta.modified()).ok()
        };
        let parent = path.parent().unwrap_or(&self.root);
        let mut attempt = 0;
        loop {
            attempt += 1;
            fs::create_dir_all(parent).map_err(fail)?;
            match fs::rename(&staged_path, &path) {
                Ok(()) => break,
                Err(err) if err.kind() == IoKind::NotFound && attempt < RENAME_ATTEMPTS => {}
                Err(err) => return Err(fail(err)),
            }
        }
        staged.done = true;
        sync_dir(parent);
        let meta = ObjectMeta::new(key, data.len() as u64)
            .with_etag(etag_of(data))
            .with_last_modified(modified.unwrap_or_else(SystemTime::now));
        Ok(meta)
    }

    /// Remove the object under `key` (if any) and the directories that leaves empty.
    pub(super) fn delete(&self, key: &str) -> InfraResult<()> {
        let (path, found) = self.inspect(key, true)?;
        if !matches!(found, Found::File) {
            return Ok(());
        }
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(err) if err.kind() == IoKind::NotFound => return Ok(()),
            Err(err) => return Err(io_error("delete", key, true, err)),
        }
        // Remove the directories this leaves empty; stop at the first that is not (or at root).
        let mut kept = self.root.as_path();
        let mut dir = path.parent();
        while let Some(current) = dir {
            if current == self.root || !current.starts_with(&self.root) {
                break;
            }
            if fs::remove_dir(current).is_err() {
                kept = current;
                break;
            }
            dir = current.parent();
        }
        sync_dir(kept);
        Ok(())
    }
}
