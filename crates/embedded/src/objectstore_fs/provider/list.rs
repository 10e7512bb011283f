//! Listing `objectstore.fs`: a depth-first walk that yields keys in ascending byte order.
//!
//! Entries of a directory are visited sorted by their name, with `/` appended to directory
//! names. A directory `d` holds exactly the keys that start with `d/`, and names never contain
//! `/`, so comparing `d/` with a sibling's name orders it exactly as every key under `d`
//! compares with that sibling's keys: the walk emits keys already sorted and can stop as soon
//! as the page is full.
//!
//! Each directory is opened beneath the root's handle without following links (see
//! [`confined`](super::confined)), and each listed object is opened the same way to report it:
//! a link swapped in during the walk is never followed, and at most two handles are open.

use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{FileType, Mode};
use rustix::io::Errno;
use sandloom_driverkit::objectstore::{ListPage, validate_key, validate_prefix};
use sandloom_driverkit::sdk::InfraResult;

use super::TMP_DIR;
use super::files::{Paths, failed};
use crate::confined::{self, DIR};

enum Item {
    File(String),
    /// A directory: the key prefix of everything in it (its key plus `/`).
    Dir(String),
}

/// Whether `key`, and so every key the walk yields after it, sorts after all keys with
/// `prefix`.
fn beyond(key: &str, prefix: &str) -> bool {
    key > prefix && !key.starts_with(prefix)
}

/// The children of the directory `dir_key` (`""`: the root) that can be objects or hold them,
/// sorted for the walk: `(name, is_dir)`.
fn children(root: BorrowedFd<'_>, dir_key: &str) -> InfraResult<Vec<(String, bool)>> {
    let held = match dir_key.strip_suffix('/') {
        None => None,
        Some(path) => match confined::open(root, path, DIR, Mode::empty()) {
            Ok(fd) => Some(fd),
            // Removed, replaced by a file or by a link meanwhile: nothing in it to list.
            Err(Errno::NOENT | Errno::NOTDIR) => return Ok(Vec::new()),
            Err(err) if confined::is_link(err) => return Ok(Vec::new()),
            Err(err) => return Err(failed("list", dir_key, false, err)),
        },
    };
    let dir = held.as_ref().map_or(root, AsFd::as_fd);
    let entries = match confined::entries(dir) {
        Ok(entries) => entries,
        Err(Errno::NOENT) => return Ok(Vec::new()),
        Err(err) => return Err(failed("list", dir_key, false, err)),
    };
    let mut children = Vec::new();
    for (name, kind) in entries {
        if dir_key.is_empty() && name == TMP_DIR {
            continue;
        }
        // Symbolic links are never followed nor listed; sockets, fifos and devices are skipped,
        // and so are names no key can have (a backslash, a key too long).
        let key = format!("{dir_key}{name}");
        match kind {
            FileType::Directory if validate_prefix(&format!("{key}/")).is_ok() => {
                children.push((name, true));
            }
            FileType::RegularFile if validate_key(&key).is_ok() => children.push((name, false)),
            _ => {}
        }
    }
    children.sort_by_cached_key(|(name, is_dir)| {
        let mut key = name.clone();
        if *is_dir {
            key.push('/');
        }
        key
    });
    Ok(children)
}

/// Up to `want` keys with `prefix` after `start_after`, in ascending byte order.
fn walk(
    root: BorrowedFd<'_>,
    prefix: &str,
    start_after: Option<&str>,
    want: usize,
) -> InfraResult<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![Item::Dir(String::new())];
    while let Some(item) = stack.pop() {
        match item {
            Item::File(key) => {
                if beyond(&key, prefix) {
                    break;
                }
                if key.starts_with(prefix) && start_after.is_none_or(|after| key.as_str() > after) {
                    found.push(key);
                    if found.len() >= want {
                        break;
                    }
                }
            }
            Item::Dir(dir_key) => {
                if !dir_key.is_empty() {
                    if beyond(&dir_key, prefix) {
                        break;
                    }
                    // Neither holds keys with the prefix nor leads to them.
                    if !dir_key.starts_with(prefix) && !prefix.starts_with(dir_key.as_str()) {
                        continue;
                    }
                    // Every key in it sorts at or before `start_after`.
                    if start_after.is_some_and(|after| {
                        after > dir_key.as_str() && !after.starts_with(dir_key.as_str())
                    }) {
                        continue;
                    }
                }
                for (name, is_dir) in children(root, &dir_key)?.into_iter().rev() {
                    let key = format!("{dir_key}{name}");
                    stack.push(if is_dir {
                        Item::Dir(key + "/")
                    } else {
                        Item::File(key)
                    });
                }
            }
        }
    }
    Ok(found)
}

/// One page of the listing. `limit` is at least 1.
pub(super) fn list(
    paths: &Paths,
    prefix: &str,
    start_after: Option<&str>,
    limit: usize,
) -> InfraResult<ListPage> {
    let Some(root) = paths.list_root()? else {
        // The store was never started nor written to: nothing in it.
        return Ok(ListPage::default());
    };
    let keys = walk(root.as_fd(), prefix, start_after, limit.saturating_add(1))?;
    let mut objects = Vec::with_capacity(keys.len().min(limit));
    for key in keys.iter().take(limit) {
        if let Some(meta) = Paths::listed(root.as_fd(), key)? {
            objects.push(meta);
        }
    }
    // The last key walked for this page, even if it vanished since: the next page starts after.
    let next = if keys.len() > limit {
        keys.get(limit - 1).cloned()
    } else {
        None
    };
    Ok(ListPage::new(objects, next))
}
