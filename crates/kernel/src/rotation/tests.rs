//! The watcher against a hand-written `Secrets` store (the kernel never depends on a driver):
//! the watch path, polling by version and by digest, unused secrets ignored, store errors
//! retried, `Stopped` ending a watcher, and cancellation of a `changes` that never answers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use sandloom_sdk_infra::secrets::{Changes, Secrets, SecretsOps, not_found};
use sandloom_sdk_infra::{ErrorKind, Infra, InfraError, InfraResult, SECRETS, Secret};
use sandloom_test_support::LogCapture;
use tokio::sync::{Notify, broadcast};

use super::{Mode, Rotations, SecretRotation, StoreWatch, Timing, Watcher, plan};
use crate::config::InfraConfig;
use crate::references::uses::{SecretUse, UsedBy};
use crate::registry::Stability;
use crate::report::{ReportLine, StartupReport};

const VALUE: &str = "v4lue-N3VER-sh0wn";

#[derive(Default)]
struct State {
    /// name → (version, value); removed names are absent.
    values: BTreeMap<String, (u64, Vec<u8>)>,
    cursor: u64,
    /// (cursor, name) of every change.
    history: Vec<(u64, String)>,
}

/// A store with every feature, whose calls can be made to fail, stop or hang.
#[derive(Default)]
struct Fake {
    state: Mutex<State>,
    changed: Notify,
    /// How many next calls answer `Unavailable`.
    failing: AtomicU32,
    stopped: AtomicBool,
    /// `changes` never answers (and notes when its future is dropped).
    hang: AtomicBool,
    hung_dropped: Arc<AtomicBool>,
    changes_calls: AtomicUsize,
    /// The next `changes` answers a relist (as after a reload replaced the instance).
    relist: AtomicBool,
    /// The names `get` and `current_version` were asked for.
    read: Mutex<Vec<String>>,
}

impl Fake {
    fn set(&self, name: &str, value: &str) {
        let mut state = self.state.lock().unwrap();
        state.cursor += 1;
        let cursor = state.cursor;
        let version = state.values.get(name).map_or(0, |(v, _)| *v) + 1;
        state
            .values
            .insert(name.to_owned(), (version, value.as_bytes().to_vec()));
        state.history.push((cursor, name.to_owned()));
        drop(state);
        self.changed.notify_waiters();
    }

    fn remove(&self, name: &str) {
        let mut state = self.state.lock().unwrap();
        state.cursor += 1;
        let cursor = state.cursor;
        state.values.remove(name);
        state.history.push((cursor, name.to_owned()));
        drop(state);
        self.changed.notify_waiters();
    }

    fn answer(&self) -> InfraResult<()> {
        if self.stopped.load(Ordering::SeqCst) {
            return Err(InfraError::new(ErrorKind::Stopped, "secrets", "stopped"));
        }
        if self
            .failing
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(InfraError::new(
                ErrorKind::Unavailable,
                "secrets",
                "connection refused",
            ));
        }
        Ok(())
    }

    fn reads(&self) -> Vec<String> {
        self.read.lock().unwrap().clone()
    }
}

struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl SecretsOps for Fake {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.read.lock().unwrap().push(name.to_owned());
        self.answer()?;
        let state = self.state.lock().unwrap();
        let (_, value) = state.values.get(name).ok_or_else(|| not_found(name))?;
        Ok(Secret::new(value.clone()))
    }

    async fn current_version(&self, name: &str) -> InfraResult<u64> {
        self.read.lock().unwrap().push(name.to_owned());
        self.answer()?;
        let state = self.state.lock().unwrap();
        state
            .values
            .get(name)
            .map(|(version, _)| *version)
            .ok_or_else(|| not_found(name))
    }

    async fn changes(&self, after: u64, wait: Duration) -> InfraResult<Changes> {
        self.changes_calls.fetch_add(1, Ordering::SeqCst);
        if self.hang.load(Ordering::SeqCst) {
            let _dropped = OnDrop(Arc::clone(&self.hung_dropped));
            std::future::pending::<()>().await;
        }
        self.answer()?;
        if self.relist.swap(false, Ordering::SeqCst) {
            let state = self.state.lock().unwrap();
            let names = state.values.keys().cloned().collect();
            return Ok(Changes::relisted(state.cursor.max(1), names));
        }
        let deadline = tokio::time::Instant::now() + wait;
        let base = if after == 0 {
            self.state.lock().unwrap().cursor
        } else {
            after
        };
        loop {
            let notified = self.changed.notified();
            {
                let state = self.state.lock().unwrap();
                let mut names: Vec<String> = state
                    .history
                    .iter()
                    .filter(|(cursor, _)| *cursor > base)
                    .map(|(_, name)| name.clone())
                    .collect();
                names.sort();
                names.dedup();
                if !names.is_empty() || tokio::time::Instant::now() >= deadline {
                    return Ok(Changes::new(state.cursor.max(1), names));
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }
}

fn fast() -> Timing {
    Timing {
        watch_wait: Duration::from_millis(200),
        backoff_first: Duration::from_millis(5),
        backoff_max: Duration::from_millis(20),
        min_round: Duration::from_millis(1),
    }
}

fn store(fake: &Arc<Fake>, mode: Mode, watched: &[(&str, &[&str])]) -> StoreWatch {
    StoreWatch {
        store: "vault".to_owned(),
        secrets: Arc::clone(fake) as Arc<dyn Secrets>,
        mode,
        watched: watched
            .iter()
            .map(|(name, dependents)| {
                let dependents = dependents.iter().map(|d| (*d).to_owned()).collect();
                ((*name).to_owned(), dependents)
            })
            .collect(),
    }
}

async fn next(events: &mut broadcast::Receiver<SecretRotation>) -> SecretRotation {
    tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("a rotation within 5 s")
        .expect("the channel is open")
}

async fn none_within(events: &mut broadcast::Receiver<SecretRotation>, wait: Duration) {
    if let Ok(got) = tokio::time::timeout(wait, events.recv()).await {
        panic!("no rotation expected, got {got:?}");
    }
}

/// Wait until `done` holds (polling), at most 5 s.
async fn until(mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn watch_path_reports_a_used_secret_with_its_dependents_and_ignores_the_others() {
    let fake = Arc::new(Fake::default());
    fake.set("db/password", "first");
    let rotations = Arc::new(Rotations::new());
    let mut events = rotations.subscribe();
    let used_secrets = [("db/password", &["cache.default", "taskqueue.jobs"][..])];
    let watcher = Watcher::spawn(
        vec![store(&fake, Mode::Watch, &used_secrets)],
        &rotations,
        fast(),
    );
    until(|| fake.changes_calls.load(Ordering::SeqCst) >= 1).await;

    fake.set("other/secret", "x");
    none_within(&mut events, Duration::from_millis(100)).await;
    fake.set("db/password", VALUE);
    let rotation = next(&mut events).await;
    assert_eq!(rotation.store, "vault");
    assert_eq!(rotation.secret, "db/password");
    assert_eq!(rotation.dependents, ["cache.default", "taskqueue.jobs"]);
    assert!(!format!("{rotation:?}").contains(VALUE));
    // A removal is a change too (a reload would then refuse, keeping the old instance).
    fake.remove("db/password");
    assert_eq!(next(&mut events).await.secret, "db/password");
    none_within(&mut events, Duration::from_millis(50)).await;
    assert_eq!(rotations.recent().len(), 2);
    // The watch path never reads a value.
    assert!(fake.reads().is_empty(), "{:?}", fake.reads());
    watcher.stop(Duration::from_secs(1)).await;
}

/// A relist (the store's instance was replaced by a reload while the watcher waited) names
/// every secret the store holds: none of them is a rotation. The watcher takes its cursor and
/// reports the next real change.
#[tokio::test]
async fn watch_path_reports_no_rotation_for_a_relist() {
    let fake = Arc::new(Fake::default());
    fake.set("db/password", "first");
    fake.relist.store(true, Ordering::SeqCst);
    let rotations = Arc::new(Rotations::new());
    let mut events = rotations.subscribe();
    let used_secrets = [("db/password", &["cache.default"][..])];
    let watcher = Watcher::spawn(
        vec![store(&fake, Mode::Watch, &used_secrets)],
        &rotations,
        fast(),
    );
    until(|| fake.changes_calls.load(Ordering::SeqCst) >= 2).await;
    none_within(&mut events, Duration::from_millis(100)).await;
    fake.set("db/password", "second");
    assert_eq!(next(&mut events).await.secret, "db/password");
    assert_eq!(rotations.recent().len(), 1);
    watcher.stop(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn poll_path_by_version_reads_versions_not_values() {
    let fake = Arc::new(Fake::default());
    fake.set("db/password", "first");
    fake.set("unused", "x");
    let rotations = Arc::new(Rotations::new());
    let mut events = rotations.subscribe();
    let mode = Mode::PollVersions(Duration::from_millis(10));
    let used_secrets = [
        ("db/password", &["cache.default"][..]),
        ("api/token", &["notifier.default"][..]),
    ];
    let watcher = Watcher::spawn(vec![store(&fake, mode, &used_secrets)], &rotations, fast());
    until(|| fake.reads().len() >= 2).await; // the first round: the baseline, no rotation

    fake.set("unused", "y");
    none_within(&mut events, Duration::from_millis(60)).await;
    fake.set("db/password", "second");
    let rotation = next(&mut events).await;
    assert_eq!(
        (rotation.secret.as_str(), &rotation.dependents[..]),
        ("db/password", &["cache.default".to_owned()][..])
    );
    // A secret that appears is a change as well.
    fake.set("api/token", "t");
    assert_eq!(next(&mut events).await.secret, "api/token");
    // Only used secrets are looked at.
    assert!(
        fake.reads()
            .iter()
            .all(|n| n == "db/password" || n == "api/token")
    );
    watcher.stop(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn poll_path_by_digest_sees_a_new_value_but_not_the_same_value_rewritten() {
    let fake = Arc::new(Fake::default());
    fake.set("db/password", "first");
    let rotations = Arc::new(Rotations::new());
    let mut events = rotations.subscribe();
    let mode = Mode::PollDigests(Duration::from_millis(10));
    let used_secrets = [("db/password", &["cache.default"][..])];
    let watcher = Watcher::spawn(vec![store(&fake, mode, &used_secrets)], &rotations, fast());
    until(|| !fake.reads().is_empty()).await;

    fake.set("db/password", "first"); // a new version, the same value: nothing to reload
    none_within(&mut events, Duration::from_millis(60)).await;
    fake.set("db/password", VALUE);
    assert_eq!(next(&mut events).await.secret, "db/password");
    fake.remove("db/password");
    assert_eq!(next(&mut events).await.secret, "db/password");
    none_within(&mut events, Duration::from_millis(60)).await;
    assert_eq!(rotations.recent().len(), 2);
    watcher.stop(Duration::from_secs(1)).await;
}

/// Run `test` on a current-thread runtime with a local metrics recorder and log subscriber
/// (both thread-local: every task of that runtime runs on this thread); answer the counters and
/// the log text.
fn observed(test: impl Future<Output = ()>) -> (Snapshotter, String) {
    let logs = LogCapture::new();
    let subscriber = logs.subscriber(tracing::Level::TRACE);
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let subscriber = tracing::Dispatch::new(subscriber);
    // With a single registered dispatcher, `tracing` caches a call site's interest from the
    // default of whichever thread hits it first: another test of this binary, with none, would
    // then silence it here. A second one makes every call site ask each of them.
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    tracing::callsite::rebuild_interest_cache();
    tracing::dispatcher::with_default(&subscriber, || {
        metrics::with_local_recorder(&recorder, || runtime.block_on(test));
    });
    (snapshotter, logs.text())
}

type Snapshot = Vec<(
    metrics_util::CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)>;

fn counter(snapshot: &Snapshot, name: &str, labels: &[(&str, &str)]) -> u64 {
    snapshot
        .iter()
        .filter(|(key, ..)| {
            key.key().name() == name
                && labels.iter().all(|(k, v)| {
                    key.key()
                        .labels()
                        .any(|label| label.key() == *k && label.value() == *v)
                })
        })
        .map(|(.., value)| match value {
            DebugValue::Counter(n) => *n,
            other => panic!("{name} is not a counter: {other:?}"),
        })
        .sum()
}

#[test]
fn store_errors_are_logged_counted_and_retried_and_a_rotation_is_logged_without_its_value() {
    let fake = Arc::new(Fake::default());
    let rotations = Arc::new(Rotations::new());
    let (snapshotter, logs) = observed({
        let fake = Arc::clone(&fake);
        let rotations = Arc::clone(&rotations);
        async move {
            let mut events = rotations.subscribe();
            fake.failing.store(3, Ordering::SeqCst);
            let used_secrets = [("db/password", &["cache.default"][..])];
            let watcher = Watcher::spawn(
                vec![store(&fake, Mode::Watch, &used_secrets)],
                &rotations,
                fast(),
            );
            // Three failures, then a call that waits: the watcher kept going.
            until(|| fake.changes_calls.load(Ordering::SeqCst) >= 4).await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            fake.set("db/password", VALUE);
            assert_eq!(next(&mut events).await.secret, "db/password");
            watcher.stop(Duration::from_secs(1)).await;
        }
    });
    let errors = crate::telemetry::ROTATION_ERRORS_METRIC;
    let rotated = crate::telemetry::ROTATIONS_METRIC;
    // A snapshot takes the counters (they restart from 0): one snapshot for every check.
    let snapshot = snapshotter.snapshot().into_vec();
    assert_eq!(
        counter(
            &snapshot,
            errors,
            &[("store", "vault"), ("outcome", "unavailable")]
        ),
        3
    );
    assert_eq!(counter(&snapshot, rotated, &[("store", "vault")]), 1);
    assert_eq!(
        logs.matches("could not be checked for rotated secrets; retrying")
            .count(),
        3,
        "{logs}"
    );
    assert!(
        logs.contains("retry_in_ms=5") && logs.contains("retry_in_ms=10"),
        "{logs}"
    );
    assert!(logs.contains("the secrets store answers again"), "{logs}");
    let line = logs
        .lines()
        .find(|line| line.contains("secret rotated"))
        .unwrap_or_else(|| panic!("no rotation line in {logs}"));
    assert!(line.contains(" INFO sandloom::secrets:"), "{line}");
    assert!(
        line.contains("store=vault secret=db/password dependents=cache.default"),
        "{line}"
    );
    assert!(!logs.contains(VALUE), "{logs}");
    assert_eq!(rotations.recent().len(), 1);
}

#[test]
fn poll_errors_back_off_but_never_below_the_interval() {
    let timing = fast();
    assert_eq!(timing.backoff(1), Duration::from_millis(5));
    assert_eq!(timing.backoff(2), Duration::from_millis(10));
    assert_eq!(timing.backoff(3), Duration::from_millis(20));
    assert_eq!(timing.backoff(40), Duration::from_millis(20));
    let default = Timing::default();
    assert_eq!(default.backoff(u32::MAX), default.backoff_max);
}

#[tokio::test]
async fn a_polled_store_that_fails_then_recovers_is_followed_again() {
    let fake = Arc::new(Fake::default());
    fake.set("db/password", "first");
    fake.failing.store(4, Ordering::SeqCst);
    let rotations = Arc::new(Rotations::new());
    let mut events = rotations.subscribe();
    let mode = Mode::PollVersions(Duration::from_millis(5));
    let used_secrets = [("db/password", &["cache.default"][..])];
    let watcher = Watcher::spawn(vec![store(&fake, mode, &used_secrets)], &rotations, fast());
    // The failures leave the baseline unknown; the first answer is the baseline, not a change.
    until(|| fake.reads().len() >= 6).await;
    none_within(&mut events, Duration::from_millis(30)).await;
    fake.set("db/password", "second");
    assert_eq!(next(&mut events).await.secret, "db/password");
    watcher.stop(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_stopped_store_ends_its_watcher() {
    for mode in [Mode::Watch, Mode::PollDigests(Duration::from_millis(5))] {
        let fake = Arc::new(Fake::default());
        let rotations = Arc::new(Rotations::new());
        let used_secrets = [("db/password", &["cache.default"][..])];
        let watcher = Watcher::spawn(vec![store(&fake, mode, &used_secrets)], &rotations, fast());
        fake.stopped.store(true, Ordering::SeqCst);
        fake.set("db/password", "wake the long poll");
        until(|| watcher.is_finished()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_cancels_a_changes_call_that_never_answers() {
    let fake = Arc::new(Fake::default());
    fake.hang.store(true, Ordering::SeqCst);
    let rotations = Arc::new(Rotations::new());
    let used_secrets = [("db/password", &["cache.default"][..])];
    let timing = Timing {
        watch_wait: Duration::from_millis(10), // the driver ignores it
        ..fast()
    };
    let watcher = Watcher::spawn(
        vec![store(&fake, Mode::Watch, &used_secrets)],
        &rotations,
        timing,
    );
    until(|| fake.changes_calls.load(Ordering::SeqCst) == 1).await;
    let began = std::time::Instant::now();
    watcher.stop(Duration::from_secs(10)).await;
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    // The hanging call was dropped, not left behind.
    assert!(fake.hung_dropped.load(Ordering::SeqCst));
    assert_eq!(
        Arc::strong_count(&fake),
        1,
        "the task still holds the store"
    );
}

/// A planned store as compared: name, mode, and each secret with its dependents.
type Planned<'a> = (&'a str, Mode, Vec<(&'a String, &'a Vec<String>)>);

#[test]
fn plan_watches_used_stores_in_the_mode_their_features_allow() {
    let text = "[secrets.w]\ndriver = \"d\"\n[secrets.v]\ndriver = \"d\"\nrotation_poll_ms = 250\n\
                [secrets.d]\ndriver = \"d\"\n[secrets.off]\ndriver = \"d\"\nrotation_poll_ms = 0\n\
                [secrets.idle]\ndriver = \"d\"\n";
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    let fake = Arc::new(Fake::default());
    let mut infra = Infra::builder();
    let mut lines = Vec::new();
    for (name, features) in [
        ("w", vec!["versions", "watch"]),
        ("v", vec!["versions", "list"]),
        ("d", vec![]),
        ("off", vec!["watch"]),
        ("idle", vec!["watch"]),
    ] {
        infra = infra.with(&SECRETS, name, Arc::clone(&fake) as Arc<dyn Secrets>);
        lines.push(ReportLine {
            capability: "secrets".to_owned(),
            instance: name.to_owned(),
            driver: "d".to_owned(),
            package: "p",
            contract_version: semver::Version::new(0, 1, 0),
            features,
            stability: Stability::Experimental,
            start_attempts: 1,
        });
    }
    let infra = infra.build().unwrap();
    let report = StartupReport {
        environment: config.environment(),
        origin: "infra.toml".to_owned(),
        lines,
    };
    let use_of = |store: &str, secret: &str, by: &[(&str, &str)]| SecretUse {
        store: store.to_owned(),
        secret: secret.to_owned(),
        used_by: by
            .iter()
            .map(|(capability, instance)| UsedBy {
                capability: (*capability).to_owned(),
                instance: (*instance).to_owned(),
                option: "password".to_owned(),
            })
            .collect(),
    };
    let uses = [
        use_of("w", "a", &[("taskqueue", "default"), ("cache", "default")]),
        use_of("w", "a", &[("cache", "default")]), // a second option of the same instance
        use_of("w", "b", &[("lock", "default")]),
        use_of("v", "a", &[("cache", "default")]),
        use_of("d", "a", &[("cache", "default")]),
        use_of("off", "a", &[("cache", "default")]),
        use_of("missing", "a", &[("cache", "default")]),
    ];
    let started = report.lines.iter().map(|line| {
        (
            line.capability.as_str(),
            line.instance.as_str(),
            &line.features[..],
        )
    });
    let stores = plan(&uses, &infra, &config, &super::store_features(started));
    let got: Vec<Planned<'_>> = stores
        .iter()
        .map(|s| (s.store.as_str(), s.mode, s.watched.iter().collect()))
        .collect();
    let cache = vec!["cache.default".to_owned()];
    let both = vec!["cache.default".to_owned(), "taskqueue.default".to_owned()];
    let lock = vec!["lock.default".to_owned()];
    let a = "a".to_owned();
    let b = "b".to_owned();
    assert_eq!(
        got,
        [
            (
                "d",
                Mode::PollDigests(Duration::from_secs(30)),
                vec![(&a, &cache)]
            ),
            (
                "v",
                Mode::PollVersions(Duration::from_millis(250)),
                vec![(&a, &cache)]
            ),
            ("w", Mode::Watch, vec![(&a, &both), (&b, &lock)]),
        ]
    );
}

#[test]
fn rotations_kept_are_bounded_and_the_oldest_go_first() {
    let rotations = Rotations::new();
    for i in 0..super::ROTATIONS_KEPT + 5 {
        rotations.record(SecretRotation {
            at: std::time::SystemTime::now(),
            store: "s".to_owned(),
            secret: format!("n{i}"),
            dependents: Vec::new(),
        });
    }
    let recent = rotations.recent();
    assert_eq!(recent.len(), super::ROTATIONS_KEPT);
    assert_eq!(recent[0].secret, "n5");
    assert_eq!(
        recent.last().unwrap().secret,
        format!("n{}", super::ROTATIONS_KEPT + 4)
    );
}
