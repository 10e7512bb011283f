//! A rotated secret reloads exactly the instances that read it (issue 26, "Triggers"), with
//! `ReloadOnRotation`, on `secrets.file`: rewriting a secret's file rebuilds the instances
//! whose options refer to it with the new value, and keeps every other instance (its version
//! stays 1); rotations seen together make one reload; a new value the backend refuses keeps
//! the old instance serving, and the next rotation tries again. And the rotation watch follows
//! reloads: a reference moved to another secret watches that one, and `rotation_poll_ms`
//! changed restarts the watch without rebuilding the store.
//!
//! `cache.keyed` (fixtures/keyed) answers `get("password")` with the password it was built
//! with, so the value each instance runs with can be seen through the handle modules hold.

use std::path::Path;
use std::time::Duration;

use sandloom::reload::Outcome;
use sandloom::reload::triggers::ReloadOnRotation;
use sandloom::sdk::CACHE;
use sandloom::{InfraConfig, Kernel, Running};

mod common;
use common::{PATIENCE, until, version};

const SETTLE: Duration = Duration::from_millis(200);

fn write(dir: &Path, secret: &str, value: &str) {
    // Written beside and renamed, as Kubernetes and operators do: never a half-written value.
    let temporary = dir.join(format!(".{secret}.tmp"));
    std::fs::write(&temporary, value).unwrap();
    std::fs::rename(&temporary, dir.join(secret)).unwrap();
}

fn infra(dir: &Path, keyed_reads: &str, extra: &str) -> InfraConfig {
    let text = format!(
        "[secrets.files]\ndriver = \"file\"\nroot = {:?}\npoll_interval_ms = 10\n{extra}\n\
         [cache.keyed]\ndriver = \"keyed\"\npassword = {{ secret = \"{keyed_reads}\", store = \"files\" }}\n\
         [cache.other]\ndriver = \"keyed\"\npassword = {{ secret = \"other\", store = \"files\" }}\n\
         [cache.plain]\ndriver = \"memory\"\n",
        dir.display().to_string()
    );
    let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    config
}

async fn start(config: InfraConfig) -> Running {
    Kernel::new(
        config,
        sandloom::link_drivers!(sandloom_embedded, sandloom_fixture_keyed),
    )
    // Read by nothing: rotating it shows the watch is live, and reloads nothing.
    .watch_secret("files", "canary", &[])
    .start()
    .await
    .unwrap_or_else(|err| panic!("{err}"))
}

/// The password `cache.<instance>` runs with, through the handle modules hold.
async fn password(running: &Running, instance: &str) -> String {
    let cache = running.infra().capability(&CACHE, instance).unwrap();
    let value = cache.get("password").await.unwrap().unwrap();
    String::from_utf8(value.to_vec()).unwrap()
}

