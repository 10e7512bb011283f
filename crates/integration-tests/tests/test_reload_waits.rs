//! Waiting operations across a reload (issue 26): an operation declared `#[waits]` (`reserve`,
//! `acquire_wait`, `changes`) waiting longer than the old instance's stop timeout when a reload
//! swaps it is cut by the old instance's drain at once and runs again on the new one, so its
//! caller sees no error, its wait goes on there, and the reload does not wait for it. (At
//! shutdown the same operations answer `Stopped`: `test_drain_waits.rs`.) A `changes` with a
//! cursor of the old instance is not run again with it: its declaration rebinds it to a relist
//! of the new instance (issue 27's rerun).
//!
//! Every bound on time is far from what the test expects: the reload's budget is 30 s, each
//! wait a minute, and the test only tells "at once" from "after the budget".

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandloom::sdk::{LOCK, SECRETS, TASK_QUEUE};
use sandloom::{InfraConfig, Kernel, Running};
use sandloom_embedded::MemorySecretStore;
use sandloom_test_support::waits::reserve_gets_the_task_enqueued_now;

/// The drain's budget: what a reload waited for an idle waiter before it was cut at once.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long each operation waits: longer than the stop timeout.
const WAIT: Duration = Duration::from_mins(1);

/// `[capability.default]` served by `driver` with `options` (TOML lines) and a
/// `health_timeout_ms` of `health_ms`: changing only that replaces the instance, whatever its
/// driver.
fn config(table: &str, driver: &str, health_ms: u64, options: &str) -> InfraConfig {
    let text = format!(
        "stop_timeout_ms = {}\n[{table}.default]\ndriver = \"{driver}\"\nhealth_timeout_ms = {health_ms}\n{options}",
        STOP_TIMEOUT.as_millis()
    );
    InfraConfig::from_toml_str(&text, "infra.toml").unwrap()
}

async fn start(config: InfraConfig) -> Running {
    Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .start()
        .await
        .unwrap()
}

/// Lets `task` run until it waits (on this test's one thread), and checks that it does.
async fn until_waiting<T>(task: &tokio::task::JoinHandle<T>) {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!task.is_finished(), "the operation did not wait");
}

/// Reload to `new` while an operation waits: the instance is replaced, and the reload returns
/// without waiting for the operation (well before the stop timeout, nothing left in flight).
async fn reload_at_once(running: &Running, new: InfraConfig) {
    let version = running.versions()[0].2;
    let began = Instant::now();
    let report = running.reload(new).await.unwrap();
    let took = began.elapsed();
    assert!(
        took < STOP_TIMEOUT,
        "the reload waited {took:?} for a waiting operation"
    );
    assert_eq!(report.left_in_flight, 0);
    assert_eq!(
        running.versions()[0].2,
        version + 1,
        "the instance was not replaced"
    );
}

type Reserve = tokio::task::JoinHandle<
    sandloom::sdk::InfraResult<Option<sandloom::sdk::taskqueue::Reservation>>,
>;

/// `taskqueue.memory` running, and a `reserve` waiting on its empty queue `jobs`.
async fn waiting_reserve() -> (
    Running,
    Arc<dyn sandloom::sdk::taskqueue::TaskQueue>,
    Reserve,
) {
    let running = start(config("taskqueue", "memory", 1_000, "")).await;
    let queue = running
        .infra()
        .capability_arc(&TASK_QUEUE, "default")
        .unwrap();
    let reserve = tokio::spawn({
        let queue = Arc::clone(&queue);
        async move { queue.reserve("jobs", WAIT).await }
    });
    until_waiting(&reserve).await;
    (running, queue, reserve)
}

/// A `reserve` waiting on `taskqueue.memory` across a reload gets the task enqueued after the
/// reload, from the new instance; the reload returns without waiting for it.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_reserve_continues_on_the_new_instance() {
    let (running, queue, reserve) = waiting_reserve().await;
    reload_at_once(&running, config("taskqueue", "memory", 2_000, "")).await;
    until_waiting(&reserve).await;

    // The old in-memory queue is gone: only the new instance can hand this task out.
    reserve_gets_the_task_enqueued_now(&*queue, reserve, b"after").await;
    drop(queue);
    running.shutdown().await.unwrap();
}

