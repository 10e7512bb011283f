//! `Running::reload` (issue 26): a changed instance is built and health-checked beside the old
//! one, every handle modules hold switches to it at one instant, operations in flight finish on
//! the old one, and any failure keeps the old one serving, untouched.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use sandloom::reload::Outcome;
use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{CACHE, CacheOps, ErrorKind, InfraResult, Requirement, cache};
use sandloom::{Health, InfraConfig, Kernel, Running};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_driverkit::{Driver, DriverError, Version};
use tokio::sync::Semaphore;

/// Where this file's keys live in the shared Redis.
const REDIS_PREFIX: &str = "sandloom-test-i26-reload:";

/// `get` of a `hold = true` probe waits for a permit here.
static HOLD: Semaphore = Semaphore::const_new(0);
/// Probes that entered a held `get`.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// What probes did, by tag: `start`, `stop`.
static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn events(tag: &str) -> Vec<String> {
    EVENTS
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.ends_with(&format!(" {tag}")))
        .cloned()
        .collect()
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ProbeOptions {
    /// What `get` answers, so a test sees which instance served it.
    tag: String,
    /// `ok`, or how `start`/`health` misbehave: `fail`, `panic`, `hang`, `unhealthy`.
    mode: String,
    /// `get` waits on [`HOLD`].
    hold: bool,
}

/// A cache whose `get` answers its tag.
struct Probe {
    options: ProbeOptions,
    stopped: AtomicBool,
}

impl CacheOps for Probe {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        if self.options.hold {
            HELD.fetch_add(1, Ordering::SeqCst);
            HOLD.acquire().await.expect("never closed").forget();
        }
        assert!(
            !self.stopped.load(Ordering::SeqCst),
            "an operation reached a stopped probe"
        );
        Ok(Some(Bytes::from(self.options.tag.clone())))
    }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

impl Driver for Probe {
    type Options = ProbeOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn from_options(options: ProbeOptions) -> Result<Self, DriverError> {
        Ok(Self {
            options,
            stopped: AtomicBool::new(false),
        })
    }
    async fn start(&self) -> Result<(), DriverError> {
        EVENTS
            .lock()
            .unwrap()
            .push(format!("start {}", self.options.tag));
        match self.options.mode.as_str() {
            "fail" => Err(DriverError::new("refused to start on purpose")),
            "panic" => panic!("panicked in start on purpose"),
            "hang" => {
                tokio::time::sleep(Duration::from_hours(1)).await;
                Ok(())
            }
            _ => Ok(()),
        }
    }
    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::SeqCst);
        EVENTS
            .lock()
            .unwrap()
            .push(format!("stop {}", self.options.tag));
        Ok(())
    }
    async fn health(&self) -> Health {
        if self.options.mode == "unhealthy" {
            Health::Unhealthy("down on purpose".into())
        } else {
            Health::Healthy
        }
    }
}

