//! Options of `objectstore.fs`.

use serde::Deserialize;
use std::path::PathBuf;

/// Options of `objectstore.fs`.
///
/// ```toml
/// [objectstore.default]
/// driver = "fs"
/// root = "/var/lib/myapp/objects"   # required; created by start
/// ```
///
/// ```
/// let options = sandloom_embedded::FsObjectStoreOptions { root: "/tmp/objects".into() };
/// assert_eq!(options.root, std::path::Path::new("/tmp/objects"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsObjectStoreOptions {
    /// The directory holding the objects. Created (with its parents) by `start`.
    pub root: PathBuf,
}
