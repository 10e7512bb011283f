//! Reading the secrets tree: blocking calls, run on Tokio's blocking threads by the driver.
//!
//! Every path beneath the root is opened through directory handles without following links
//! ([`crate::confined`]). The one link read is Kubernetes' `..data`, and only as a name: its
//! target must be a single entry of the root, which is then opened, as a directory, without
//! following anything. Everything one call reads comes through that one directory handle, so a
//! `..data` swap in the middle of it cannot mix old and new files.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{FileType, Mode};
use rustix::io::Errno;
use zeroize::Zeroizing;

use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{MAX_NAME_BYTES, NAME, check_name, too_large};

use crate::confined::{self, DIR, READ};

/// The link Kubernetes swaps atomically to publish a new set of files.
pub(super) const DATA_LINK: &str = "..data";

/// How often a read starts again when the directory `..data` named was removed under it (a
/// swap between reading the link and opening its target).
const SWAP_RETRIES: usize = 8;

/// The longest file name this driver opens: the limit of Linux's and macOS's file systems.
const MAX_SEGMENT_BYTES: usize = 255;

/// `Unavailable`: the tree cannot be read now (the mount is gone, permissions changed).
fn unavailable(what: &str, err: Errno) -> InfraError {
    InfraError::unavailable(NAME, format!("secrets.file cannot read {what}: {err}"))
        .with_source(std::io::Error::from(err))
}

/// Check `name` against the contract's rule and this driver's own: no segment beginning with
/// `..` (Kubernetes' entries, which are hidden), none longer than a file name can be.
pub(super) fn check_file_name(name: &str) -> InfraResult<()> {
    check_name(name)?;
    for segment in name.split('/') {
        if segment.starts_with("..") {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "secrets.file cannot hold {name:?}: a segment beginning with `..` is hidden \
                     (Kubernetes keeps its own entries under such names)"
                ),
            ));
        }
        if segment.len() > MAX_SEGMENT_BYTES {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "secrets.file cannot hold {name:?}: a segment is a file name, at most \
                     {MAX_SEGMENT_BYTES} bytes"
                ),
            ));
        }
    }
    Ok(())
}

/// Where `..data` points: `None` when there is no `..data` (the root is read as it is).
fn data_target(root: BorrowedFd<'_>) -> InfraResult<Option<String>> {
    let target = match rustix::fs::readlinkat(root, DATA_LINK, Vec::new()) {
        Ok(target) => target.into_string().ok(),
        Err(Errno::NOENT) => return Ok(None),
        // `..data` is not a link: a directory of that name is read as Kubernetes' would be.
        Err(Errno::INVAL) => Some(DATA_LINK.to_owned()),
        Err(err) => return Err(unavailable("`..data`", err)),
    };
    target
        .filter(|t| !t.is_empty() && !t.contains('/') && t != "." && t != "..")
        .map(Some)
        .ok_or_else(|| {
            InfraError::new(
                ErrorKind::Backend,
                NAME,
                "`..data` must name a directory of the secrets directory itself, as \
                 Kubernetes' does; it points elsewhere, and is not followed",
            )
        })
}

/// The directory the secrets are read from, and how it was reached.
pub(super) struct Data {
    root: OwnedFd,
    /// `..data`'s target when it was read, `None` for the root itself.
    target: Option<String>,
    /// The directory itself: `..data`'s target, or the root.
    dir: OwnedFd,
}

/// Open the directory the secrets are read from: `..data`'s target when there is one, else
/// the root.
pub(super) fn data_dir(root: &Path) -> InfraResult<Data> {
    let root_fd = confined::open_root(root)
        .map_err(|err| unavailable(&format!("its directory {}", root.display()), err))?;
    for _ in 0..SWAP_RETRIES {
        let Some(target) = data_target(root_fd.as_fd())? else {
            let dir = confined::open_root(root)
                .map_err(|err| unavailable(&format!("its directory {}", root.display()), err))?;
            return Ok(Data {
                root: root_fd,
                target: None,
                dir,
            });
        };
        match confined::step(root_fd.as_fd(), &target, DIR, Mode::empty()) {
            Ok(dir) => {
                return Ok(Data {
                    root: root_fd,
                    target: Some(target),
                    dir,
                });
            }
            // Swapped and removed between the two calls: read the link again.
            Err(Errno::NOENT) => {}
            Err(err) => return Err(unavailable("the directory `..data` names", err)),
        }
    }
    Err(swapping())
}

fn swapping() -> InfraError {
    InfraError::unavailable(NAME, "`..data` kept changing while it was read; try again")
}

/// Run `read` on the data directory, again while `..data` was swapped under it: Kubernetes
/// removes the directory it swapped out, so a read that began there may find its files half
/// gone (a `NotFound` that is not one) or, for a walk, a tree that was never published. What
/// is answered was read from one generation that was still current when the read ended.
fn consistent<R>(root: &Path, mut read: impl FnMut(&Data) -> InfraResult<R>) -> InfraResult<R> {
    for _ in 0..SWAP_RETRIES {
        let data = data_dir(root)?;
        let result = read(&data);
        if data.target.is_none() || data_target(data.root.as_fd())? == data.target {
            return result;
        }
    }
    Err(swapping())
}

