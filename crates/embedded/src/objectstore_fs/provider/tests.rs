use std::fs;
use std::path::Path;

use sandloom_driverkit::sdk::ErrorKind;
use serde::de::IntoDeserializer;
use serde::de::value::{Error as DeError, MapDeserializer};

use serde::Deserialize;

use std::path::PathBuf;

use super::*;
use crate::objectstore_memory::tests as shared;

/// A started store rooted in a fresh directory `root` inside a temporary `outer` directory, so
/// tests can check that nothing lands outside the root.
struct Fixture {
    outer: tempfile::TempDir,
    store: FsObjectStore,
}

impl Fixture {
    async fn new() -> Self {
        let outer = tempfile::tempdir().unwrap();
        let store = Self::open(outer.path()).await;
        Self { outer, store }
    }

    async fn open(outer: &Path) -> FsObjectStore {
        let root = outer.join("root");
        let store = FsObjectStore::from_options(FsObjectStoreOptions { root }).unwrap();
        store.start().await.unwrap();
        store
    }

    fn root(&self) -> PathBuf {
        self.outer.path().join("root")
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// Only `root` in `outer`; only the (empty) staging directory plus `expected` in `root`.
    fn assert_contained(&self, expected: &[&str]) {
        assert_eq!(Self::names(self.outer.path()), ["root"]);
        let mut wanted: Vec<String> = expected.iter().map(|name| (*name).to_owned()).collect();
        wanted.push(TMP_DIR.to_owned());
        wanted.sort();
        assert_eq!(Self::names(&self.root()), wanted);
        assert!(
            Self::names(&self.root().join(TMP_DIR)).is_empty(),
            "no staged file is left"
        );
    }
}

fn kind<T: std::fmt::Debug>(result: InfraResult<T>) -> ErrorKind {
    result.unwrap_err().kind()
}

#[tokio::test]
async fn fs_round_trip() {
    let fixture = Fixture::new().await;
    shared::round_trip(&fixture.store).await;
    fixture.assert_contained(&["empty"]);
}

#[tokio::test]
async fn fs_invalid_keys_are_refused_and_nothing_escapes_the_root() {
    let fixture = Fixture::new().await;
    shared::invalid_keys_are_refused(&fixture.store).await;
    let reserved = fixture.store.put(".sandloom-tmp/x", "x".into()).await;
    assert_eq!(kind(reserved), ErrorKind::InvalidInput);
    assert_eq!(
        kind(fixture.store.get(".sandloom-tmp").await),
        ErrorKind::InvalidInput
    );
    fixture.assert_contained(&[]);
}

#[tokio::test]
async fn fs_list_orders_filters_and_paginates() {
    let fixture = Fixture::new().await;
    shared::list_orders_filters_and_paginates(&fixture.store).await;
}

#[tokio::test]
async fn fs_etags_follow_content() {
    let fixture = Fixture::new().await;
    shared::etags_follow_content(&fixture.store).await;
}

#[tokio::test]
async fn fs_conditional_puts() {
    let fixture = Fixture::new().await;
    shared::conditional_puts(&fixture.store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fs_conditional_puts_are_atomic() {
    let outer = tempfile::tempdir().unwrap();
    let store = Arc::new(Fixture::open(outer.path()).await);
    store.put("counter", "0".into()).await.unwrap();
    shared::conditional_puts_are_atomic(store).await;
}

#[tokio::test]
async fn fs_stop_makes_every_operation_stopped() {
    let fixture = Fixture::new().await;
    shared::stop_makes_every_operation_stopped(&fixture.store).await;
}

#[tokio::test]
async fn staged_files_are_never_listed() {
    let fixture = Fixture::new().await;
    fs::write(fixture.root().join(TMP_DIR).join("123-4.tmp"), b"partial").unwrap();
    fixture.store.put("real", "x".into()).await.unwrap();
    let page = fixture
        .store
        .list("", ListOptions::default())
        .await
        .unwrap();
    let keys: Vec<&str> = page.objects.iter().map(|meta| meta.key.as_str()).collect();
    assert_eq!(keys, ["real"]);
    assert!(
        fixture
            .store
            .list(".sandloom", ListOptions::default())
            .await
            .unwrap()
            .objects
            .is_empty()
    );
}

#[tokio::test]
async fn a_key_cannot_be_both_an_object_and_a_prefix() {
    let fixture = Fixture::new().await;
    let store = &fixture.store;
    store.put("a/b", "x".into()).await.unwrap();
    assert_eq!(kind(store.put("a", "y".into()).await), ErrorKind::Conflict);
    assert_eq!(
        kind(store.put_if("a", "y".into(), PutCondition::IfAbsent).await),
        ErrorKind::Conflict
    );
    assert_eq!(kind(store.get("a").await), ErrorKind::NotFound);
    assert_eq!(kind(store.head("a").await), ErrorKind::NotFound);
    assert_eq!(
        kind(store.put("a/b/c", "z".into()).await),
        ErrorKind::Conflict
    );
    assert_eq!(kind(store.get("a/b/c").await), ErrorKind::NotFound);
    store.delete("a").await.unwrap();
    store.delete("a/b/c").await.unwrap();
    assert_eq!(store.get("a/b").await.unwrap(), "x");
}

#[tokio::test]
async fn delete_removes_the_directories_it_empties() {
    let fixture = Fixture::new().await;
    let store = &fixture.store;
    store.put("x/y/z", "1".into()).await.unwrap();
    store.put("x/w", "2".into()).await.unwrap();
    store.delete("x/y/z").await.unwrap();
    assert!(!fixture.root().join("x/y").exists());
    assert!(fixture.root().join("x/w").exists());
    store.delete("x/w").await.unwrap();
    fixture.assert_contained(&[]);
}

#[tokio::test]
async fn objects_survive_a_new_driver_instance() {
    let outer = tempfile::tempdir().unwrap();
    let first = Fixture::open(outer.path()).await;
    let meta = first.put("keep/me", "data".into()).await.unwrap();
    first.stop().await.unwrap();
    let second = Fixture::open(outer.path()).await;
    assert_eq!(second.get("keep/me").await.unwrap(), "data");
    assert_eq!(second.head("keep/me").await.unwrap().etag, meta.etag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_never_see_a_partial_write() {
    let fixture = Fixture::new().await;
    let store = Arc::new(fixture.store);
    let big = |byte: u8| Bytes::from(vec![byte; 512 * 1024]);
    store.put("big", big(b'a')).await.unwrap();
    let writer = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            for i in 0..20_u8 {
                store.put("big", big(b'a' + i % 2)).await.unwrap();
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..3 {
        let store = Arc::clone(&store);
        readers.push(tokio::spawn(async move {
            for _ in 0..40 {
                let data = store.get("big").await.unwrap();
                assert_eq!(data.len(), 512 * 1024);
                assert!(data.iter().all(|b| *b == data[0]), "a torn read");
            }
        }));
    }
    writer.await.unwrap();
    for reader in readers {
        reader.await.unwrap();
    }
    let staged = fs::read_dir(fixture.outer.path().join("root").join(TMP_DIR)).unwrap();
    assert_eq!(staged.count(), 0);
}

#[cfg(unix)]
#[tokio::test]
async fn symbolic_links_are_never_followed() {
    use std::os::unix::fs::symlink;

    let fixture = Fixture::new().await;
    let outside = fixture.outer.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret"), b"s").unwrap();
    symlink(&outside, fixture.root().join("link")).unwrap();
    symlink(outside.join("secret"), fixture.root().join("file-link")).unwrap();
    let store = &fixture.store;
    assert_eq!(
        kind(store.put("link/x", "x".into()).await),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind(store.put("file-link", "x".into()).await),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind(store.get("link/secret").await),
        ErrorKind::InvalidInput
    );
    assert_eq!(kind(store.get("file-link").await), ErrorKind::InvalidInput);
    assert_eq!(kind(store.head("file-link").await), ErrorKind::InvalidInput);
    assert_eq!(
        kind(store.delete("link/secret").await),
        ErrorKind::InvalidInput
    );
    let listed = store.list("", ListOptions::default()).await.unwrap();
    assert!(listed.objects.is_empty(), "{listed:?}");
    assert_eq!(Fixture::names(&outside), ["secret"]);
    assert_eq!(fs::read(outside.join("secret")).unwrap(), b"s");
}

#[tokio::test]
async fn start_creates_the_root_or_names_why_it_cannot() {
    let outer = tempfile::tempdir().unwrap();
    let nested = outer.path().join("a/b/c");
    let store = FsObjectStore::from_options(FsObjectStoreOptions {
        root: nested.clone(),
    })
    .unwrap();
    store.start().await.unwrap();
    assert!(nested.join(TMP_DIR).is_dir());
    assert!(store.health().await.is_healthy());

    let file = outer.path().join("file");
    fs::write(&file, b"x").unwrap();
    let store = FsObjectStore::from_options(FsObjectStoreOptions { root: file.clone() }).unwrap();
    let err = store.start().await.unwrap_err();
    assert!(err.message().contains(&file.display().to_string()), "{err}");
    assert!(!store.health().await.is_healthy());
}

#[tokio::test]
async fn a_store_used_before_start_still_writes_atomically() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("late");
    let store = FsObjectStore::from_options(FsObjectStoreOptions { root: root.clone() }).unwrap();
    assert!(
        store
            .list("", ListOptions::default())
            .await
            .unwrap()
            .objects
            .is_empty()
    );
    store.put("k", "v".into()).await.unwrap();
    assert_eq!(store.get("k").await.unwrap(), "v");
}

#[test]
fn options_require_a_root_and_refuse_unknown_fields() {
    let parse = |pairs: Vec<(&'static str, &'static str)>| {
        let map = pairs.into_iter().map(|(k, v)| (k, v.into_deserializer()));
        FsObjectStoreOptions::deserialize(MapDeserializer::<_, DeError>::new(map))
    };
    assert_eq!(
        parse(vec![("root", "/data")]).unwrap().root,
        Path::new("/data")
    );
    assert!(
        parse(vec![])
            .unwrap_err()
            .to_string()
            .contains("missing field `root`")
    );
    let err = parse(vec![("root", "/data"), ("roots", "/x")]).unwrap_err();
    assert!(err.to_string().contains("unknown field `roots`"), "{err}");
    let empty = FsObjectStoreOptions {
        root: PathBuf::new(),
    };
    assert!(FsObjectStore::from_options(empty).is_err());
    assert_eq!(
        FsObjectStore::supported_features(),
        &[ETAG, CONDITIONAL_PUT]
    );
}

/// The fallback walk (kernels without `openat2`, other Unix systems) answers exactly what
/// `openat2` answers, for every kind of path: fine, missing, under a file, through a link.
#[cfg(target_os = "linux")]
#[test]
fn the_walk_by_handles_agrees_with_openat2() {
    use std::os::fd::AsFd;
    use std::os::unix::fs::symlink;

    use rustix::fs::Mode;

    use crate::confined::{self, DIR, READ};

    let outer = tempfile::tempdir().unwrap();
    let (root, outside) = (outer.path().join("root"), outer.path().join("outside"));
    for dir in [&root, &outside, &root.join("dir")] {
        fs::create_dir(dir).unwrap();
    }
    fs::write(outside.join("f"), b"outside").unwrap();
    fs::write(root.join("file"), b"x").unwrap();
    fs::write(root.join("dir/file"), b"x").unwrap();
    symlink(&outside, root.join("link-dir")).unwrap();
    symlink(outside.join("f"), root.join("link-file")).unwrap();
    symlink(&outside, root.join("dir/link")).unwrap();
    symlink("file", root.join("relative-link")).unwrap();
    let fd = confined::open_root(&root).unwrap();
    let dir = fd.as_fd();
    let cases = [
        ("dir/file", READ),
        ("file", READ),
        ("missing", READ),
        ("dir/missing/x", READ),
        ("file/x", READ),
        ("link-dir/f", READ),
        ("link-file", READ),
        ("relative-link", READ),
        ("dir/link/f", READ),
        ("dir", DIR),
        ("dir/file", DIR),
        ("link-dir", DIR),
        ("link-file", DIR),
        ("dir/link", DIR),
        ("file", DIR),
    ];
    for (path, flags) in cases {
        let direct = confined::open_at2(dir, path, flags, Mode::empty()).map(drop);
        let walked = confined::walk(dir, path, flags, Mode::empty()).map(drop);
        assert_eq!(direct, walked, "{path:?} {flags:?}");
        if path.contains("link") {
            assert!(walked.is_err_and(confined::is_link), "{path:?}: {walked:?}");
        }
    }
    assert!(confined::make_dirs(dir, "link-dir/new").is_err_and(confined::is_link));
    assert!(confined::make_dirs(dir, "dir/link/new").is_err_and(confined::is_link));
    assert_eq!(
        confined::make_dirs(dir, "file/new").map(drop),
        Err(rustix::io::Errno::NOTDIR)
    );
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing made outside"
    );
}

/// A FIFO (or a device) under the root is no object: reading it answers `NotFound` at once
/// instead of waiting for a writer, and listings skip it.
#[tokio::test]
async fn special_files_are_not_objects_and_never_block() {
    let fixture = Fixture::new().await;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fixture.root().join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    let store = &fixture.store;
    assert_eq!(kind(store.get("pipe").await), ErrorKind::NotFound);
    assert_eq!(kind(store.head("pipe").await), ErrorKind::NotFound);
    assert_eq!(
        kind(store.put("pipe", "x".into()).await),
        ErrorKind::Conflict
    );
    let page = store.list("", ListOptions::default()).await.unwrap();
    assert!(page.objects.is_empty(), "{page:?}");
}

/// The race of `tests/objectstore_fs_links.rs` again, on the walk by handles that kernels
/// without `openat2` (and other Unix systems) use: a link swapped in and out of `root/flip`
/// while puts and gets run is never followed. (From here on, the other tests of this binary
/// use the walk too; they must pass either way.)
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_walk_by_handles_never_follows_a_link_swapped_in_during_a_race() {
    use std::os::unix::fs::symlink;
    use std::sync::atomic::AtomicBool;

    use rustix::fs::{CWD, RenameFlags, renameat_with};

    crate::confined::stop_using_openat2();
    let fixture = Fixture::new().await;
    let outside = fixture.outer.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("canary"), b"outside").unwrap();
    let store = Arc::new(fixture.store);
    store.put("flip/canary", "inside".into()).await.unwrap();
    let root = fixture.outer.path().join("root");
    symlink(&outside, root.join("swap")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let racer = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let (flip, swap) = (root.join("flip"), root.join("swap"));
                renameat_with(CWD, &flip, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
            }
        })
    };
    let mut workers = Vec::new();
    for worker in 0..2 {
        let store = Arc::clone(&store);
        workers.push(tokio::spawn(async move {
            for round in 0..300 {
                let _ = store
                    .put(&format!("flip/{worker}-{round}"), "x".into())
                    .await;
                if let Ok(data) = store.get("flip/canary").await {
                    assert_eq!(data, "inside", "read outside the root");
                }
                let _ = store.delete(&format!("flip/{worker}-{round}")).await;
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
    assert_eq!(
        Fixture::names(&outside),
        ["canary"],
        "written outside the root"
    );
    assert_eq!(fs::read(outside.join("canary")).unwrap(), b"outside");
}

#[tokio::test]
async fn a_segment_as_long_as_the_file_system_allows_is_a_key() {
    // The kits cannot ask this: a driver may refuse more keys than `validate_key` does, in
    // every operation alike, and the longest segment this store holds is the file system's.
    let fixture = Fixture::new().await;
    let name_max = rustix::fs::statvfs(fixture.root()).unwrap().f_namemax;
    let longest = usize::try_from(name_max)
        .unwrap()
        .min(sandloom_driverkit::objectstore::MAX_SEGMENT_BYTES);
    let key = format!("dir/{}", "n".repeat(longest));
    fixture.store.put(&key, "v".into()).await.unwrap();
    assert_eq!(fixture.store.get(&key).await.unwrap(), "v");
    let listed = fixture
        .store
        .list("dir/", ListOptions::default())
        .await
        .unwrap();
    assert_eq!(listed.objects[0].key, key);
    let longer = format!("dir/{}", "n".repeat(longest + 1));
    assert_eq!(
        kind(fixture.store.put(&longer, "v".into()).await),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind(fixture.store.get(&longer).await),
        ErrorKind::InvalidInput
    );
}
