//! The reload triggers of `sandloom_kernel::reload::triggers` (feature `reload-triggers`): a
//! changed INFRA file (written, replaced by a rename, swapped the way Kubernetes swaps a
//! `ConfigMap`) calls the callback once after the debounce; a broken one is logged and counted
//! and calls nothing; SIGHUP calls it; a stopped trigger calls nothing more.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandloom_kernel::InfraConfig;
#[cfg(unix)]
use sandloom_kernel::reload::triggers::ReloadOnSighup;
use sandloom_kernel::reload::triggers::{ReloadOnFileChange, TriggerStats};
use sandloom_test_support::LogCapture;
use tokio::sync::mpsc;
use tracing::Level;

const DEBOUNCE: Duration = Duration::from_millis(100);
/// Long enough for a call to come on a busy machine; a test that passes never waits this long.
const PATIENCE: Duration = Duration::from_secs(20);
/// How long to wait for a call that must not come: several debounces.
const QUIET: Duration = Duration::from_millis(800);

fn infra(instance: &str) -> String {
    format!("[cache.{instance}]\ndriver = \"memory\"\n")
}

/// The callback: each configuration it is called with goes to the returned receiver.
fn recorder() -> (
    impl Fn(InfraConfig) -> std::future::Ready<()> + Send + Sync + 'static,
    mpsc::UnboundedReceiver<InfraConfig>,
) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let callback = move |config| {
        let _ = sender.send(config);
        std::future::ready(())
    };
    (callback, receiver)
}

/// The instances of the next configuration the callback gets.
async fn next(calls: &mut mpsc::UnboundedReceiver<InfraConfig>) -> Vec<String> {
    let config = tokio::time::timeout(PATIENCE, calls.recv())
        .await
        .expect("the callback was not called")
        .expect("the trigger is gone");
    config
        .instances()
        .map(sandloom_kernel::InstanceConfig::qualified_name)
        .collect()
}

async fn assert_no_call(calls: &mut mpsc::UnboundedReceiver<InfraConfig>) {
    if let Ok(Some(config)) = tokio::time::timeout(QUIET, calls.recv()).await {
        let names: Vec<String> = config
            .instances()
            .map(sandloom_kernel::InstanceConfig::qualified_name)
            .collect();
        panic!("unexpected call with {names:?}");
    }
}

/// Write `text` beside `path` and rename it over `path`, as editors save.
fn replace_by_rename(path: &Path, text: &str) {
    let temporary = path.with_extension("toml.swp");
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

#[tokio::test]
async fn a_written_or_renamed_file_reloads_once_after_the_debounce() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, infra("first")).unwrap();
    let (callback, mut calls) = recorder();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start(callback)
        .unwrap();

    // Written in place, in several writes: one call, with the last content.
    std::fs::write(&path, infra("second")).unwrap();
    std::fs::write(&path, infra("third")).unwrap();
    assert_eq!(next(&mut calls).await, ["cache.third"]);
    assert_no_call(&mut calls).await;

    // Replaced by a rename, as editors save.
    replace_by_rename(&path, &infra("fourth"));
    assert_eq!(next(&mut calls).await, ["cache.fourth"]);
    assert_no_call(&mut calls).await;

    // Touched, rewritten with the same content, another file of the directory changed: no call.
    std::fs::write(&path, infra("fourth")).unwrap();
    std::fs::write(dir.path().join("other.txt"), "unrelated").unwrap();
    assert_no_call(&mut calls).await;

    assert_eq!(
        trigger.stats(),
        TriggerStats {
            events: 2,
            reloads: 2,
            rejected: 0
        }
    );
    trigger.stop().await;
}

