//! Listing `objectstore.fs`: a depth-first walk that yields keys in ascending byte order.
//!
//! Entries of a directory are visited sorted by their name, with `/` appended to directory
//! names. A directory `d` holds exactly the keys that start with `d/`, and names never contain
//! `/`, so comparing `d/` with a sibling's name orders it exactly as every key under `d`
//! compares with that sibling's keys: the walk emits keys already sorted and can stop as soon
//! as the page is full.

use std::fs;
use std::io::ErrorKind as IoKind;
use std::path::{Path, PathBuf};

use sandloom_driverkit::objectstore::ListPage;
use sandloom_driverkit::sdk::InfraResult;

use super::TMP_DIR;
use super::blocking::{Paths, io_error};

enum Item {
    File(String),
    /// A directory and the key prefix of everything in it (its key plus `/`).
    Dir(PathBuf, String),
}

/// Whether `key`, and so every key the walk yields after it, sorts after all keys with
/// `prefix`.
fn beyond(key: &str, prefix: &str) -> bool {
    key > prefix && !key.starts_with(prefix)
}

/// The children of `dir` that can be objects or hold them, sorted for the walk: `(name, is_dir)`.
fn children(dir: &Path, at_root: bool, dir_key: &str) -> InfraResult<Vec<(String, bool)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        // Removed meanwhile (or the store was never started): nothing in it.
        Err(err) if matches!(err.kind(), IoKind::NotFound | IoKind::NotADirectory) => {
            return Ok(Vec::new());
        }
        Err(err) => return Err(io_error("list", dir_key, false, err)),
    };
    let mut children = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| io_error("list", dir_key, false, err))?;
        // A name that is not UTF-8, or has a backslash, is no valid key segment: not an object.
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.contains('\\') || (at_root && name == TMP_DIR) {
            continue;
        }
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(err) if err.kind() == IoKind::NotFound => continue,
            Err(err) => return Err(io_error("list", dir_key, false, err)),
        };
        // Symbolic links are never followed nor listed; sockets, fifos and devices are skipped.
        if file_type.is_dir() {
            children.push((name, true));
        } else if file_type.is_file() {
            children.push((name, false));
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
    paths: &Paths,
    prefix: &str,
    start_after: Option<&str>,
    want: usize,
) -> InfraResult<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![Item::Dir(paths.root.clone(), String::new())];
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
            Item::Dir(path, dir_key) => {
                let at_root = dir_key.is_empty();
                if !at_root {
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
                for (name, is_dir) in children(&path, at_root, &dir_key)?.into_iter().rev() {
                    let key = format!("{dir_key}{name}");
                    stack.push(if is_dir {
                        Item::Dir(path.join(&name), key + "/")
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
    let keys = walk(paths, prefix, start_after, limit.saturating_add(1))?;
    let mut objects = Vec::with_capacity(keys.len().min(limit));
    for key in keys.iter().take(limit) {
        match Paths::meta_of(key, &paths.root.join(key)) {
            Ok(meta) => objects.push(meta),
            // Deleted or replaced by a directory since the walk saw it: no longer an object.
            Err(err)
                if matches!(
                    err.kind(),
                    IoKind::NotFound | IoKind::IsADirectory | IoKind::NotADirectory
                ) => {}
            Err(err) => return Err(io_error("read", key, false, err)),
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
