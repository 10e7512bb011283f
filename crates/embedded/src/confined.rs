//! Paths confined to a driver's root: opened beneath a directory handle, resolved without
//! following symbolic links at the moment they are used. Shared by `objectstore.fs` and
//! `secrets.file`, so both refuse an escape from their root the same way.
//!
//! `objectstore.fs` never hands a path under its root to the operating system. It opens the
//! root once per operation and does everything else relative to directory handles (file
//! descriptors) obtained here: creating the staged file, renaming it into place, unlinking,
//! opening for reading, reading metadata, reading directories. A symbolic link swapped into the
//! tree at any moment is therefore either met by the lookup and refused, or not on the path at
//! all; there is no window between a check and a use.
//!
//! - On Linux and Android, [`open`] resolves a whole relative path with one `openat2` call
//!   and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`: the kernel refuses with `ELOOP` any symbolic
//!   link on the way, the last component included, and with `EXDEV` any step out of the
//!   directory.
//! - Where `openat2` answers `ENOSYS` (Linux before 5.6, or a seccomp filter that does not know
//!   it), and on other Unix systems, the same is done one segment at a time: each directory is
//!   opened relative to its parent's handle with `O_NOFOLLOW | O_DIRECTORY`, and the last
//!   component with `O_NOFOLLOW`. A link met there is reported as `ELOOP` too.
//!
//! Callers pass relative paths of valid key segments only (no `.`, `..`, empty segment or
//! leading `/`); [`Errno::LOOP`] and [`Errno::XDEV`] both mean "a link or an escape on the way".

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
#[cfg(any(target_os = "linux", target_os = "android"))]
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Flags of every open here: close on exec, and never follow a link in the last component.
const ALWAYS: OFlags = OFlags::CLOEXEC.union(OFlags::NOFOLLOW);

/// Open a directory to look up, create, rename and unlink in, read and sync.
pub(crate) const DIR: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY);

/// Open a file to read it. Non-blocking, so that a FIFO planted in the tree cannot hang the
/// open; callers check that what they opened is a regular file.
pub(crate) const READ: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK);

/// Directories are created `rwxrwxrwx` less the umask, as `std::fs::create_dir` does.
const DIR_MODE: Mode = Mode::RWXU.union(Mode::RWXG).union(Mode::RWXO);

/// Whether `openat2` may be tried: cleared for good the first time it answers `ENOSYS`.
#[cfg(any(target_os = "linux", target_os = "android"))]
static OPENAT2: AtomicBool = AtomicBool::new(true);

/// Use the walk by handles from now on, as on a kernel without `openat2`: tests of the fallback.
#[cfg(test)]
pub(crate) fn stop_using_openat2() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    OPENAT2.store(false, Ordering::Relaxed);
}

/// Whether `err` means the path met a symbolic link (or would have left the directory).
pub(crate) fn is_link(err: Errno) -> bool {
    matches!(err, Errno::LOOP | Errno::XDEV)
}

/// Open the store's root directory. Its path is the operator's configuration, so links in it
/// are followed; everything beneath it is opened through the handle this returns.
pub(crate) fn open_root(root: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(root, DIR | OFlags::CLOEXEC, Mode::empty())
}

/// Open `path`, a relative path of valid key segments, beneath `dir` without following any
/// symbolic link: `ELOOP` (or `EXDEV`) when the path passes through one.
pub(crate) fn open(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if OPENAT2.load(Ordering::Relaxed) {
        match open_at2(dir, path, flags, mode) {
            Err(Errno::NOSYS) => OPENAT2.store(false, Ordering::Relaxed),
            other => return other,
        }
    }
    walk(dir, path, flags, mode)
}

