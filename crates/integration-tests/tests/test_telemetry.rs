//! Telemetry through the kernel: every instance's operations are counted and timed under its
//! own names, and an instance with `telemetry = false` in `INFRA` records nothing. A metrics
//! recorder is global, so this binary installs one, before anything starts (as an application
//! does in `main`), and holds nothing else.

use std::collections::HashMap;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use sandloom::sdk::CACHE;
use sandloom::telemetry::{BOXED_METRIC, DURATION_METRIC, OPERATIONS_METRIC};
use sandloom::{InfraConfig, Kernel};

#[tokio::test]
async fn each_instance_is_measured_under_its_names_unless_its_telemetry_is_off() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");

    let config = InfraConfig::from_toml_str(
        "[cache.default]\ndriver = \"memory\"\n\
         [cache.quiet]\ndriver = \"memory\"\ntelemetry = false\n",
        "infra.toml",
    )
    .unwrap();
    let running = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .start()
        .await
        .unwrap();
    let loud = running.infra().cache().unwrap();
    let quiet = running.infra().capability(&CACHE, "quiet").unwrap();
    loud.set("k", "v".into()).await.unwrap();
    loud.get("k").await.unwrap();
    loud.get("").await.unwrap_err(); // an empty key: invalid input
    quiet.get("k").await.unwrap();
    quiet.set("k", "v".into()).await.unwrap();
    running.shutdown().await.unwrap();

    let mut counts: HashMap<(String, String, String), u64> = HashMap::new();
    let mut histograms = 0;
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let labels: HashMap<&str, &str> = key
            .key()
            .labels()
            .map(|label| (label.key(), label.value()))
            .collect();
        assert_eq!(labels["capability"], "cache");
        assert_eq!(labels["driver"], "memory");
        assert_ne!(
            labels["instance"], "quiet",
            "telemetry = false recorded {key:?}"
        );
        // A future too large for its buffer is counted apart (`cache.memory` on moka's
        // `future::Cache`), with no outcome: `test_gate_allocations.rs` holds that series.
        if key.key().name() == BOXED_METRIC {
            continue;
        }
        let id = (
            labels["instance"].to_owned(),
            labels["operation"].to_owned(),
            labels["outcome"].to_owned(),
        );
        match value {
            DebugValue::Counter(n) if key.key().name() == OPERATIONS_METRIC => {
                counts.insert(id, n);
            }
            DebugValue::Histogram(samples) if key.key().name() == DURATION_METRIC => {
                assert!(samples.iter().all(|s| s.into_inner() >= 0.0));
                histograms += 1;
            }
            other => panic!("unexpected series {key:?}: {other:?}"),
        }
    }
    let count = |op: &str, outcome: &str| {
        counts
            .get(&("default".to_owned(), op.to_owned(), outcome.to_owned()))
            .copied()
    };
    assert_eq!(count("set", "ok"), Some(1), "{counts:?}");
    assert_eq!(count("get", "ok"), Some(1), "{counts:?}");
    assert_eq!(count("get", "invalid_input"), Some(1), "{counts:?}");
    assert_eq!(counts.len(), 3, "{counts:?}");
    assert_eq!(histograms, 3);
}
