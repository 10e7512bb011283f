//! `objectstore.fs` never follows a symbolic link beneath its root: not one planted before
//! `start`, not one planted between operations, and not one swapped in while operations run.
//! Nothing is ever created, changed, removed or read outside the root.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::{ListOptions, ObjectStore, PutCondition};
use sandloom_driverkit::sdk::{ErrorKind, InfraResult};
use sandloom_embedded::{FsObjectStore, FsObjectStoreOptions};

/// What `outer/outside` holds, and must hold after every test: the targets of the links.
const OUTSIDE: &[(&str, &str)] = &[
    ("canary", "CANARY: read from outside the root"),
    ("victim", "VICTIM: must never be deleted or overwritten"),
    ("outside-only", "a name only the outside directory has"),
];

/// `outer/root` for the store, `outer/outside` with the files of [`OUTSIDE`] beside it.
struct Fixture {
    outer: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let outer = tempfile::tempdir().unwrap();
        let outside = outer.path().join("outside");
        fs::create_dir(&outside).unwrap();
        for (name, content) in OUTSIDE {
            fs::write(outside.join(name), content).unwrap();
        }
        fs::create_dir(outer.path().join("root")).unwrap();
        Self { outer }
    }

    fn root(&self) -> PathBuf {
        self.outer.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.outer.path().join("outside")
    }

    async fn store(&self) -> FsObjectStore {
        let store =
            FsObjectStore::from_options(FsObjectStoreOptions { root: self.root() }).unwrap();
        store.start().await.unwrap();
        store
    }

    fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let name = entry.file_name().into_string().unwrap();
                let data = fs::read(entry.path()).unwrap_or_default();
                (name, data)
            })
            .collect()
    }

    /// Nothing beside `root` and `outside`, and `outside` exactly as it was made.
    fn assert_outside_untouched(&self) {
        let names: Vec<String> = fs::read_dir(self.outer.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(
            names,
            ["outside", "root"],
            "something was created beside the root"
        );
        let expected: BTreeMap<String, Vec<u8>> = OUTSIDE
            .iter()
            .map(|(name, content)| ((*name).to_owned(), content.as_bytes().to_vec()))
            .collect();
        assert_eq!(
            Self::contents(&self.outside()),
            expected,
            "the directory outside the root changed"
        );
    }

    fn assert_no_staged_file(&self) {
        let staged = Self::contents(&self.root().join(".sandloom-tmp"));
        assert!(staged.is_empty(), "staged files left: {staged:?}");
    }
}

fn kind<T: std::fmt::Debug>(what: &str, result: InfraResult<T>) -> ErrorKind {
    match result {
        Ok(value) => panic!("{what} must be refused, it answered {value:?}"),
        Err(err) => err.kind(),
    }
}

/// Every operation on a key through `dir_link` (a link to a directory outside) or on
/// `file_link` (a link to a file outside) is refused with `InvalidInput`; `list` skips both.
async fn assert_links_refused(store: &FsObjectStore, dir_link: &str, file_link: &str) {
    let refused = ErrorKind::InvalidInput;
    let through = |name: &str| format!("{dir_link}/{name}");
    for key in [
        through("canary"),
        through("victim"),
        through("new"),
        file_link.to_owned(),
    ] {
        let data = || "written through a link".into();
        assert_eq!(
            kind(&format!("put({key})"), store.put(&key, data()).await),
            refused
        );
        let put_if = store.put_if(&key, data(), PutCondition::IfAbsent).await;
        assert_eq!(kind(&format!("put_if({key})"), put_if), refused);
        assert_eq!(kind(&format!("get({key})"), store.get(&key).await), refused);
        assert_eq!(
            kind(&format!("head({key})"), store.head(&key).await),
            refused
        );
        assert_eq!(
            kind(&format!("delete({key})"), store.delete(&key).await),
            refused
        );
    }
    // The link to a directory, as an object of its own name, is refused too.
    assert_eq!(
        kind("put(dir link)", store.put(dir_link, "x".into()).await),
        refused
    );
    for prefix in ["", &format!("{dir_link}/"), dir_link, file_link] {
        let page = store.list(prefix, ListOptions::default()).await.unwrap();
        let keys: Vec<&str> = page.objects.iter().map(|meta| meta.key.as_str()).collect();
        assert!(
            keys.iter()
                .all(|key| !key.starts_with(dir_link) && *key != file_link),
            "list({prefix:?}) reported a link or what is behind it: {keys:?}"
        );
    }
}

#[tokio::test]
async fn links_planted_before_start_are_never_followed() {
    let fixture = Fixture::new();
    let root = fixture.root();
    symlink(fixture.outside(), root.join("dir-link")).unwrap();
    symlink(fixture.outside().join("canary"), root.join("file-link")).unwrap();
    fs::create_dir(root.join("real")).unwrap();
    symlink(fixture.outside(), root.join("real/nested-link")).unwrap();
    let store = fixture.store().await;
    store.put("real/object", "inside".into()).await.unwrap();
    assert_links_refused(&store, "dir-link", "file-link").await;
    assert_links_refused(&store, "real/nested-link", "file-link").await;
    let page = store.list("", ListOptions::default()).await.unwrap();
    let keys: Vec<&str> = page.objects.iter().map(|meta| meta.key.as_str()).collect();
    assert_eq!(keys, ["real/object"]);
    fixture.assert_outside_untouched();
    fixture.assert_no_staged_file();
}