/// Wait until the watch of `secrets.files` reports rotations: a change made before its first
/// look is what it starts from, not a rotation. Rotates `canary` until one is reported.
async fn watching(running: &Running, dir: &Path) {
    let mut rotations = running.rotation_events();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    for round in 0.. {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watch never started"
        );
        write(dir, "canary", &format!("canary-{round}"));
        let seen = tokio::time::timeout(Duration::from_millis(200), async {
            loop {
                match rotations.recv().await {
                    Ok(rotation) if rotation.secret == "canary" => return,
                    Ok(_) => {}
                    Err(err) => panic!("{err}"),
                }
            }
        })
        .await;
        if seen.is_ok() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_secret_in_secrets_file_rebuilds_exactly_the_instances_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "password", "first");
    write(dir.path(), "other", "unrelated");
    let running = start(infra(dir.path(), "password", "")).await;
    watching(&running, dir.path()).await;
    let trigger = ReloadOnRotation::new()
        .settle(SETTLE)
        .start(&running)
        .unwrap();
    assert_eq!(password(&running, "keyed").await, "first");

    // Rotated: `cache.keyed` alone is rebuilt, with the new value, behind the same handle.
    write(dir.path(), "password", "second");
    until("cache.keyed rebuilt", || {
        version(&running, "cache", "keyed") == 2
    })
    .await;
    assert_eq!(password(&running, "keyed").await, "second");
    for (capability, instance) in [("cache", "other"), ("cache", "plain"), ("secrets", "files")] {
        assert_eq!(
            version(&running, capability, instance),
            1,
            "{capability}.{instance}"
        );
    }
    assert_eq!(password(&running, "other").await, "unrelated");
    let report = running.last_reload().unwrap();
    assert!(report.applied);
    for line in &report.instances {
        let expected = if line.instance == "keyed" {
            Outcome::Replaced {
                reasons: vec!["secret `password` of secrets.files rotated".to_owned()],
            }
        } else {
            Outcome::Kept
        };
        assert_eq!(line.outcome, expected, "{}", line.instance);
    }
    let stats = trigger.stats();
    assert_eq!((stats.reloads, stats.refused), (1, 0));

    // A value the backend refuses: the new instance fails to start, the old one keeps serving
    // its value, and the refusal is counted.
    write(dir.path(), "password", sandloom_fixture_keyed::REFUSED);
    until("the reload refused", || trigger.stats().refused == 1).await;
    assert_eq!(password(&running, "keyed").await, "second");
    assert_eq!(version(&running, "cache", "keyed"), 2);
    assert!(!running.last_reload().unwrap().applied);

    // Not retried on its own; the next rotation is.
    write(dir.path(), "password", "third");
    until("cache.keyed rebuilt again", || {
        version(&running, "cache", "keyed") == 3
    })
    .await;
    assert_eq!(password(&running, "keyed").await, "third");

    // Two secrets rotated together: one reload rebuilds both their instances.
    let before = trigger.stats().reloads;
    write(dir.path(), "password", "fourth");
    write(dir.path(), "other", "fifth");
    until("both rebuilt", || {
        version(&running, "cache", "keyed") == 4 && version(&running, "cache", "other") == 2
    })
    .await;
    assert_eq!(trigger.stats().reloads, before + 1);
    assert_eq!(password(&running, "keyed").await, "fourth");
    assert_eq!(password(&running, "other").await, "fifth");
    assert_eq!(version(&running, "cache", "plain"), 1);
    assert_eq!(version(&running, "secrets", "files"), 1);

    trigger.stop().await;
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rotation_watch_follows_reloads() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "password", "first");
    write(dir.path(), "other", "unrelated");
    write(dir.path(), "moved", "moved-value");
    let running = start(infra(dir.path(), "password", "")).await;

    // A reload that points `cache.keyed` at another secret builds it with that secret's value.
    let report = running
        .reload(infra(dir.path(), "moved", ""))
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(report.applied);
    assert_eq!(password(&running, "keyed").await, "moved-value");

    // The secret no longer referred to is forgotten; the new one is watched.
    watching(&running, dir.path()).await;
    let mut rotations = running.rotation_events();
    write(dir.path(), "password", "changed");
    write(dir.path(), "moved", "moved-again");
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !seen.iter().any(|(secret, _)| secret == "moved") {
        let rotation = tokio::time::timeout_at(deadline, rotations.recv())
            .await
            .expect("`moved` never reported rotated")
            .unwrap();
        seen.push((rotation.secret, rotation.dependents));
    }
    // The scan that saw `moved` saw `password` too: had it been watched, it came with it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(rotation) = rotations.try_recv() {
        seen.push((rotation.secret, rotation.dependents));
    }
    assert_eq!(seen, [("moved".to_owned(), vec!["cache.keyed".to_owned()])]);

    // `rotation_poll_ms` is the kernel's: changed, the store is kept (not rebuilt) and the
    // watch restarts; 0 turns it off, so a rotation is no longer seen.
    let report = running
        .reload(infra(dir.path(), "moved", "rotation_poll_ms = 0"))
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(report.instances.iter().all(|l| l.outcome == Outcome::Kept));
    assert_eq!(version(&running, "secrets", "files"), 1);
    write(dir.path(), "moved", "unseen");
    write(dir.path(), "canary", "unseen");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(rotations.try_recv().is_err());
    assert!(
        running
            .secret_rotations()
            .iter()
            .all(|r| r.secret != "password")
    );

    running.shutdown().await.unwrap();
}