#[tokio::test]
async fn a_broken_file_is_logged_and_counted_and_calls_nothing() {
    let capture = LogCapture::new();
    let _guard = capture.set_default(Level::INFO);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, infra("first")).unwrap();
    let (callback, mut calls) = recorder();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start(callback)
        .unwrap();

    // Not TOML.
    std::fs::write(&path, "[cache").unwrap();
    assert_no_call(&mut calls).await;
    // TOML, with a problem (a table without `driver`) and a secret-looking value elsewhere.
    std::fs::write(
        &path,
        "[cache.default]\ncapacity = 10\n[cache.other]\ndriver = \"memory\"\npassword = \"hunter2\"\n",
    )
    .unwrap();
    assert_no_call(&mut calls).await;
    assert_eq!(trigger.stats().rejected, 2);
    assert_eq!(trigger.stats().reloads, 0);

    let logged = capture.text();
    assert!(logged.contains("INFRA not reloaded"), "{logged}");
    assert!(logged.contains("code=\"SANDLOOM-B010\""), "{logged}");
    assert!(logged.contains("INFRA is not valid TOML"), "{logged}");
    assert!(
        logged.contains("`[cache.default]` has no `driver`"),
        "{logged}"
    );
    // Each problem at its place in the file.
    for place in [":1:7", ":1:8"] {
        let at = format!("{}{place}", path.display());
        assert!(logged.contains(&at), "{logged}");
    }
    assert!(!logged.contains("hunter2"), "{logged}");

    // Fixed: the next good file reloads.
    std::fs::write(&path, infra("fixed")).unwrap();
    assert_eq!(next(&mut calls).await, ["cache.fixed"]);
    trigger.stop().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_kubernetes_style_data_link_swap_reloads() {
    use std::os::unix::fs::symlink;
    // A mounted ConfigMap: infra.toml → ..data/infra.toml, ..data → ..v1; an update writes
    // ..v2, points a new link at it and renames that link over ..data.
    let dir = tempfile::tempdir().unwrap();
    let version = |name: &str, text: &str| -> PathBuf {
        let version = dir.path().join(name);
        std::fs::create_dir(&version).unwrap();
        std::fs::write(version.join("infra.toml"), text).unwrap();
        version
    };
    version("..v1", &infra("first"));
    symlink("..v1", dir.path().join("..data")).unwrap();
    let path = dir.path().join("infra.toml");
    symlink("..data/infra.toml", &path).unwrap();
    let (callback, mut calls) = recorder();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start(callback)
        .unwrap();

    version("..v2", &infra("second"));
    symlink("..v2", dir.path().join("..data_tmp")).unwrap();
    std::fs::rename(dir.path().join("..data_tmp"), dir.path().join("..data")).unwrap();
    assert_eq!(next(&mut calls).await, ["cache.second"]);
    assert_no_call(&mut calls).await;
    trigger.stop().await;
}

#[tokio::test]
async fn a_stopped_or_dropped_trigger_calls_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, infra("first")).unwrap();
    let (callback, mut calls) = recorder();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start(callback)
        .unwrap();
    trigger.stop().await;
    std::fs::write(&path, infra("second")).unwrap();
    // The callback (and its sender) went with the task: the channel closes, nothing was sent.
    let ended = tokio::time::timeout(PATIENCE, calls.recv()).await;
    assert!(matches!(ended, Ok(None)), "{ended:?}");

    let (callback, mut calls) = recorder();
    drop(
        ReloadOnFileChange::new(&path)
            .debounce(DEBOUNCE)
            .start(callback)
            .unwrap(),
    );
    std::fs::write(&path, infra("third")).unwrap();
    let ended = tokio::time::timeout(PATIENCE, calls.recv()).await;
    assert!(matches!(ended, Ok(None)), "{ended:?}");
}

#[test]
fn outside_a_runtime_starting_is_a_coded_problem_not_a_panic() {
    let problem = ReloadOnFileChange::new("infra.toml")
        .start(|_| async {})
        .unwrap_err();
    assert_eq!(problem.code(), "SANDLOOM-B001");
    #[cfg(unix)]
    {
        let problem = ReloadOnSighup::new("infra.toml")
            .start(|_| async {})
            .unwrap_err();
        assert_eq!(problem.code(), "SANDLOOM-B001");
    }
}

#[tokio::test]
async fn a_directory_that_cannot_be_watched_is_a_coded_problem() {
    let problem = ReloadOnFileChange::new("no/such/dir/infra.toml")
        .start(|_| async {})
        .unwrap_err();
    assert_eq!(problem.code(), "SANDLOOM-B010");
    assert!(
        problem.description().starts_with(
            "cannot watch `no/such/dir`, the directory of the INFRA file `no/such/dir/infra.toml`"
        ),
        "{}",
        problem.description()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn sighup_reloads_the_file_and_a_broken_one_is_refused() {
    use nix::sys::signal::{Signal, raise};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, infra("first")).unwrap();
    let (callback, mut calls) = recorder();
    // The handler is installed when `start` returns: raising after it cannot end the process.
    let trigger = ReloadOnSighup::new(&path).start(callback).unwrap();

    raise(Signal::SIGHUP).unwrap();
    // Asked for, so called even though the file did not change.
    assert_eq!(next(&mut calls).await, ["cache.first"]);

    std::fs::write(&path, infra("second")).unwrap();
    raise(Signal::SIGHUP).unwrap();
    assert_eq!(next(&mut calls).await, ["cache.second"]);

    std::fs::write(&path, "[cache").unwrap();
    raise(Signal::SIGHUP).unwrap();
    assert_no_call(&mut calls).await;
    let stats = trigger.stats();
    assert_eq!((stats.events, stats.reloads, stats.rejected), (3, 2, 1));
    trigger.stop().await;
}
