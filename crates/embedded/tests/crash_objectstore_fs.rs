//! Crash campaign on `objectstore.fs` (RELIABILITY.md, "Crash campaigns"): a writer process
//! putting 1–8 MiB objects is killed with `SIGKILL` mid-put, again and again; after every kill
//! the whole store is read: never a torn object (each object carries its version, length and
//! hash, and its body is derived from its version), never an object older than its key's last
//! completed put, never a staging file in `list`. Sizes:
//! `sandloom_crash_support::Scale::from_env` (kills; `SANDLOOM_CRASH_SCALE=large`).
//!
//! The writer is this test binary, re-run as its ignored test `crash_worker`.

use std::sync::Arc;

use sandloom_crash_support::objectstore::{self, WriteSetup};
use sandloom_crash_support::pool::ProcessPool;
use sandloom_crash_support::{Scale, scratch};
use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::ObjectStore;
use sandloom_embedded::{FsObjectStore, FsObjectStoreOptions};

async fn open(root: String) -> Result<Arc<dyn ObjectStore>, String> {
    let store = FsObjectStore::from_options(FsObjectStoreOptions { root: root.into() })
        .map_err(|err| err.to_string())?;
    store.start().await.map_err(|err| err.to_string())?;
    Ok(Arc::new(store))
}

#[test]
#[ignore = "the writer process of the crash campaign below: it starts it, with its orders"]
fn crash_worker() {
    objectstore::writer_main(open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_mid_put_never_leaves_a_torn_object_or_a_staging_file_in_list() {
    let scale = Scale::from_env();
    let dir = scratch();
    let root = dir.path().join("store");
    let root = root.to_str().expect("a UTF-8 temporary path").to_owned();
    let setup = WriteSetup {
        driver: "objectstore.fs",
        store: open(root.clone()).await.expect("open"),
        target: root,
        dir: dir.path(),
        scale,
    };
    let report = objectstore::write_campaign(&setup, &mut ProcessPool::new()).await;
    eprintln!("{report}");
    report.assert_holds(scale.kills);
}