impl CacheProvider for Probe {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

sandloom_driverkit::register_driver!(cache, "reload-probe", Probe);

fn config(text: &str) -> InfraConfig {
    InfraConfig::from_toml_str(text, "infra.toml").unwrap()
}

fn probe(tag: &str, extra: &str) -> InfraConfig {
    config(&format!(
        "start_timeout_ms = 500\nstop_timeout_ms = 5000\n[cache.default]\ndriver = \"reload-probe\"\ntag = \"{tag}\"\n{extra}"
    ))
}

async fn start(config: InfraConfig) -> Running {
    Kernel::new(
        config,
        sandloom::link_drivers!(sandloom_embedded, sandloom_driver_redis),
    )
    .start()
    .await
    .unwrap()
}

async fn tag(running: &Running) -> String {
    let value = running.infra().cache().unwrap().get("k").await.unwrap();
    String::from_utf8(value.unwrap().to_vec()).unwrap()
}

fn memory(capacity: u64) -> InfraConfig {
    config(&format!(
        "[cache.default]\ndriver = \"memory\"\ncapacity = {capacity}\n"
    ))
}

fn redis() -> InfraConfig {
    config(&format!(
        "[cache.default]\ndriver = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\nprefix = \"{REDIS_PREFIX}\"\n"
    ))
}

/// Tasks hammer `get`/`set` through the accessor's `&dyn Cache` and through an `Arc` from
/// `capability_arc` while the instance is swapped between `cache.memory` options and between
/// `cache.memory` and `cache.redis`: not one operation fails, and each swap is seen (a key set
/// before a swap is gone after it: another instance answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn swapping_drivers_and_options_under_load_fails_no_operation() {
    let running = Arc::new(start(memory(1000)).await);
    let held = running.infra().capability_arc(&CACHE, "default").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let attempted = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for worker in 0..4 {
        let (running, held) = (Arc::clone(&running), Arc::clone(&held));
        let (stop, attempted, failed) = (
            Arc::clone(&stop),
            Arc::clone(&attempted),
            Arc::clone(&failed),
        );
        workers.push(tokio::spawn(async move {
            let mut n = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let key = format!("w{worker}-{}", n % 64);
                let outcome = if worker % 2 == 0 {
                    let cache = running.infra().cache().unwrap();
                    cache
                        .set(&key, Bytes::from("v"))
                        .await
                        .and(cache.get(&key).await.map(drop))
                } else {
                    held.set(&key, Bytes::from("v"))
                        .await
                        .and(held.get(&key).await.map(drop))
                };
                attempted.fetch_add(2, Ordering::Relaxed);
                if let Err(error) = outcome {
                    failed.lock().unwrap().push(error.to_string());
                }
                tokio::task::yield_now().await;
            }
        }));
    }

    let swaps = [memory(500), redis(), memory(2000), redis(), memory(1000)];
    for (index, new) in swaps.into_iter().enumerate() {
        let driver = new.instance("cache", "default").unwrap().driver.clone();
        held.set("marker", Bytes::from("before")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let report = running.reload(new).await.unwrap();
        let line = report.instance("cache", "default").unwrap();
        assert!(matches!(line.outcome, Outcome::Replaced { .. }), "{report}");
        assert_eq!(line.driver, driver);
        assert_eq!(line.version, 2 + index as u64);
        if driver == "redis" {
            // A fresh prefix per run is not needed: `marker` was set on the memory instance.
            let _ = held.delete("marker").await;
        } else {
            assert_eq!(
                held.get("marker").await.unwrap(),
                None,
                "the old instance still answers"
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.await.unwrap();
    }
    let failed = failed.lock().unwrap().clone();
    let attempted = attempted.load(Ordering::Relaxed);
    println!(
        "operations attempted: {attempted}, failed: {}",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {attempted} failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    assert!(attempted > 100, "the workers barely ran: {attempted}");
    assert_eq!(running.versions(), [("cache".into(), "default".into(), 6)]);
    drop(held);
    Arc::into_inner(running).unwrap().shutdown().await.unwrap();
}

/// An operation begun before the swap finishes on the old instance; every one begun after goes
/// to the new one; the old one is stopped only once the first has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_in_flight_finishes_on_the_old_instance() {
    let running = Arc::new(start(probe("inflight-old", "hold = true\n")).await);
    let cache = running.infra().capability_arc(&CACHE, "default").unwrap();
    let in_flight = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move { cache.get("k").await }
    });
    while HELD.load(Ordering::SeqCst) < 1 {
        tokio::task::yield_now().await;
    }
    let reload = tokio::spawn({
        let running = Arc::clone(&running);
        async move { running.reload(probe("inflight-new", "")).await }
    });
    // New operations reach the new instance while the old one still holds one. (Asking the
    // instance before the swap would hold that operation too: wait for the version instead.)
    let mut tries = 0;
    while running.versions()[0].2 != 2 {
        tries += 1;
        assert!(tries < 1000, "the route never switched");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(tag(&running).await, "inflight-new");
    assert_eq!(
        cache.get("k").await.unwrap().unwrap(),
        Bytes::from("inflight-new")
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !reload.is_finished(),
        "the reload did not wait for the operation in flight"
    );
    assert!(!events("inflight-old").contains(&"stop inflight-old".to_owned()));

    HOLD.add_permits(1);
    let answer = in_flight.await.unwrap().unwrap().unwrap();
    assert_eq!(answer, Bytes::from("inflight-old"), "it finished elsewhere");
    let report = reload.await.unwrap().unwrap();
    assert_eq!(report.left_in_flight, 0);
    assert_eq!(
        events("inflight-old"),
        ["start inflight-old", "stop inflight-old"]
    );
    drop(cache);
    Arc::into_inner(running).unwrap().shutdown().await.unwrap();
}

/// A new instance that fails to start, panics in start, hangs past the start timeout or answers
/// unhealthy: the reload is refused with SANDLOOM-B022 naming why, the new instance is stopped,
/// and the old one keeps serving, its version unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_instance_that_fails_leaves_the_old_one_serving() {
    for (mode, says) in [
        ("fail", &["refused to start on purpose"][..]),
        ("panic", &["panicked during start"]),
        // On a loaded machine the kernel may see the late poll as blocking: either is a hang.
        (
            "hang",
            &[
                "start did not finish within 500 ms",
                "past the 500 ms start timeout",
            ],
        ),
        ("unhealthy", &["down on purpose"]),
    ] {
        let old = format!("keep-{mode}");
        let running = start(probe(&old, "")).await;
        let new = format!("new-{mode}");
        // A panic's backtrace can take a while on a loaded machine: only `hang` gets a short
        // start timeout, the others one a late poll cannot overrun.
        let timeout = if mode == "hang" { 500 } else { 20_000 };
        let text = format!(
            "start_timeout_ms = {timeout}\n[cache.default]\ndriver = \"reload-probe\"\ntag = \"{new}\"\nmode = \"{mode}\"\n"
        );
        let err = running.reload(config(&text)).await.unwrap_err();
        assert_eq!(err.codes(), ["SANDLOOM-B022"], "{mode}: {err}");
        assert!(
            says.iter().any(|says| err.to_string().contains(says)),
            "{mode}: {err}"
        );
        assert!(
            err.to_string()
                .contains("Every instance keeps serving as before")
        );
        let line = err.report().instance("cache", "default").unwrap().clone();
        assert!(
            matches!(&line.outcome, Outcome::Refused { codes, .. } if codes == &["SANDLOOM-B022"]),
            "{line}"
        );
        assert_eq!((line.driver.as_str(), line.version), ("reload-probe", 1));
        assert_eq!(tag(&running).await, old, "{mode}");
        assert_eq!(running.versions()[0].2, 1);
        assert!(!running.last_reload().unwrap().applied);
        if mode != "panic" {
            assert_eq!(
                events(&new),
                [format!("start {new}"), format!("stop {new}")],
                "{mode}"
            );
        }
        running.shutdown().await.unwrap();
    }
}

