//! Both built-in object stores pass the conformance kit of their contract.

use sandloom_driverkit::NoOptions;
use sandloom_embedded::{FsObjectStore, FsObjectStoreOptions, MemoryObjectStore};

sandloom_conformance::objectstore_conformance!(fs: FsObjectStore, |request| {
    FsObjectStoreOptions {
        root: request.scratch_dir.join("root"),
    }
});

sandloom_conformance::objectstore_conformance!(memory: MemoryObjectStore, |_request| NoOptions {});
