//! The store's objects as files: the file system work of each `objectstore.fs` operation, run
//! on the blocking pool.
//!
//! Every operation opens the root, then works through directory handles from
//! [`confined`](super::confined): no path under the root is ever given to the operating system,
//! so a symbolic link swapped in between a check and a use cannot redirect the use.

use std::fs::{self, File};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, ErrorKind as IoKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use sandloom_driverkit::DriverError;
use sandloom_driverkit::objectstore::{
    MAX_SEGMENT_BYTES, NAME, ObjectMeta, PutCondition, validate_key,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};

use super::TMP_DIR;
use crate::confined::{self, DIR, READ};
use crate::objectstore_memory::{EtagHasher, check_condition, etag_of};

/// How often a write makes its directories and renames into them again when a concurrent
/// `delete` removed one of them as empty in between.
const RENAME_ATTEMPTS: usize = 8;

/// Held shared by a write while it makes its directories and renames into them, and alone by a
/// `delete` while it removes the directories it left empty: within this process, a write never
/// loses its directory to a `delete` between the two (under a `delete` emptying the prefix
/// without pause, the retries alone lost 8 times in a row on a loaded machine, and the write
/// failed). One per process, so that instances sharing a root share it too; another process
/// removing directories is left to the retries.
static PRUNING: RwLock<()> = RwLock::new(());

/// Staged files are created `rw-rw-rw-` less the umask, as `std::fs::File::create` does.
const FILE_MODE: Mode = Mode::RUSR
    .union(Mode::WUSR)
    .union(Mode::RGRP)
    .union(Mode::WGRP)
    .union(Mode::ROTH)
    .union(Mode::WOTH);

/// The root of a store.
#[derive(Debug)]
pub(crate) struct Paths {
    pub(super) root: PathBuf,
    /// Distinguishes staged files of driver instances sharing a root within one process.
    pub(super) salt: u64,
    /// The longest file name the root's file system holds, as `start` found it: a key with a
    /// longer segment is refused by every operation alike.
    name_max: AtomicUsize,
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

/// The answer for a key whose path under the root passes through a symbolic link.
pub(super) fn through_link(key: &str) -> InfraError {
    InfraError::invalid_input(
        NAME,
        format!(
            "object key {key:?} passes through a symbolic link, which this store never follows"
        ),
    )
}

/// A failed system call about `key`: a link on the way refuses the key, else as [`io_error`].
pub(super) fn failed(action: &str, key: &str, writing: bool, err: Errno) -> InfraError {
    if confined::is_link(err) {
        through_link(key)
    } else {
        io_error(action, key, writing, err.into())
    }
}

/// `key` split into the directory holding it (`None`: the root) and its file name.
fn split(key: &str) -> (Option<&str>, &str) {
    match key.rsplit_once('/') {
        Some((parent, name)) => (Some(parent), name),
        None => (None, key),
    }
}

/// A directory handle that is the root or one beneath it.
enum Held<'a> {
    Root(BorrowedFd<'a>),
    Beneath(OwnedFd),
}

impl Held<'_> {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Held::Root(fd) => *fd,
            Held::Beneath(fd) => fd.as_fd(),
        }
    }
}

/// Removes a staged file when dropped, unless it was renamed into place.
struct Staged<'a> {
    dir: BorrowedFd<'a>,
    name: &'a str,
    done: bool,
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = rustix::fs::unlinkat(self.dir, self.name, AtFlags::empty());
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

/// Size, etag and modification time of the open `file`, read through that one handle so they
/// describe the same version of it.
pub(super) fn meta_of(key: &str, file: &mut File) -> io::Result<ObjectMeta> {
    let meta = file.metadata()?;
    let hasher = hash_file(file)?;
    let mut object = ObjectMeta::new(key, hasher.len()).with_etag(hasher.finish());
    if let Ok(modified) = meta.modified() {
        object = object.with_last_modified(modified);
    }
    Ok(object)
}

impl Paths {
    pub(super) fn new(root: PathBuf) -> Self {
        Self {
            root,
            salt: RandomState::new().hash_one(SystemTime::now()),
            name_max: AtomicUsize::new(MAX_SEGMENT_BYTES),
        }
    }