/// A configuration with problems (an unknown capability, an unknown option) is refused with
/// every problem, coded and located, before anything is built: nothing starts, nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_with_problems_changes_nothing() {
    let running = start(probe("checked-old", "")).await;
    let bad = config(
        "[cach.default]\ndriver = \"memory\"\n[cache.default]\ndriver = \"reload-probe\"\ntag = \"checked-new\"\ncolour = \"red\"\n",
    );
    let err = running.reload(bad).await.unwrap_err();
    assert_eq!(err.codes(), ["SANDLOOM-B010", "SANDLOOM-B022"], "{err}");
    assert!(err.to_string().contains("infra.toml:1:"), "{err}");
    assert!(err.to_string().contains("colour"), "{err}");
    assert!(events("checked-new").is_empty(), "something was started");
    assert_eq!(tag(&running).await, "checked-old");
    running.shutdown().await.unwrap();
}

/// A linked module's requirement the new instance no longer meets refuses the reload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_instance_that_breaks_a_requirement_is_refused() {
    const SESSIONS: Requirement = Requirement::new(&CACHE, "default", &[cache::TTL], "billing");
    let running = Kernel::new(memory(100), sandloom::link_drivers!(sandloom_embedded))
        .require(&[SESSIONS])
        .start()
        .await
        .unwrap();
    let cache = running.infra().cache().unwrap();
    cache.set("kept", Bytes::from("yes")).await.unwrap();
    let err = running.reload(probe("no-ttl", "")).await.unwrap_err();
    assert_eq!(err.codes(), ["SANDLOOM-B022"], "{err}");
    assert!(
        err.to_string()
            .contains("module `billing` requires feature `ttl`"),
        "{err}"
    );
    assert!(events("no-ttl").is_empty());
    assert_eq!(cache.get("kept").await.unwrap(), Some(Bytes::from("yes")));
    running.shutdown().await.unwrap();
}

/// A removed instance is drained and stopped, and its handles answer `Stopped`; configured
/// again, it serves them again. An instance not configured at startup cannot be added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_instances_answer_stopped_and_new_ones_are_refused() {
    let both = "[cache.default]\ndriver = \"memory\"\n[cache.extra]\ndriver = \"memory\"\n";
    let running = start(config(both)).await;
    let extra = running.infra().capability_arc(&CACHE, "extra").unwrap();
    extra.set("k", Bytes::from("v")).await.unwrap();

    let report = running
        .reload(config("[cache.default]\ndriver = \"memory\"\n"))
        .await
        .unwrap();
    assert_eq!(
        report.instance("cache", "extra").unwrap().outcome,
        Outcome::Removed
    );
    assert_eq!(
        report.instance("cache", "default").unwrap().outcome,
        Outcome::Kept
    );
    assert_eq!(extra.get("k").await.unwrap_err().kind(), ErrorKind::Stopped);

    let report = running.reload(config(both)).await.unwrap();
    assert_eq!(
        report.instance("cache", "extra").unwrap().outcome,
        Outcome::Added
    );
    assert_eq!(
        extra.get("k").await.unwrap(),
        None,
        "a new instance serves it"
    );
    extra.set("k", Bytes::from("w")).await.unwrap();

    let more = format!("{both}[cache.more]\ndriver = \"memory\"\n");
    let err = running.reload(config(&more)).await.unwrap_err();
    assert_eq!(err.codes(), ["SANDLOOM-B010"], "{err}");
    assert!(
        err.to_string()
            .contains("a reload cannot add `[cache.more]`"),
        "{err}"
    );
    assert_eq!(extra.get("k").await.unwrap(), Some(Bytes::from("w")));
    drop(extra);
    running.shutdown().await.unwrap();
}