#[tokio::test]
async fn a_staging_directory_planted_as_a_link_before_start_is_refused() {
    let fixture = Fixture::new();
    symlink(fixture.outside(), fixture.root().join(".sandloom-tmp")).unwrap();
    let store = FsObjectStore::from_options(FsObjectStoreOptions {
        root: fixture.root(),
    })
    .unwrap();
    let err = store.start().await.unwrap_err();
    assert!(err.message().contains("must be a directory"), "{err}");
    fixture.assert_outside_untouched();
}

#[tokio::test]
async fn links_planted_between_operations_are_never_followed() {
    let fixture = Fixture::new();
    let root = fixture.root();
    let store = fixture.store().await;
    store.put("dir/canary", "inside".into()).await.unwrap();
    store.put("dir/victim", "inside".into()).await.unwrap();
    store.put("file", "inside".into()).await.unwrap();
    store.put("deep/er/object", "inside".into()).await.unwrap();
    assert_eq!(store.get("dir/canary").await.unwrap(), "inside");

    // A directory and a file the store made, each replaced by a link to the outside.
    fs::remove_dir_all(root.join("dir")).unwrap();
    symlink(fixture.outside(), root.join("dir")).unwrap();
    fs::remove_file(root.join("file")).unwrap();
    symlink(fixture.outside().join("canary"), root.join("file")).unwrap();
    assert_links_refused(&store, "dir", "file").await;
    // A directory in the middle of a key.
    fs::remove_dir_all(root.join("deep/er")).unwrap();
    symlink(fixture.outside(), root.join("deep/er")).unwrap();
    assert_links_refused(&store, "deep/er", "file").await;
    fixture.assert_outside_untouched();

    // The staging directory replaced by a link: writes fail, and stage nothing outside.
    fs::remove_dir(root.join(".sandloom-tmp")).unwrap();
    symlink(fixture.outside(), root.join(".sandloom-tmp")).unwrap();
    assert!(store.put("elsewhere", "x".into()).await.is_err());
    assert!(
        store
            .put_if("elsewhere", "x".into(), PutCondition::IfAbsent)
            .await
            .is_err()
    );
    fs::remove_file(root.join(".sandloom-tmp")).unwrap();
    fixture.assert_outside_untouched();

    // Links removed again: the store works, and made its staging directory anew.
    fs::remove_file(root.join("dir")).unwrap();
    store
        .put("dir/canary", "inside again".into())
        .await
        .unwrap();
    assert_eq!(store.get("dir/canary").await.unwrap(), "inside again");
    fixture.assert_outside_untouched();
    fixture.assert_no_staged_file();
}

/// The race of issue 15: one thread swaps the directory `root/flip` with a link to a directory
/// outside the root (atomically, with `renameat2(RENAME_EXCHANGE)`), again and again, while
/// puts, gets, heads, deletes and listings under `flip/` run on several threads. Whatever the
/// timing, nothing is created, changed or removed outside the root, and nothing from outside is
/// ever returned. The work is bounded by a number of operations, not by time.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_link_swapped_in_while_operations_run_is_never_followed() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use rustix::fs::{CWD, RenameFlags, renameat_with};

    const WORKERS: usize = 4;
    const ROUNDS: usize = 250;

    let fixture = Fixture::new();
    let root = fixture.root();
    let store = Arc::new(fixture.store().await);
    let inside = "inside the root";
    store.put("flip/canary", inside.into()).await.unwrap();
    symlink(fixture.outside(), root.join("swap")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let racer = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (flip, swap) = (root.join("flip"), root.join("swap"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &flip, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let allowed = [
        ErrorKind::InvalidInput,
        ErrorKind::NotFound,
        ErrorKind::Conflict,
    ];
    let refused = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let store = Arc::clone(&store);
        let refused = Arc::clone(&refused);
        workers.push(tokio::spawn(async move {
            let check = |what: &str, err: &sandloom_driverkit::sdk::InfraError| {
                assert!(allowed.contains(&err.kind()), "{what}: {err}");
                if err.kind() == ErrorKind::InvalidInput {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            };
            for round in 0..ROUNDS {
                let key = format!("flip/put-{worker}-{round}");
                if let Err(err) = store.put(&key, "x".into()).await {
                    check("put", &err);
                }
                match store.get("flip/canary").await {
                    Ok(data) => assert_eq!(data, inside, "get read outside the root"),
                    Err(err) => check("get", &err),
                }
                match store.head("flip/canary").await {
                    Ok(meta) => assert_eq!(meta.size, inside.len() as u64, "head of outside"),
                    Err(err) => check("head", &err),
                }
                if let Err(err) = store.delete("flip/victim").await {
                    check("delete", &err);
                }
                let listed = store
                    .list("flip/", ListOptions::default().with_limit(5))
                    .await;
                for meta in listed.unwrap().objects {
                    assert!(
                        !matches!(meta.key.as_str(), "flip/outside-only" | "flip/victim"),
                        "list reported {} from outside the root",
                        meta.key
                    );
                }
            }
        }));
    }
    let mut failure = None;
    for worker in workers {
        if let Err(err) = worker.await {
            failure.get_or_insert(err);
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    if let Some(err) = failure {
        std::panic::resume_unwind(err.into_panic());
    }
    let swaps = swaps.load(Ordering::Relaxed);
    let refused = refused.load(Ordering::Relaxed);
    eprintln!("{swaps} swaps; {refused} operations met the link and refused their key");
    assert!(swaps > 0, "the link was never swapped in");
    fixture.assert_outside_untouched();
    fixture.assert_no_staged_file();
}