    /// `start`: create the root and the staging directory, and clear stale staged files.
    pub(super) fn prepare(&self, stale_after: Duration) -> Result<(), DriverError> {
        let root = self.root.display();
        fs::create_dir_all(&self.root).map_err(|err| {
            DriverError::new(format!("cannot create the object store root {root}")).with_source(err)
        })?;
        let dir = confined::open_root(&self.root).map_err(|err| {
            let what = if err == Errno::NOTDIR {
                format!("the object store root {root} is not a directory")
            } else {
                format!("cannot open the object store root {root}")
            };
            DriverError::new(what).with_source(io::Error::from(err))
        })?;
        if let Ok(stat) = rustix::fs::fstatvfs(&dir)
            && let Ok(name_max) = usize::try_from(stat.f_namemax)
            && name_max > 0
        {
            self.name_max
                .store(name_max.min(MAX_SEGMENT_BYTES), Ordering::Relaxed);
        }
        let tmp = Self::staging(dir.as_fd()).map_err(|err| {
            let tmp = self.root.join(TMP_DIR);
            let what = if matches!(err, Errno::NOTDIR | Errno::LOOP) {
                format!("{} must be a directory (it stages writes)", tmp.display())
            } else {
                format!("cannot open {}", tmp.display())
            };
            DriverError::new(what).with_source(io::Error::from(err))
        })?;
        // Best effort: a staged file this old belongs to a write that crashed.
        for (name, kind) in confined::entries(tmp.as_fd()).unwrap_or_default() {
            if kind != FileType::RegularFile {
                continue;
            }
            let stale = confined::step(tmp.as_fd(), &name, READ, Mode::empty())
                .ok()
                .map(File::from)
                .and_then(|file| file.metadata().ok())
                .and_then(|meta| meta.modified().ok())
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > stale_after);
            if stale {
                let _ = rustix::fs::unlinkat(&tmp, name.as_str(), AtFlags::empty());
            }
        }
        Ok(())
    }

    /// The staging directory, created when missing (a store used before `start`, or the
    /// directory removed since). `ELOOP` or `ENOTDIR` when something else has its name.
    fn staging(root: BorrowedFd<'_>) -> Result<OwnedFd, Errno> {
        confined::make_dir(root, TMP_DIR)
    }

    /// The root's handle. `create`: make the root when it is missing (a store written before
    /// `start`); otherwise `None` when it is missing, as a store with nothing in it.
    fn root(&self, key: &str, create: bool) -> InfraResult<Option<OwnedFd>> {
        match confined::open_root(&self.root) {
            Ok(dir) => Ok(Some(dir)),
            Err(Errno::NOENT) if create => {
                fs::create_dir_all(&self.root).map_err(|err| io_error("write", key, true, err))?;
                confined::open_root(&self.root)
                    .map(Some)
                    .map_err(|err| failed("write", key, true, err))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(err) => Err(io_error("open the root for", key, create, err.into())),
        }
    }

    /// `InvalidInput` when the key breaks the rules of this store: [`validate_key`], not
    /// under `.sandloom-tmp`, no segment longer than the file system's names. Every operation
    /// checks this first, so they all refuse the same keys.
    pub(super) fn check_key(&self, key: &str) -> InfraResult<()> {
        validate_key(key)?;
        if key.split('/').next() == Some(TMP_DIR) {
            return Err(InfraError::invalid_input(
                NAME,
                format!("object key {key:?} is reserved: `{TMP_DIR}` stages writes"),
            ));
        }
        let name_max = self.name_max.load(Ordering::Relaxed);
        if key.split('/').any(|segment| segment.len() > name_max) {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "object key {key:?} has a segment longer than {name_max} bytes, the longest \
                     file name the store's file system holds"
                ),
            ));
        }
        Ok(())
    }

    /// Open the object `key` for reading: `NotFound` unless a regular file is there.
    fn open_object(root: BorrowedFd<'_>, key: &str) -> InfraResult<File> {
        let missing = || InfraError::not_found(NAME, format!("no object {key:?}"));
        let file = match confined::open(root, key, READ, Mode::empty()) {
            Ok(fd) => File::from(fd),
            // Nothing there, or a file where a directory would have to be.
            Err(Errno::NOENT | Errno::NOTDIR) => return Err(missing()),
            Err(err) => return Err(failed("read", key, false, err)),
        };
        let meta = file
            .metadata()
            .map_err(|err| io_error("read", key, false, err))?;
        // A directory (other keys have this key as a prefix), a FIFO, a device: no object.
        if !meta.is_file() {
            return Err(missing());
        }
        Ok(file)
    }

    pub(super) fn get(&self, key: &str) -> InfraResult<Bytes> {
        self.check_key(key)?;
        let root = self
            .root(key, false)?
            .ok_or_else(|| InfraError::not_found(NAME, format!("no object {key:?}")))?;
        let mut file = Self::open_object(root.as_fd(), key)?;
        let mut data = Vec::new();
        file.read_to_end(&mut data)
            .map_err(|err| io_error("read", key, false, err))?;
        Ok(Bytes::from(data))
    }

    pub(super) fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        self.check_key(key)?;
        let root = self
            .root(key, false)?
            .ok_or_else(|| InfraError::not_found(NAME, format!("no object {key:?}")))?;
        let mut file = Self::open_object(root.as_fd(), key)?;
        meta_of(key, &mut file).map_err(|err| io_error("read", key, false, err))
    }

    /// Check that `key` (`name` in the directory `parent`) can be written: `Conflict` when a
    /// directory has its name or a file is where a directory must be. With `etag`, also the
    /// etag of the object there, if any.
    fn check_target(
        root: BorrowedFd<'_>,
        key: &str,
        (parent, name): (Option<&str>, &str),
        etag: bool,
    ) -> InfraResult<Option<String>> {
        let held = match parent {
            None => Held::Root(root),
            Some(parent) => match confined::open(root, parent, DIR, Mode::empty()) {
                Ok(fd) => Held::Beneath(fd),
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::NOTDIR) => {
                    return Err(InfraError::conflict(
                        NAME,
                        format!("a prefix of {key:?} is an object, so nothing can be under it"),
                    ));
                }
                Err(err) => return Err(failed("write", key, true, err)),
            },
        };
        match confined::file_type(held.fd(), name) {
            Ok(FileType::RegularFile) => {}
            Ok(FileType::Directory) => {
                return Err(InfraError::conflict(
                    NAME,
                    format!("{key:?} is the prefix of other objects, so it cannot be one"),
                ));
            }
            Ok(FileType::Symlink) => return Err(through_link(key)),
            Ok(_) => {
                return Err(InfraError::conflict(
                    NAME,
                    format!("{key:?} names something that is not a file"),
                ));
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(err) => return Err(failed("write", key, true, err)),
        }
        if !etag {
            return Ok(None);
        }
        let mut file = match confined::step(held.fd(), name, READ, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(Errno::NOENT) => return Ok(None),
            Err(err) => return Err(failed("read", key, true, err)),
        };
        meta_of(key, &mut file)
            .map(|meta| meta.etag)
            .map_err(|err| io_error("read", key, true, err))
    }

    /// Write `data` under `key` through the staging file `temp`, when `condition` holds.
    pub(super) fn put(
        &self,
        key: &str,
        data: &[u8],
        temp: &str,
        condition: Option<&PutCondition>,
    ) -> InfraResult<ObjectMeta> {
        self.check_key(key)?;
        let (parent, name) = split(key);
        let root = self
            .root(key, true)?
            .ok_or_else(|| InfraError::not_found(NAME, "the object store root is missing"))?;
        // Refuse early what cannot be written; the rename below holds even if this changes.
        let current = Self::check_target(root.as_fd(), key, (parent, name), condition.is_some())?;
        if let Some(condition) = condition {
            check_condition(key, current.as_deref(), condition)?;
        }
        let fail = |err: Errno| failed("write", key, true, err);
        let staging = Self::staging(root.as_fd()).map_err(|err| {
            let message = format!("the staging directory `{TMP_DIR}` cannot be used: {err}");
            InfraError::new(sandloom_driverkit::sdk::ErrorKind::Backend, NAME, message)
                .with_source(io::Error::from(err))
        })?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        let mut file =
            File::from(confined::step(staging.as_fd(), temp, flags, FILE_MODE).map_err(fail)?);
        let mut staged = Staged {
            dir: staging.as_fd(),
            name: temp,
            done: false,
        };
        let werr = |err| io_error("write", key, true, err);
        file.write_all(data).map_err(werr)?;
        file.sync_all().map_err(werr)?;
        let modified = file.metadata().and_then(|meta| meta.modified()).ok();
        drop(file);
        let mut attempt = 0;
        let pruning = PRUNING.read().unwrap_or_else(PoisonError::into_inner);
        let dir = loop {
            attempt += 1;
            // A concurrent `delete` removes the directories it leaves empty: one this write is
            // making (so the next level cannot be made in it) or has made (so the rename finds
            // no directory). Either way `ENOENT`: make them again.
            let made = match parent {
                None => Ok(Held::Root(root.as_fd())),
                Some(parent) => confined::make_dirs(root.as_fd(), parent).map(Held::Beneath),
            };
            let moved = made.and_then(|dir| {
                rustix::fs::renameat(staging.as_fd(), temp, dir.fd(), name).map(|()| dir)
            });
            match moved {
                Ok(dir) => break dir,
                Err(Errno::NOENT) if attempt < RENAME_ATTEMPTS => {}
                Err(err) => return Err(fail(err)),
            }
        };
        drop(pruning);
        staged.done = true;
        confined::sync(dir.fd());
        let meta = ObjectMeta::new(key, data.len() as u64)
            .with_etag(etag_of(data))
            .with_last_modified(modified.unwrap_or_else(SystemTime::now));
        Ok(meta)
    }

    /// Remove the object under `key` (if any) and the directories that leaves empty.
    pub(super) fn delete(&self, key: &str) -> InfraResult<()> {
        self.check_key(key)?;
        let Some(root) = self.root(key, false)? else {
            return Ok(());
        };
        let (parent, name) = split(key);
        let held = match parent {
            None => Held::Root(root.as_fd()),
            Some(parent) => match confined::open(root.as_fd(), parent, DIR, Mode::empty()) {
                Ok(fd) => Held::Beneath(fd),
                // No such directory, or a file where it would be: no object to delete.
                Err(Errno::NOENT | Errno::NOTDIR) => return Ok(()),
                Err(err) => return Err(failed("delete", key, true, err)),
            },
        };
        match confined::file_type(held.fd(), name) {
            Ok(FileType::RegularFile) => {}
            Ok(FileType::Symlink) => return Err(through_link(key)),
            // A directory (only a prefix of other keys) or something else: not an object.
            Ok(_) | Err(Errno::NOENT) => return Ok(()),
            Err(err) => return Err(failed("delete", key, true, err)),
        }
        // Unlinking through the directory's handle removes at most the name itself, whatever
        // it became since: never anything a link would point to.
        match rustix::fs::unlinkat(held.fd(), name, AtFlags::empty()) {
            Ok(()) => {}
            Err(Errno::NOENT | Errno::ISDIR) => return Ok(()),
            Err(err) => return Err(failed("delete", key, true, err)),
        }
        let Some(parent) = parent else {
            confined::sync(root.as_fd());
            return Ok(());
        };
        // Remove the directories this leaves empty, deepest first, each through the handle of
        // the directory holding it; stop at the first that is not empty (or at the root) and
        // sync the last directory changed.
        let segments: Vec<&str> = parent.split('/').collect();
        let mut changed = held;
        let pruning = PRUNING.write().unwrap_or_else(PoisonError::into_inner);
        for depth in (0..segments.len()).rev() {
            let holder = if depth == 0 {
                Held::Root(root.as_fd())
            } else {
                match confined::open(
                    root.as_fd(),
                    &segments[..depth].join("/"),
                    DIR,
                    Mode::empty(),
                ) {
                    Ok(fd) => Held::Beneath(fd),
                    Err(_) => break,
                }
            };
            if rustix::fs::unlinkat(holder.fd(), segments[depth], AtFlags::REMOVEDIR).is_err() {
                break;
            }
            changed = holder;
        }
        drop(pruning);
        confined::sync(changed.fd());
        Ok(())
    }

    /// The root's handle for a listing; `None` when there is no root yet (nothing stored).
    pub(super) fn list_root(&self) -> InfraResult<Option<OwnedFd>> {
        self.root("", false)
    }

    /// Metadata of the object `key` for a listing; `None` when it is no longer an object.
    pub(super) fn listed(root: BorrowedFd<'_>, key: &str) -> InfraResult<Option<ObjectMeta>> {
        let mut file = match Self::open_object(root, key) {
            Ok(file) => file,
            // Deleted, replaced by a directory or by a link since the walk saw it.
            Err(err)
                if matches!(
                    err.kind(),
                    sandloom_driverkit::sdk::ErrorKind::NotFound
                        | sandloom_driverkit::sdk::ErrorKind::InvalidInput
                ) =>
            {
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        match meta_of(key, &mut file) {
            Ok(meta) => Ok(Some(meta)),
            Err(err) => Err(io_error("read", key, false, err)),
        }
    }
}
