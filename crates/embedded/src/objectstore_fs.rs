//! `objectstore.fs`: objects as files under a root directory.

mod options;
mod provider;

pub use options::FsObjectStoreOptions;
pub use provider::FsObjectStore;
