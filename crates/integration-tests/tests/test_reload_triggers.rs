//! The reload triggers of `sandloom_kernel::reload::triggers` (feature `reload-triggers`): a
//! changed INFRA file (written, replaced by a rename, swapped the way Kubernetes swaps a
//! `ConfigMap`) calls the callback once after the debounce; a broken one is logged and counted
//! and calls nothing; a stopped trigger calls nothing more; a callback that panics is logged
//! and counted and the trigger keeps watching; wired to a `Running` (`start_reloading`), a
//! written file replaces the instance, and a broken or refused one keeps the old serving.
//! SIGHUP has its own test binary (`test_reload_sighup.rs`): a signal reaches the whole process.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandloom_kernel::InfraConfig;
#[cfg(unix)]
use sandloom_kernel::reload::triggers::ReloadOnSighup;
use sandloom_kernel::reload::triggers::{ReloadOnFileChange, TriggerStats};
use sandloom_test_support::LogCapture;
use tokio::sync::mpsc;
use tracing::Level;

mod common;
use common::{PATIENCE, until, version};

const DEBOUNCE: Duration = Duration::from_millis(100);
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

    let stats: TriggerStats = trigger.stats();
    assert_eq!((stats.events, stats.reloads, stats.rejected), (2, 2, 0));
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

async fn start(text: &str) -> sandloom::Running {
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    sandloom::Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .start()
        .await
        .unwrap_or_else(|err| panic!("{err}"))
}

#[tokio::test]
async fn a_file_watch_wired_to_running_replaces_the_instance_and_keeps_it_on_a_bad_file() {
    use sandloom::sdk::{CACHE, bytes::Bytes};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    let first = "[cache.default]\ndriver = \"memory\"\ncapacity = 100\n";
    std::fs::write(&path, first).unwrap();
    let running = start(first).await;
    let cache = running.infra().capability(&CACHE, "default").unwrap();
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start_reloading(&running)
        .unwrap();

    // Written: the instance is replaced (a new, empty memory cache behind the same handle).
    std::fs::write(
        &path,
        "[cache.default]\ndriver = \"memory\"\ncapacity = 200\n",
    )
    .unwrap();
    until("cache.default replaced", || {
        version(&running, "cache", "default") == 2
    })
    .await;
    assert_eq!(cache.get("k").await.unwrap(), None);
    cache.set("k", Bytes::from_static(b"w")).await.unwrap();

    // Broken: rejected before any reload; the instance keeps serving.
    std::fs::write(&path, "[cache").unwrap();
    until("the file rejected", || trigger.stats().rejected == 1).await;
    // Valid TOML that the reload's check refuses (an option the driver does not have).
    std::fs::write(
        &path,
        "[cache.default]\ndriver = \"memory\"\ncapacty = 300\n",
    )
    .unwrap();
    until("the reload refused", || trigger.stats().refused == 1).await;
    assert_eq!(version(&running, "cache", "default"), 2);
    assert_eq!(
        cache.get("k").await.unwrap(),
        Some(Bytes::from_static(b"w"))
    );
    assert!(!running.last_reload().unwrap().applied);

    // Fixed: reloads again.
    std::fs::write(
        &path,
        "[cache.default]\ndriver = \"memory\"\ncapacity = 300\n",
    )
    .unwrap();
    until("cache.default replaced again", || {
        version(&running, "cache", "default") == 3
    })
    .await;
    let stats = trigger.stats();
    assert_eq!((stats.reloads, stats.rejected, stats.refused), (3, 1, 1));
    trigger.stop().await;
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_callback_that_panics_is_logged_and_counted_and_the_trigger_keeps_watching() {
    let capture = LogCapture::new();
    let _guard = capture.set_default(Level::INFO);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, infra("first")).unwrap();
    let (sender, mut calls) = mpsc::unbounded_channel();
    let trigger = ReloadOnFileChange::new(&path)
        .debounce(DEBOUNCE)
        .start(move |config: InfraConfig| {
            let sender = sender.clone();
            async move {
                assert!(
                    config.instance("cache", "boom").is_none(),
                    "the application's reload failed badly"
                );
                let _ = sender.send(config);
            }
        })
        .unwrap();

    std::fs::write(&path, infra("boom")).unwrap();
    until("the panic counted", || trigger.stats().panicked == 1).await;
    let logged = capture.text();
    assert!(logged.contains("ERROR"), "{logged}");
    assert!(logged.contains("the reload callback panicked"), "{logged}");
    assert!(
        logged.contains("the application's reload failed badly"),
        "{logged}"
    );

    // Still watching: the next change calls the callback.
    std::fs::write(&path, infra("after")).unwrap();
    assert_eq!(next(&mut calls).await, ["cache.after"]);
    trigger.stop().await;
}

/// The book's example (docs/src/operate/reload-triggers.md includes it between the anchors),
/// run: every trigger wired to the running infrastructure, and a change of the file applied.
#[cfg(unix)]
mod book {
    use std::path::Path;

    /// What the application does while it serves; here, change the file and wait for the
    /// instance to be replaced.
    async fn serve(running: &sandloom::Running, path: &Path) {
        std::fs::write(
            path,
            "[cache.default]\ndriver = \"memory\"\ncapacity = 20\n",
        )
        .unwrap();
        super::until("the file reloaded", || running.versions()[0].2 == 2).await;
    }

    // ANCHOR: triggers
    async fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        use sandloom::reload::triggers::{ReloadOnFileChange, ReloadOnRotation, ReloadOnSighup};
        use sandloom::{InfraConfig, Kernel};

        let config = InfraConfig::from_file(path)?.with_env_overrides()?;
        let drivers = sandloom::link_drivers!(sandloom_embedded);
        let running = Kernel::new(config, drivers).start().await?;
        // Each reloads through `Running::reload` (check, build beside, swap, drain), which logs
        // and counts every reload; a refused one keeps the running configuration.
        let watch = ReloadOnFileChange::new(path).start_reloading(&running)?;
        let hangup = ReloadOnSighup::new(path).start_reloading(&running)?;
        let rotation = ReloadOnRotation::new().start(&running)?;

        serve(&running, path).await;

        // The triggers stop before the infrastructure they reload.
        for trigger in [watch, hangup, rotation] {
            trigger.stop().await;
        }
        running.shutdown().await?;
        Ok(())
    }
    // ANCHOR_END: triggers

    #[tokio::test]
    async fn the_book_s_example_wires_every_trigger_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("infra.toml");
        std::fs::write(
            &path,
            "[cache.default]\ndriver = \"memory\"\ncapacity = 10\n",
        )
        .unwrap();
        run(&path).await.unwrap();
    }
}
