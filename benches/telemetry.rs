//! What telemetry costs when it is listened to: a tracing subscriber that formats every
//! operation's span (to nowhere) and the Prometheus recorder are installed before the kernel
//! starts, and a no-op `get` is measured through the gate (telemetry on), through an instance
//! with `telemetry = false`, and through a copy of the gate before telemetry and drain (the
//! baseline), each by the thread's CPU time as in `accessors`. Without a subscriber and a
//! recorder the gate is measured in `accessors`.
//! See `BENCHMARKS.md`.

mod noop;
mod support;

use std::hint::black_box;

use criterion::Criterion;
use metrics_exporter_prometheus::PrometheusBuilder;
use sandloom::sdk::CACHE;
use tracing_subscriber::fmt::format::FmtSpan;

use support::{on_threads, ready};

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("sandloom=debug"))
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(std::io::sink)
        .init();
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this benchmark");

    let started = noop::start();
    let infra = started.infra();
    let held = started.held();
    let quiet = infra
        .capability_arc(&CACHE, "quiet")
        .expect("cache.quiet is configured");
    let pre_telemetry = started.pre_telemetry();

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("telemetry_listened");
    group.bench_function("pre_telemetry_gate.get", |b| {
        let op = || {
            black_box(ready(black_box(&pre_telemetry).get(black_box("key"))).unwrap());
        };
        b.iter_custom(|iters| on_threads(1, iters, &op));
    });
    group.bench_function("held_arc.get", |b| {
        let op = || {
            black_box(ready(black_box(&held).get(black_box("key"))).unwrap());
        };
        b.iter_custom(|iters| on_threads(1, iters, &op));
    });
    group.bench_function("telemetry_off.get", |b| {
        let op = || {
            black_box(ready(black_box(&quiet).get(black_box("key"))).unwrap());
        };
        b.iter_custom(|iters| on_threads(1, iters, &op));
    });
    group.finish();
    criterion.final_summary();

    // The series exist: the recorder saw every measured call.
    assert!(prometheus.render().contains("sandloom_operations{"));
    drop((held, quiet, pre_telemetry));
    started.shutdown();
}
