//! `secrets.file` beyond the kit: links out of the root, reads racing `..data` swaps, a root
//! that goes away.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::secrets::Secrets;

use super::{FileSecrets, FileSecretsOptions};

fn driver(root: &Path) -> FileSecrets {
    FileSecrets::from_options(FileSecretsOptions::new(root)).unwrap()
}

#[tokio::test]
async fn a_link_out_of_the_root_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(root.join("db")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("key"), "outside-value").unwrap();
    symlink(outside.join("key"), root.join("db/key")).unwrap();
    symlink(&outside, root.join("linked")).unwrap();
    let secrets = driver(&root);
    secrets.start().await.unwrap();
    for name in ["db/key", "linked/key"] {
        let err = secrets.get(name).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Backend, "{name}: {err}");
        assert!(err.message().contains("symbolic link"), "{err}");
    }
    assert!(
        secrets.list("").await.unwrap().is_empty(),
        "links are not listed"
    );

    // `..data` naming anything but an entry of the root itself is refused, not followed.
    for target in ["../outside", "/tmp", "."] {
        let _ = std::fs::remove_file(root.join("..data"));
        symlink(target, root.join("..data")).unwrap();
        let err = secrets.get("key").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Backend, "{target}: {err}");
    }
}

/// Kubernetes' atomic update: a new directory, a link to it renamed over `..data`, the old
/// directory removed.
fn swap(root: &Path, generation: u32) {
    let new = format!("..gen_{generation}");
    std::fs::create_dir(root.join(&new)).unwrap();
    std::fs::write(root.join(&new).join("token"), format!("gen {generation}")).unwrap();
    let old = std::fs::read_link(root.join("..data")).unwrap();
    symlink(&new, root.join("..data_tmp")).unwrap();
    std::fs::rename(root.join("..data_tmp"), root.join("..data")).unwrap();
    std::fs::remove_dir_all(root.join(old)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_racing_data_swaps_see_one_whole_generation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    std::fs::create_dir(root.join("..gen_0")).unwrap();
    std::fs::write(root.join("..gen_0/token"), "gen 0").unwrap();
    symlink("..gen_0", root.join("..data")).unwrap();
    let secrets = Arc::new(driver(&root));
    secrets.start().await.unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let swapper = std::thread::spawn({
        let (root, done) = (root.clone(), Arc::clone(&done));
        move || {
            for generation in 1..=300 {
                swap(&root, generation);
            }
            done.store(true, Ordering::SeqCst);
        }
    });
    let mut reads = 0;
    while !done.load(Ordering::SeqCst) {
        let value = secrets
            .get("token")
            .await
            .expect("every read finds a generation");
        let text = value.expose_str().unwrap();
        assert!(
            text.starts_with("gen "),
            "a whole value of one generation: {text:?}"
        );
        reads += 1;
    }
    swapper.join().unwrap();
    assert!(reads > 0);
    assert_eq!(secrets.get("token").await.unwrap().expose(), b"gen 300");
}

#[tokio::test]
async fn a_root_that_goes_away_is_unavailable_and_a_missing_one_fails_start() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("volume");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("token"), "t").unwrap();
    let secrets = driver(&root);
    secrets.start().await.unwrap();
    std::fs::rename(&root, dir.path().join("gone")).unwrap();
    for name in ["token", "missing"] {
        assert_eq!(
            secrets.get(name).await.unwrap_err().kind(),
            ErrorKind::Unavailable
        );
    }
    assert!(!secrets.health().await.is_healthy());
    let never = driver(&dir.path().join("never-made"));
    let err = never.start().await.unwrap_err();
    assert!(
        err.to_string().contains("cannot read its directory"),
        "{err}"
    );
}
