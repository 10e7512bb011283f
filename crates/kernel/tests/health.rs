//! Health and readiness: each check bounded by `health_timeout_ms` (a hanging one is unhealthy,
//! naming the timeout; a blocking one too, on either runtime flavor), the readiness of every
//! combination, and periodic probing (`health_interval_ms`) keeping the last result, logging
//! each change of state (asserted with a capturing subscriber) and ending at shutdown.
//!
//! The driver's health is scripted by a table its instances read at each check. The entry is
//! made by hand, as driverkit's `register_driver!` would make it.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, DRIVERS, DriverEntry, ParsedOptions,
};
use sandloom_kernel::{Health, HealthReport, InfraConfig, Kernel, Readiness, Running};
use support::HealthOnly;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    id: String,
}

/// What each instance's next check does, by id: `healthy`, `degraded`, `unhealthy`, `hang`,
/// `panic`, `block:<ms>` (blocks its thread once, then answers healthy).
static SCRIPT: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
/// How many checks each instance has answered or begun, by id.
static CALLS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn set(id: &str, behaviour: &str) {
    SCRIPT
        .lock()
        .unwrap()
        .insert(id.to_owned(), behaviour.to_owned());
}

fn calls(id: &str) -> usize {
    CALLS.lock().unwrap().get(id).copied().unwrap_or(0)
}

/// The check of instance `id`, as its script says.
fn check(id: &str) -> BoxFuture<'_, Health> {
    Box::pin(async move {
        *CALLS.lock().unwrap().entry(id.to_owned()).or_default() += 1;
        let behaviour = SCRIPT
            .lock()
            .unwrap()
            .get(id)
            .cloned()
            .unwrap_or_else(|| "healthy".to_owned());
        match behaviour.as_str() {
            "healthy" => Health::Healthy,
            "degraded" => Health::Degraded("replica lagging".to_owned()),
            "unhealthy" => Health::Unhealthy("connection refused".to_owned()),
            "hang" => std::future::pending().await,
            "panic" => panic!("the check fell over"),
            block => {
                let ms: u64 = block
                    .strip_prefix("block:")
                    .and_then(|ms| ms.parse().ok())
                    .unwrap_or_else(|| panic!("unknown behaviour {block}"));
                set(id, "healthy");
                std::thread::sleep(Duration::from_millis(ms)); // the bug: blocking
                Health::Healthy
            }
        }
    })
}

fn build(parsed: ParsedOptions, _: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
    support::build_with(parsed, |options: Options| HealthOnly {
        id: options.id,
        check,
    })
}

#[distributed_slice(DRIVERS)]
#[linkme(crate = sandloom_kernel::__private::linkme)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static SCRIPTED: DriverEntry = support::cache_entry::<Options>("checked", "checked-driver", build);

/// Start `cache.<id>` instances of the scripted driver, with `top` keys at the top of INFRA
/// and `extra` keys (by id) in their tables.
async fn start(top: &str, instances: &[(&str, &str)]) -> Running {
    let mut text = format!("{top}\n");
    for (id, extra) in instances {
        let _ = writeln!(
            text,
            "[cache.{id}]\ndriver = \"checked\"\nid = \"{id}\"\n{extra}"
        );
    }
    let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    Kernel::new(config, sandloom_kernel::link_drivers!())
        .start()
        .await
        .unwrap_or_else(|err| panic!("{err}"))
}

fn health_of<'a>(report: &'a HealthReport, id: &str) -> &'a Health {
    &report
        .instances
        .iter()
        .find(|i| i.instance == id)
        .unwrap_or_else(|| panic!("no {id} in {report}"))
        .health
}