/// A reload that replaces a store (here its `root` moves) replaces every instance that reads
/// from it, although that instance's own table did not change: it was built with a value of
/// the old store, and the new store may hold another. The report says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_store_replaces_the_instances_that_read_from_it() {
    let (before, after) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(before.path(), "password", "from-the-old-store");
    write(before.path(), "other", "unrelated");
    write(after.path(), "password", "from-the-new-store");
    write(after.path(), "other", "unrelated");
    let running = start(infra(before.path(), "password", "")).await;
    assert_eq!(password(&running, "keyed").await, "from-the-old-store");

    let report = running
        .reload(infra(after.path(), "password", ""))
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(report.applied);
    assert_eq!(password(&running, "keyed").await, "from-the-new-store");
    let reason = "reads its secrets from secrets.files, which is replaced".to_owned();
    for line in &report.instances {
        let expected = match (line.capability.as_str(), line.instance.as_str()) {
            ("secrets", "files") => Outcome::Replaced {
                reasons: vec!["option `root` changed".to_owned()],
            },
            ("cache", "keyed" | "other") => Outcome::Replaced {
                reasons: vec![reason.clone()],
            },
            _ => Outcome::Kept,
        };
        assert_eq!(line.outcome, expected, "{line}");
    }
    assert_eq!(version(&running, "cache", "plain"), 1);
    running.shutdown().await.unwrap();
}

/// More rotations than the trigger's channel holds (64) arrive at once: the trigger cannot tell
/// which it missed, so the reload replaces every instance that reads a secret — `cache.other`,
/// whose secret did not rotate, for the reason that rotations were missed — and keeps the rest.
///
/// One thread: the watch records the whole burst (one `changes` answer, 70 names read by nothing
/// and `password`) before the trigger's task can receive any of it.
#[tokio::test(flavor = "current_thread")]
async fn rotations_missed_rebuild_every_instance_that_reads_a_secret() {
    let name = format!("test-reload-rotation-missed-{}", std::process::id());
    let store = sandloom_embedded::MemorySecretStore::named(&name);
    store.set("password", "first").unwrap();
    store.set("other", "unrelated").unwrap();
    let text = format!(
        "[secrets.mem]\ndriver = \"memory\"\nstore = \"{name}\"\n\
         [cache.keyed]\ndriver = \"keyed\"\npassword = {{ secret = \"password\", store = \"mem\" }}\n\
         [cache.other]\ndriver = \"keyed\"\npassword = {{ secret = \"other\", store = \"mem\" }}\n\
         [cache.plain]\ndriver = \"memory\"\n"
    );
    let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    let burst: Vec<String> = (0..70).map(|n| format!("burst/{n:02}")).collect();
    let mut kernel = Kernel::new(
        config,
        sandloom::link_drivers!(sandloom_embedded, sandloom_fixture_keyed),
    )
    .watch_secret("mem", "canary", &[]);
    for secret in &burst {
        kernel = kernel.watch_secret("mem", secret, &[]);
    }
    let running = kernel.start().await.unwrap_or_else(|err| panic!("{err}"));

    // The watch is live once a change of `canary` is reported.
    let mut rotations = running.rotation_events();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    'live: for round in 0.. {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watch never started"
        );
        store.set("canary", format!("canary-{round}")).unwrap();
        let wait = tokio::time::sleep(Duration::from_millis(100));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => break,
                seen = rotations.recv() => if seen.unwrap().secret == "canary" { break 'live },
            }
        }
    }
    drop(rotations);
    let trigger = ReloadOnRotation::new()
        .settle(SETTLE)
        .start(&running)
        .unwrap();

    // No await between these: the watch sees them in one answer, 71 rotations.
    store.set("password", "second").unwrap();
    for secret in &burst {
        store.set(secret, "x").unwrap();
    }
    until("both readers rebuilt", || {
        version(&running, "cache", "keyed") == 2 && version(&running, "cache", "other") == 2
    })
    .await;
    assert_eq!(password(&running, "keyed").await, "second");
    assert_eq!(password(&running, "other").await, "unrelated");
    let report = running.last_reload().unwrap();
    assert!(report.applied);
    let missed = "secret rotations were missed: every instance reading a secret is rebuilt";
    for line in &report.instances {
        let expected = match line.instance.as_str() {
            "keyed" => Outcome::Replaced {
                reasons: vec!["secret `password` of secrets.mem rotated".to_owned()],
            },
            "other" => Outcome::Replaced {
                reasons: vec![missed.to_owned()],
            },
            _ => Outcome::Kept,
        };
        assert_eq!(line.outcome, expected, "{line}");
    }
    let stats = trigger.stats();
    assert_eq!((stats.reloads, stats.refused), (1, 0));
    trigger.stop().await;
    running.shutdown().await.unwrap();
}