/// [`open`] in one system call.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn open_at2(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    use rustix::fs::ResolveFlags;

    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    // Without `O_NOFOLLOW`: a trailing link is then one to follow, which `RESOLVE_NO_SYMLINKS`
    // refuses with `ELOOP` (with it, `O_DIRECTORY` would answer `ENOTDIR` for a link).
    let flags = flags | OFlags::CLOEXEC;
    let mut again = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            // The kernel asks for a retry when a rename elsewhere raced with the lookup.
            Err(Errno::AGAIN) if again < 16 => again += 1,
            other => return other,
        }
    }
}

/// [`open`] one segment at a time, each directory through its parent's handle.
pub(crate) fn walk(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let (parents, last) = match path.rsplit_once('/') {
        Some((parents, last)) => (Some(parents), last),
        None => (None, path),
    };
    let mut held: Option<OwnedFd> = None;
    for segment in parents.into_iter().flat_map(|parents| parents.split('/')) {
        let at = held.as_ref().map_or(dir, AsFd::as_fd);
        held = Some(step(at, segment, DIR, Mode::empty())?);
    }
    step(held.as_ref().map_or(dir, AsFd::as_fd), last, flags, mode)
}

/// Open the single name `name` in `dir` without following it: `ELOOP` when it is a link.
pub(crate) fn step(
    dir: BorrowedFd<'_>,
    name: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(dir, name, flags | ALWAYS, mode) {
        // `O_DIRECTORY | O_NOFOLLOW` answers `ENOTDIR` for a link: tell the two apart.
        Err(Errno::NOTDIR) if flags.contains(OFlags::DIRECTORY) && is_symlink(dir, name) => {
            Err(Errno::LOOP)
        }
        other => other,
    }
}

/// The type of `name` in `dir`, not following a link.
pub(crate) fn file_type(dir: BorrowedFd<'_>, name: &str) -> Result<FileType, Errno> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
}

fn is_symlink(dir: BorrowedFd<'_>, name: &str) -> bool {
    file_type(dir, name).is_ok_and(|kind| kind == FileType::Symlink)
}

/// Open the directory `name` in `dir`, creating it if it is missing.
pub(crate) fn make_dir(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    match step(dir, name, DIR, Mode::empty()) {
        Err(Errno::NOENT) => {}
        other => return other,
    }
    match rustix::fs::mkdirat(dir, name, DIR_MODE) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(err) => return Err(err),
    }
    step(dir, name, DIR, Mode::empty())
}

/// Open the directory `path` beneath `dir`, creating what is missing of it, one segment at a
/// time through handles: `ELOOP` for a link on the way, `ENOTDIR` for a file in the way.
pub(crate) fn make_dirs(dir: BorrowedFd<'_>, path: &str) -> Result<OwnedFd, Errno> {
    match open(dir, path, DIR, Mode::empty()) {
        Err(Errno::NOENT) => {}
        other => return other,
    }
    let mut held: Option<OwnedFd> = None;
    for segment in path.split('/') {
        let at = held.as_ref().map_or(dir, AsFd::as_fd);
        held = Some(make_dir(at, segment)?);
    }
    // `split` yields at least one segment, so `held` is set.
    held.ok_or(Errno::INVAL)
}

/// Make the entries of directory `dir` durable (best effort: some file systems refuse).
pub(crate) fn sync(dir: BorrowedFd<'_>) {
    let _ = rustix::fs::fsync(dir);
}

/// The names in directory `dir` with their types (looked up, not followed, where the directory
/// does not say), without `.` and `..`. Names that are not UTF-8 are left out: no key has them.
pub(crate) fn entries(dir: BorrowedFd<'_>) -> Result<Vec<(String, FileType)>, Errno> {
    let mut listing = rustix::fs::Dir::read_from(dir)?;
    let mut found = Vec::new();
    while let Some(entry) = listing.read() {
        let entry = entry?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => match file_type(dir, name) {
                Ok(kind) => kind,
                Err(Errno::NOENT) => continue,
                Err(err) => return Err(err),
            },
            kind => kind,
        };
        found.push((name.to_owned(), kind));
    }
    Ok(found)
}