/// Open the secret `name` beneath `dir`: `None` when there is no such regular file.
fn open_secret(dir: BorrowedFd<'_>, name: &str) -> InfraResult<Option<(File, u64)>> {
    let fd = match confined::open(dir, name, READ, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::NOTDIR) => return Ok(None),
        Err(err) if confined::is_link(err) => {
            return Err(InfraError::new(
                ErrorKind::Backend,
                NAME,
                format!(
                    "secret {name:?} passes through a symbolic link: secrets.file follows none \
                     beneath its directory (only Kubernetes' `..data`)"
                ),
            ));
        }
        Err(err) => return Err(unavailable(&format!("secret {name:?}"), err)),
    };
    let stat =
        rustix::fs::fstat(&fd).map_err(|err| unavailable(&format!("secret {name:?}"), err))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Ok(None); // a directory (a folder of secrets), a FIFO, a device: not a secret
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    Ok(Some((File::from(fd), size)))
}

/// Read at most `limit` bytes of `file` (`size` by its metadata) into a buffer allocated once,
/// so that no copy of the value is left behind by a reallocation, and zeroed if the read fails;
/// `Err(size)` when it holds more.
fn read_limited(
    mut file: File,
    size: u64,
    limit: usize,
) -> std::io::Result<Result<Secret<Vec<u8>>, u64>> {
    if size > limit as u64 {
        return Ok(Err(size));
    }
    let capacity = usize::try_from(size).unwrap_or(limit).min(limit) + 1;
    let mut buffer = Zeroizing::new(Vec::with_capacity(capacity));
    // The file may have grown since its metadata was read: one byte more than the limit says so.
    (&mut file)
        .take(limit as u64 + 1)
        .read_to_end(&mut buffer)?;
    if buffer.len() > limit {
        return Ok(Err(buffer.len() as u64));
    }
    Ok(Ok(Secret::new(std::mem::take(&mut *buffer))))
}

/// The value of the secret `name`.
pub(super) fn read(root: &Path, name: &str, limit: usize) -> InfraResult<Secret<Vec<u8>>> {
    consistent(root, |data| read_in(data.dir.as_fd(), name, limit))
}

/// The value of the secret `name` beneath `dir`.
fn read_in(dir: BorrowedFd<'_>, name: &str, limit: usize) -> InfraResult<Secret<Vec<u8>>> {
    let Some((file, size)) = open_secret(dir, name)? else {
        return Err(sandloom_driverkit::secrets::not_found(name));
    };
    match read_limited(file, size, limit) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(size)) => Err(too_large(name, size, limit)),
        Err(err) => Err(InfraError::unavailable(
            NAME,
            format!("secrets.file cannot read secret {name:?}: {err}"),
        )
        .with_source(err)),
    }
}

/// Every secret's name beneath `dir`: regular files, walked without following links, hidden
/// (`..`-prefixed) entries and names the rule refuses skipped.
fn walk(dir: BorrowedFd<'_>, prefix: &str, found: &mut Vec<String>) -> InfraResult<()> {
    let entries = confined::entries(dir).map_err(|err| unavailable("a directory", err))?;
    for (entry, kind) in entries {
        if entry.starts_with("..") {
            continue;
        }
        let name = format!("{prefix}{entry}");
        if name.len() > MAX_NAME_BYTES {
            continue;
        }
        match kind {
            FileType::RegularFile if check_file_name(&name).is_ok() => found.push(name),
            FileType::Directory => match confined::step(dir, &entry, DIR, Mode::empty()) {
                Ok(sub) => walk(sub.as_fd(), &format!("{name}/"), found)?,
                Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR) => {}
                Err(err) => return Err(unavailable(&format!("directory {name:?}"), err)),
            },
            _ => {}
        }
    }
    Ok(())
}

/// Every secret's name, sorted.
pub(super) fn names(root: &Path) -> InfraResult<Vec<String>> {
    consistent(root, |data| {
        let mut found = Vec::new();
        walk(data.dir.as_fd(), "", &mut found)?;
        found.sort_unstable();
        Ok(found)
    })
}

/// What a scan keeps of each secret: a keyed digest of its content. Keyed with random keys of
/// this instance (two `SipHash` keys: 128 bits), so that it tells nothing of a value and never
/// leaves the process; it only tells whether a value changed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Digest(u64, u64);

/// The random keys of an instance's digests.
pub(super) struct DigestKeys(RandomState, RandomState);

impl DigestKeys {
    pub(super) fn new() -> Self {
        Self(RandomState::new(), RandomState::new())
    }

    fn digest(&self, bytes: &[u8]) -> Digest {
        let mut first = self.0.build_hasher();
        let mut second = self.1.build_hasher();
        first.write(bytes);
        second.write(bytes);
        Digest(first.finish(), second.finish())
    }
}

/// Every secret and the digest of its content, from one directory handle (one `..data`).
/// A value above `limit` is digested by its size and modification time, never read.
pub(super) fn scan(
    root: &Path,
    limit: usize,
    keys: &DigestKeys,
) -> InfraResult<HashMap<String, Digest>> {
    consistent(root, |data| scan_in(data.dir.as_fd(), limit, keys))
}

fn scan_in(
    dir: BorrowedFd<'_>,
    limit: usize,
    keys: &DigestKeys,
) -> InfraResult<HashMap<String, Digest>> {
    let mut found = Vec::new();
    walk(dir, "", &mut found)?;
    let mut digests = HashMap::with_capacity(found.len());
    for name in found {
        let Some((file, size)) = open_secret(dir, &name)? else {
            continue;
        };
        let modified = rustix::fs::fstat(&file).map(|s| (s.st_mtime, s.st_mtime_nsec));
        let digest = match read_limited(file, size, limit) {
            Ok(Ok(value)) => keys.digest(value.expose()),
            Ok(Err(size)) => keys.digest(format!("{size} {modified:?}").as_bytes()),
            Err(err) => {
                return Err(InfraError::unavailable(
                    NAME,
                    format!("secrets.file cannot read secret {name:?}: {err}"),
                ));
            }
        };
        digests.insert(name, digest);
    }
    Ok(digests)
}
