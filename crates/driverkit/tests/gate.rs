//! The gate every driver is served behind: two metric series per operation, by instance, driver,
//! operation and outcome, and none when telemetry is off; `Stopped` once draining, with
//! operations in flight counted until they finish. Its spans are in `gate_spans.rs`: tracing's
//! callsite interest is process-wide, so a test that runs operations without a subscriber must
//! not share a binary with one that captures them.

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use sandloom_driverkit::__private::Gate as _;
use sandloom_driverkit::cache::Cache as _;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};
use support::gate::{block_on, gate};

#[test]
fn operations_are_counted_and_timed_by_instance_driver_operation_and_outcome() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        // Built while the recorder is installed, as the kernel builds instances after `main`
        // installs one.
        let cache = gate(true);
        let quiet = gate(false);
        block_on(async {
            for _ in 0..3 {
                cache.get("k").await.unwrap();
            }
            let _ = cache.get("bad").await;
            quiet.get("k").await.unwrap();
        });
    });
    let mut counts = HashMap::new();
    let mut timed = HashMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let labels: Vec<(String, String)> = key
            .key()
            .labels()
            .map(|l| (l.key().to_owned(), l.value().to_owned()))
            .collect();
        let outcome = labels
            .iter()
            .find(|(k, _)| k == "outcome")
            .map(|(_, v)| v.clone())
            .unwrap();
        assert!(
            labels.contains(&("instance".into(), "sessions".into())),
            "{labels:?}"
        );
        assert!(
            labels.contains(&("driver".into(), "tiny".into())),
            "{labels:?}"
        );
        assert!(
            labels.contains(&("operation".into(), "get".into())),
            "{labels:?}"
        );
        assert!(
            labels.contains(&("capability".into(), "cache".into())),
            "{labels:?}"
        );
        match (key.key().name(), value) {
            ("sandloom.operations", DebugValue::Counter(n)) => {
                counts.insert(outcome, n);
            }
            ("sandloom.operation.duration", DebugValue::Histogram(samples)) => {
                timed.insert(outcome, samples.len());
            }
            other => panic!("unexpected series {other:?}"),
        }
    }
    // The instance with telemetry off recorded nothing: 3 ok and 1 invalid input are all there is.
    assert_eq!(counts.get("ok"), Some(&3), "{counts:?}");
    assert_eq!(counts.get("invalid_input"), Some(&1), "{counts:?}");
    assert_eq!(timed.get("ok"), Some(&3), "{timed:?}");
    assert_eq!(counts.len(), 2, "{counts:?}");
}

#[test]
fn once_draining_new_operations_answer_stopped_and_those_in_flight_finish() {
    let cache = Arc::new(gate(true));
    block_on(async {
        let (release, wait) = tokio::sync::oneshot::channel::<()>();
        // An operation in flight: the gate counted it in before the drain began.
        let slow = {
            let cache = Arc::clone(&cache);
            async move {
                let _in_flight = cache.state().enter()?;
                let _ = wait.await;
                Ok::<_, InfraError>(7)
            }
        };
        let slow = tokio::spawn(slow);
        while cache.state().in_flight() == 0 {
            tokio::task::yield_now().await;
        }
        cache.state().begin_drain();
        let refused = cache.get("k").await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Stopped, "{refused}");
        assert_eq!(cache.state().in_flight(), 1);
        release.send(()).unwrap();
        assert_eq!(slow.await.unwrap().unwrap(), 7);
        assert_eq!(cache.state().in_flight(), 0);
    });
}