/// An `acquire_wait` waiting on `lock.memory` (someone else holds the lock there) across a
/// reload acquires the lock on the new instance, where nobody holds it; the reload returns
/// without waiting for it.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_acquire_wait_continues_on_the_new_instance() {
    let running = start(config("lock", "memory", 1_000, "")).await;
    let lock = running.infra().capability_arc(&LOCK, "default").unwrap();
    let ttl = Duration::from_mins(1);
    let held = lock
        .acquire("nightly", ttl)
        .await
        .unwrap()
        .expect("free at first");
    let waiting = tokio::spawn({
        let lock = Arc::clone(&lock);
        async move { lock.acquire_wait("nightly", ttl, WAIT).await }
    });
    until_waiting(&waiting).await;
    reload_at_once(&running, config("lock", "memory", 2_000, "")).await;

    let lease = waiting
        .await
        .unwrap()
        .expect("the acquire_wait must not fail because of the reload")
        .expect("nobody holds the lock on the new instance");
    // The new instance granted it: the lease the old one gave is unknown there.
    assert!(lock.release(&lease).await.unwrap());
    assert!(!lock.release(&held).await.unwrap());
    drop(lock);
    running.shutdown().await.unwrap();
}

/// The new instance begins to drain too (a second reload) while the operation waits on it:
/// it moves on again, to the third instance.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_reserve_follows_every_reload() {
    let (running, queue, reserve) = waiting_reserve().await;
    for health_ms in [2_000, 3_000] {
        reload_at_once(&running, config("taskqueue", "memory", health_ms, "")).await;
        until_waiting(&reserve).await;
    }
    assert_eq!(running.versions()[0].2, 3);
    reserve_gets_the_task_enqueued_now(&*queue, reserve, b"third").await;
    drop(queue);
    running.shutdown().await.unwrap();
}

/// `secrets.memory` running on the named store `store`, and a `changes` waiting on it with a
/// cursor it issued (after what the store holds now).
async fn waiting_changes(
    store: &str,
) -> (
    Running,
    Arc<dyn sandloom::sdk::secrets::Secrets>,
    u64,
    tokio::task::JoinHandle<sandloom::sdk::InfraResult<sandloom::sdk::secrets::Changes>>,
) {
    let options = format!("store = \"{store}\"\n");
    let running = start(config("secrets", "memory", 1_000, &options)).await;
    let secrets = running.infra().capability_arc(&SECRETS, "default").unwrap();
    let cursor = secrets.changes(0, Duration::ZERO).await.unwrap().cursor;
    let waiting = tokio::spawn({
        let secrets = Arc::clone(&secrets);
        async move { secrets.changes(cursor, WAIT).await }
    });
    until_waiting(&waiting).await;
    (running, secrets, cursor, waiting)
}

/// A named memory store holding `names`, each set once, in that order (one step of its
/// history each).
fn store_with(store: &str, names: &[&str]) -> MemorySecretStore {
    let secrets = MemorySecretStore::named(store);
    for name in names {
        secrets.set(name, "v").unwrap();
    }
    secrets
}

/// A reload to another store, whose history is *longer*, while a `changes` waits with the old
/// store's cursor: rerun there as-is, that cursor names a position in the other history, and the
/// call answered, without an error, the names changed there after it (`b/2`, `b/3`): a silent
/// wrong answer (issue 27's rerun). Now it answers at once a relist from the new instance: every
/// name it holds, its cursor, marked `relisted`; following that cursor sees what changes next.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_changes_rerun_on_a_longer_history_relists() {
    // Held: a named store lives while a handle to it does.
    let _old = store_with("test-reload-waits-short-a", &["a/1"]);
    let new = store_with("test-reload-waits-long-b", &["b/1", "b/2", "b/3"]);
    let (running, secrets, old_cursor, waiting) =
        waiting_changes("test-reload-waits-short-a").await;
    assert_eq!(old_cursor, 2, "one step of history on the old store");
    let options = "store = \"test-reload-waits-long-b\"\n";
    reload_at_once(&running, config("secrets", "memory", 2_000, options)).await;

    let changes = waiting
        .await
        .unwrap()
        .expect("the changes must not fail because of the reload");
    assert!(
        changes.relisted,
        "the old store's cursor {old_cursor} was used on another store: {changes:?}"
    );
    assert_eq!(changes.names, ["b/1", "b/2", "b/3"]);
    let now = secrets.changes(0, Duration::ZERO).await.unwrap().cursor;
    assert_eq!(changes.cursor, now, "the cursor is the new instance's");

    new.set("b/2", "rotated").unwrap();
    let next = secrets.changes(changes.cursor, WAIT).await.unwrap();
    assert_eq!(next.names, ["b/2"]);
    assert!(!next.relisted);
    drop(secrets);
    running.shutdown().await.unwrap();
}

