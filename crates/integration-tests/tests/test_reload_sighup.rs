//! SIGHUP reloads (issue 26, "Triggers"), in a test binary of its own: a signal raised here
//! reaches the whole process, so no other test may be listening for it. One test, two steps:
//! the callback form reads the file on each SIGHUP (a broken file calls nothing); wired to a
//! `Running` (`start_reloading`), a SIGHUP replaces the instance the file changed, and one
//! with a broken file keeps it serving.

#![cfg(unix)]

use nix::sys::signal::{Signal, raise};
use sandloom::sdk::{CACHE, bytes::Bytes};
use sandloom::{InfraConfig, Kernel};
use sandloom_kernel::reload::triggers::ReloadOnSighup;
use tokio::sync::mpsc;

mod common;
use common::{PATIENCE, until, version};

fn infra(instance: &str, capacity: u32) -> String {
    format!("[cache.{instance}]\ndriver = \"memory\"\ncapacity = {capacity}\n")
}

#[tokio::test]
async fn sighup_reloads_the_file_with_a_callback_or_wired_to_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");

    // The callback form.
    std::fs::write(&path, infra("first", 10)).unwrap();
    let (sender, mut calls) = mpsc::unbounded_channel();
    // The handler is installed when `start` returns: raising after it cannot end the process.
    let trigger = ReloadOnSighup::new(&path)
        .start(move |config: InfraConfig| {
            let _ = sender.send(
                config
                    .instances()
                    .map(sandloom::InstanceConfig::qualified_name)
                    .collect::<Vec<_>>(),
            );
            std::future::ready(())
        })
        .unwrap();
    let mut next = async || {
        tokio::time::timeout(PATIENCE, calls.recv())
            .await
            .expect("the callback was not called")
            .expect("the trigger is gone")
    };
    raise(Signal::SIGHUP).unwrap();
    // Asked for, so called even though the file did not change.
    assert_eq!(next().await, ["cache.first"]);
    std::fs::write(&path, infra("second", 10)).unwrap();
    raise(Signal::SIGHUP).unwrap();
    assert_eq!(next().await, ["cache.second"]);
    std::fs::write(&path, "[cache").unwrap();
    raise(Signal::SIGHUP).unwrap();
    until("the broken file rejected", || trigger.stats().rejected == 1).await;
    let stats = trigger.stats();
    assert_eq!((stats.events, stats.reloads, stats.rejected), (3, 2, 1));
    trigger.stop().await;
    assert!(calls.recv().await.is_none(), "called after the broken file");

    // Wired to a `Running`.
    std::fs::write(&path, infra("default", 10)).unwrap();
    let config = InfraConfig::from_file(&path).unwrap();
    let running = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .start()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let cache = running.infra().capability(&CACHE, "default").unwrap();
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();
    let trigger = ReloadOnSighup::new(&path)
        .start_reloading(&running)
        .unwrap();
    std::fs::write(&path, infra("default", 20)).unwrap();
    raise(Signal::SIGHUP).unwrap();
    until("cache.default replaced", || {
        version(&running, "cache", "default") == 2
    })
    .await;
    assert_eq!(cache.get("k").await.unwrap(), None);
    cache.set("k", Bytes::from_static(b"w")).await.unwrap();

    std::fs::write(&path, "[cache").unwrap();
    raise(Signal::SIGHUP).unwrap();
    until("the broken file rejected", || trigger.stats().rejected == 1).await;
    assert_eq!(version(&running, "cache", "default"), 2);
    assert_eq!(
        cache.get("k").await.unwrap(),
        Some(Bytes::from_static(b"w"))
    );
    trigger.stop().await;
    running.shutdown().await.unwrap();
}