#[tokio::test]
async fn a_hanging_check_is_unhealthy_naming_its_timeout_and_the_others_are_still_checked() {
    set("hang-slow", "hang");
    set("hang-fine", "healthy");
    let running = start(
        "health_timeout_ms = 100",
        &[("hang-slow", "health_timeout_ms = 150"), ("hang-fine", "")],
    )
    .await;
    let report = running.readiness().await;
    assert_eq!(report.readiness, Readiness::NotReady);
    assert_eq!(
        health_of(&report, "hang-slow"),
        &Health::Unhealthy(
            "health check did not answer within 150 ms (`health_timeout_ms`)".to_owned()
        )
    );
    assert_eq!(health_of(&report, "hang-fine"), &Health::Healthy);
    // Start order (by instance name here), and the text a probe shows.
    assert_eq!(
        report.to_string(),
        "not_ready: 1 of 2 instances unhealthy\n  \
         cache.hang-fine (checked): healthy\n  \
         cache.hang-slow (checked): unhealthy: health check did not answer within 150 ms (`health_timeout_ms`)\n"
    );
    // `health()` answers the same, as a list.
    let listed = running.health().await;
    assert_eq!(listed[1].0, "cache.hang-slow");
    assert!(matches!(&listed[1].1, Health::Unhealthy(why) if why.contains("150 ms")));
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_check_that_panics_is_unhealthy() {
    set("panics", "panic");
    let running = start("", &[("panics", "")]).await;
    let report = running.readiness().await;
    assert_eq!(
        health_of(&report, "panics"),
        &Health::Unhealthy("health check panicked: the check fell over".to_owned())
    );
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_check_is_cut_off_on_time_and_not_called_again_while_it_blocks() {
    set("blocks-mt", "block:1500");
    let running = start("health_timeout_ms = 100", &[("blocks-mt", "")]).await;
    let first = running.readiness().await;
    assert_eq!(
        health_of(&first, "blocks-mt"),
        &Health::Unhealthy(
            "health check did not answer within 100 ms (`health_timeout_ms`)".to_owned()
        )
    );
    // Still blocked: answered at once, without calling `health` again.
    let second = running.readiness().await;
    assert!(
        matches!(health_of(&second, "blocks-mt"), Health::Unhealthy(why) if why.contains("still holds its thread")),
        "{second}"
    );
    assert_eq!(calls("blocks-mt"), 1);
    // Once the blocked check has returned, checks run again (and this one answers healthy).
    let mut report = second;
    for _ in 0..200 {
        if report.readiness == Readiness::Ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        report = running.readiness().await;
    }
    assert_eq!(report.readiness, Readiness::Ready, "{report}");
    assert_eq!(calls("blocks-mt"), 2);
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_check_on_a_single_thread_counts_as_unhealthy_for_overrunning() {
    set("blocks-st", "block:400");
    let running = start("health_timeout_ms = 100", &[("blocks-st", "")]).await;
    let report = running.readiness().await;
    assert!(
        matches!(
            health_of(&report, "blocks-st"),
            Health::Unhealthy(why) if why.starts_with("health check took ")
                && why.ends_with("ms, over the 100 ms `health_timeout_ms`: it held its thread, so the timeout could not cut it off")
        ),
        "{report}"
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn readiness_through_a_running_kernel_for_each_combination() {
    let running = start("", &[("combo-a", ""), ("combo-b", ""), ("combo-c", "")]).await;
    for (states, expected) in [
        (["healthy", "healthy", "healthy"], Readiness::Ready),
        (["healthy", "degraded", "healthy"], Readiness::Degraded),
        (["degraded", "degraded", "degraded"], Readiness::Degraded),
        (["healthy", "healthy", "unhealthy"], Readiness::NotReady),
        (["degraded", "unhealthy", "healthy"], Readiness::NotReady),
        (["unhealthy", "unhealthy", "unhealthy"], Readiness::NotReady),
        (["healthy", "hang", "degraded"], Readiness::NotReady),
    ] {
        for (id, state) in ["combo-a", "combo-b", "combo-c"].into_iter().zip(states) {
            set(id, state);
        }
        let report = running.readiness().await;
        assert_eq!(report.readiness, expected, "{states:?}:\n{report}");
        assert_eq!(report.readiness.is_ready(), expected != Readiness::NotReady);
        assert_eq!(running.last_health().as_ref(), Some(&report));
    }
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_probing_there_is_no_last_result_until_a_check() {
    let running = start("", &[("no-probe", "")]).await;
    assert_eq!(running.last_health(), None);
    let report = running.readiness().await;
    assert_eq!(running.last_health(), Some(report));
    running.shutdown().await.unwrap();
}

/// A subscriber keeping `sandloom` events as `LEVEL field=value …` lines.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() != "sandloom" {
            return;
        }
        let mut fields = Fields(event.metadata().level().to_string());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

impl Capture {
    fn lines(&self, containing: &str) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|line| line.contains(containing))
            .cloned()
            .collect()
    }
}

/// Wait (up to a generous bound, so a broken prober fails instead of hanging) until the last
/// probe shows `id` in `state`.
async fn probed(running: &Running, id: &str, state: fn(&Health) -> bool) -> HealthReport {
    for _ in 0..1000 {
        if let Some(report) = running.last_health()
            && state(health_of(&report, id))
        {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the prober never showed the expected state of {id}: {:?}",
        running.last_health()
    )
}

// Single-threaded: the prober runs on this thread, under this thread's subscriber.
#[tokio::test(flavor = "current_thread")]
async fn periodic_probing_keeps_the_last_result_logs_each_change_once_and_stops_at_shutdown() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    set("probed-a", "healthy");
    set("probed-b", "healthy");
    let running = start(
        "health_interval_ms = 10",
        &[("probed-a", ""), ("probed-b", "")],
    )
    .await;

    let report = probed(&running, "probed-a", Health::is_healthy).await;
    assert_eq!(report.readiness, Readiness::Ready);
    set("probed-a", "degraded");
    let report = probed(&running, "probed-a", |h| matches!(h, Health::Degraded(_))).await;
    assert_eq!(report.readiness, Readiness::Degraded);
    set("probed-a", "unhealthy");
    let report = probed(&running, "probed-a", |h| matches!(h, Health::Unhealthy(_))).await;
    assert_eq!(report.readiness, Readiness::NotReady);
    // Many probes of the same state log nothing more.
    let before = calls("probed-a");
    while calls("probed-a") < before + 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    set("probed-a", "healthy");
    probed(&running, "probed-a", Health::is_healthy).await;

    assert_eq!(
        capture.lines("health changed capability=cache instance=probed-a"),
        [
            "INFO message=health changed capability=cache instance=probed-a driver=checked from=unknown to=healthy",
            "WARN message=health changed capability=cache instance=probed-a driver=checked from=healthy to=degraded reason=replica lagging",
            "ERROR message=health changed capability=cache instance=probed-a driver=checked from=degraded to=unhealthy reason=connection refused",
            "INFO message=health changed capability=cache instance=probed-a driver=checked from=unhealthy to=healthy",
        ]
    );
    // `probed-b` never changed after its first probe.
    assert_eq!(
        capture.lines("health changed capability=cache instance=probed-b"),
        [
            "INFO message=health changed capability=cache instance=probed-b driver=checked from=unknown to=healthy"
        ]
    );
    assert_eq!(
        capture.lines("readiness changed"),
        [
            "INFO message=readiness changed from=unknown to=ready",
            "INFO message=readiness changed from=ready to=degraded",
            "INFO message=readiness changed from=degraded to=not_ready",
            "INFO message=readiness changed from=not_ready to=ready",
        ]
    );

    running.shutdown().await.unwrap();
    let after = calls("probed-a");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(calls("probed-a"), after, "the prober outlived shutdown");
}