/// The same with a *shorter* history on the new store: the old cursor is ahead of it, and the
/// call rerun as-is answered `InvalidInput`, an error across a reload. Now a relist too.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_changes_rerun_on_a_shorter_history_relists() {
    // Held: a named store lives while a handle to it does.
    let _old = store_with("test-reload-waits-long-a", &["a/1", "a/2", "a/3"]);
    let _new = store_with("test-reload-waits-short-b", &["b/1"]);
    let (running, secrets, old_cursor, waiting) = waiting_changes("test-reload-waits-long-a").await;
    assert_eq!(old_cursor, 4, "three steps of history on the old store");
    let options = "store = \"test-reload-waits-short-b\"\n";
    reload_at_once(&running, config("secrets", "memory", 2_000, options)).await;

    let changes = waiting
        .await
        .unwrap()
        .expect("the changes must not fail because of the reload");
    assert!(changes.relisted, "{changes:?}");
    assert_eq!(changes.names, ["b/1"]);
    drop(secrets);
    running.shutdown().await.unwrap();
}

/// A `changes` long poll waiting on `secrets.memory` across a reload that keeps its store: the
/// route cannot tell that the new instance reads the same history, so it answers a relist at
/// once there too (every name, the new instance's cursor), never the old cursor; the caller
/// following that cursor gets the change made after the reload.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_changes_across_a_reload_keeping_its_store_relists() {
    let name = "test-reload-waits-changes";
    let store = store_with(name, &["db/password"]);
    let (running, secrets, _, waiting) = waiting_changes(name).await;
    let options = format!("store = \"{name}\"\n");
    reload_at_once(&running, config("secrets", "memory", 2_000, &options)).await;

    let relist = waiting
        .await
        .unwrap()
        .expect("the changes must not fail because of the reload");
    assert!(relist.relisted);
    assert_eq!(relist.names, ["db/password"]);

    let following = tokio::spawn({
        let secrets = Arc::clone(&secrets);
        async move { secrets.changes(relist.cursor, WAIT).await }
    });
    until_waiting(&following).await;
    store.set("db/password", "rotated").unwrap();
    let changes = following.await.unwrap().unwrap();
    assert_eq!(changes.names, ["db/password"]);
    assert!(!changes.relisted);
    assert!(changes.cursor > relist.cursor);
    drop(secrets);
    running.shutdown().await.unwrap();
}

/// A `changes` "from now" (cursor 0) is bound to no instance: across a reload it goes on
/// waiting on the new one, and answers the change made there.
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_changes_from_now_continues_on_the_new_instance() {
    let name = "test-reload-waits-from-now";
    let store = store_with(name, &["db/password"]);
    let options = format!("store = \"{name}\"\n");
    let running = start(config("secrets", "memory", 1_000, &options)).await;
    let secrets = running.infra().capability_arc(&SECRETS, "default").unwrap();
    let waiting = tokio::spawn({
        let secrets = Arc::clone(&secrets);
        async move { secrets.changes(0, WAIT).await }
    });
    until_waiting(&waiting).await;
    reload_at_once(&running, config("secrets", "memory", 2_000, &options)).await;
    until_waiting(&waiting).await;

    store.set("db/password", "rotated").unwrap();
    let changes = waiting.await.unwrap().unwrap();
    assert_eq!(changes.names, ["db/password"]);
    assert!(!changes.relisted);
    drop(secrets);
    running.shutdown().await.unwrap();
}
