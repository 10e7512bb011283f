//! Draining that neither waits on idle waiters nor leaves a caller pending: an operation
//! declared `#[waits]` (`reserve`, `acquire_wait`, `changes`) still waiting when shutdown begins
//! answers `Stopped` at once, so an idle consumer does not hold shutdown for its whole
//! `stop_timeout_ms`; and an operation whose driver never answers answers `Stopped` to its
//! caller when the drain's budget ends. Each such answer carries the gate's mark (`GateExit`),
//! which tells it from a `Stopped` the driver gave.
//!
//! Every test runs on a current-thread runtime, so the log captured with `set_default` is the
//! one of the shutdown and of every task.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{CacheOps, ErrorKind, InfraError, InfraResult, LOCK, SECRETS, TASK_QUEUE};
use sandloom::{InfraConfig, Kernel, Running};
use sandloom_driverkit::__private::GateExit;
use sandloom_driverkit::cache::CacheProvider;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
use sandloom_test_support::LogCapture;
use tracing::Level;

/// The budget every test gives the drain: what an idle waiter used to cost each shutdown.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// What the log says when operations outlive the drain's budget.
const OUTLIVED: &str = "operations still in flight after the stop timeout";

/// A cache whose `get` never answers, as a driver hung on a dead backend.
struct Stuck;

impl CacheOps for Stuck {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        std::future::pending().await
    }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

impl Driver for Stuck {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Self)
    }
}

impl CacheProvider for Stuck {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

sandloom_driverkit::register_driver!(cache, "stuck", Stuck);

async fn start(instances: &str, stop_timeout: Duration) -> Running {
    let text = format!(
        "stop_timeout_ms = {}\n{instances}",
        stop_timeout.as_millis()
    );
    let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .start()
        .await
        .unwrap()
}

/// Start `instances`, run `waiting` (an operation that waits longer than the whole test) in a
/// task of its own until it waits, then shut down: the shutdown takes far less than its budget,
/// logs nothing about operations left in flight, and the operation answers `Stopped`, marked
/// as cut by the drain.
async fn shutdown_cuts<T, F>(instances: &str, waiting: impl FnOnce(&Running) -> F)
where
    T: std::fmt::Debug + Send + 'static,
    F: Future<Output = InfraResult<T>> + Send + 'static,
{
    let log = LogCapture::new();
    let _guard = log.set_default(Level::INFO);
    let running = start(instances, STOP_TIMEOUT).await;
    let operation = tokio::spawn(waiting(&running));
    // On this one thread, the operation has reached its wait once the task yielded back.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!operation.is_finished(), "the operation did not wait");

    let began = Instant::now();
    running.shutdown().await.unwrap();
    let took = began.elapsed();
    let answer = operation.await.unwrap();
    assert!(
        took < STOP_TIMEOUT / 2,
        "shutdown took {took:?} of its {STOP_TIMEOUT:?} budget"
    );
    let error = answer.expect_err("the waiting operation must answer Stopped");
    assert_eq!(error.kind(), ErrorKind::Stopped, "{error}");
    assert_eq!(GateExit::of(&error), Some(GateExit::Cut), "{error}");
    let logged = log.text();
    assert!(!logged.contains(OUTLIVED), "{logged}");
}

#[tokio::test(flavor = "current_thread")]
async fn an_idle_reserve_answers_stopped_at_shutdown_without_holding_it() {
    shutdown_cuts("[taskqueue.default]\ndriver = \"memory\"\n", |running| {
        let queue = running
            .infra()
            .capability_arc(&TASK_QUEUE, "default")
            .unwrap();
        async move { queue.reserve("jobs", Duration::from_secs(30)).await }
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_waiting_acquire_wait_answers_stopped_at_shutdown_without_holding_it() {
    let mut held = None;
    shutdown_cuts("[lock.default]\ndriver = \"memory\"\n", |running| {
        let lock = running.infra().capability_arc(&LOCK, "default").unwrap();
        let holder = Arc::clone(&lock);
        held = Some(holder);
        async move {
            // Held by someone else for longer than the test: `acquire_wait` has to wait.
            let ttl = Duration::from_mins(1);
            let _ = lock.acquire("nightly", ttl).await?.expect("free at first");
            lock.acquire_wait("nightly", ttl, Duration::from_secs(30))
                .await
        }
    })
    .await;
    let lock = held.unwrap();
    let after = lock.acquire("nightly", Duration::from_secs(1)).await;
    assert_eq!(
        GateExit::of(&after.unwrap_err()),
        Some(GateExit::Refused),
        "after shutdown, the gate refuses: the driver never sees the call"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_waiting_changes_long_poll_answers_stopped_at_shutdown_without_holding_it() {
    shutdown_cuts("[secrets.default]\ndriver = \"memory\"\n", |running| {
        let secrets = running.infra().capability_arc(&SECRETS, "default").unwrap();
        async move {
            let cursor = secrets.changes(0, Duration::ZERO).await?.cursor;
            secrets.changes(cursor, Duration::from_secs(30)).await
        }
    })
    .await;
}

/// A `get` whose driver never answers: when the drain's budget is spent, its caller gets
/// `Stopped`, marked as abandoned (the outcome of such an operation is unknown), and the log
/// says so.
#[tokio::test(flavor = "current_thread")]
async fn an_operation_whose_driver_never_answers_answers_stopped_when_the_budget_ends() {
    let log = LogCapture::new();
    let _guard = log.set_default(Level::INFO);
    let budget = Duration::from_millis(300);
    let running = start("[cache.default]\ndriver = \"stuck\"\n", budget).await;
    let cache = running
        .infra()
        .capability_arc(&sandloom::sdk::CACHE, "default")
        .unwrap();
    let hung = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move { cache.get("k").await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!hung.is_finished());

    running.shutdown().await.unwrap();
    let error: InfraError = tokio::time::timeout(Duration::from_secs(5), hung)
        .await
        .expect("the caller's future resolves once the budget is spent")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Stopped, "{error}");
    assert_eq!(GateExit::of(&error), Some(GateExit::Abandoned), "{error}");
    assert!(!GateExit::Abandoned.may_run_elsewhere());
    assert!(
        error
            .to_string()
            .contains("may or may not have taken effect"),
        "{error}"
    );
    let logged = log.text();
    assert!(logged.contains(OUTLIVED), "{logged}");
    assert!(
        logged.contains("answer `Stopped` to their callers"),
        "{logged}"
    );
}

/// A `get` on a driver that never answers is not declared `#[waits]`: the drain does not cut
/// it when it begins, only when its budget ends.
#[tokio::test(flavor = "current_thread")]
async fn an_operation_not_declared_waiting_is_not_cut_when_the_drain_begins() {
    let budget = Duration::from_millis(400);
    let running = start("[cache.default]\ndriver = \"stuck\"\n", budget).await;
    let cache = running
        .infra()
        .capability_arc(&sandloom::sdk::CACHE, "default")
        .unwrap();
    let hung = tokio::spawn(async move { cache.get("k").await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let began = Instant::now();
    let shutdown = tokio::spawn(running.shutdown());
    let error = hung.await.unwrap().unwrap_err();
    let waited = began.elapsed();
    shutdown.await.unwrap().unwrap();
    assert_eq!(GateExit::of(&error), Some(GateExit::Abandoned), "{error}");
    assert!(
        waited >= budget,
        "a `get` was ended after {waited:?}, before the budget {budget:?} was spent"
    );
}
