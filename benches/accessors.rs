//! Accessors: obtaining a cache through `Infra` and calling a no-op `get`, for the default
//! instance (`infra.cache()`) and a named one (`infra.capability(&CACHE, "named")`), against
//! the same call on an already-held `Arc<dyn Cache>`, and against a copy of the path before
//! routes (`direct_cache().get`: the gate itself behind a field read; issue 26), and a copy of
//! the boxed path before issue 27 (`old_boxed cache().get`: `async_trait` on the route and the
//! driver, two allocations per call; `noop/old.rs`); on one thread,
//! and on two threads sharing the same `Infra`. Futures are polled once without an executor (they are ready at once).
//! See `BENCHMARKS.md`.
//!
//! Each thread's time is its own CPU time, not the wall clock: on a machine with as many cores
//! as benchmark threads, any other process running takes a core from one of them, and the wall
//! time would measure that. CPU time leaves it out but keeps what sharing costs, since a thread
//! stalled on a cache line another core wrote is still running. Two control rows show that it
//! does: `held_arc.clone().get` writes the shared reference count on every call, and
//! `mutex.lock().get` takes a shared lock; both must come out slower per call on two threads.

mod noop;
mod support;

use std::hint::black_box;
use std::sync::{Arc, Mutex};

use criterion::Criterion;
use sandloom::sdk::{CACHE, Cache, Infra};

use support::{on_threads, ready};

fn main() {
    let started = noop::start();
    let infra: &Infra = started.infra();
    let held: Arc<dyn Cache> = started.held();
    let held = &held;
    let pre_telemetry: Arc<dyn Cache> = started.pre_telemetry();
    let pre_telemetry = &pre_telemetry;
    let direct = started.direct();
    let direct = &direct;
    let old = noop::old::OldInfra::new();
    let old = &old;
    let lock = Mutex::new(());
    let lock = &lock;
    // Each one is the complete operation a module performs, measured the same way.
    let operations: [(&str, &(dyn Fn() + Sync)); 12] = [
        // What the harness itself costs per call (a loop and an indirect call).
        ("harness", &|| {}),
        ("held_arc.get", &|| {
            black_box(ready(black_box(held).get(black_box("key"))).unwrap());
        }),
        // The same call through a copy of the gate before telemetry and drain: the baseline of
        // the gate's cost (no subscriber and no recorder are installed in this binary).
        ("pre_telemetry_gate.get", &|| {
            black_box(ready(black_box(pre_telemetry).get(black_box("key"))).unwrap());
        }),
        // Controls: a shared reference-count write, and a shared lock, per call.
        ("held_arc.clone().get", &|| {
            let cache = Arc::clone(black_box(held));
            black_box(ready(cache.get(black_box("key"))).unwrap());
        }),
        ("mutex.lock().get", &|| {
            let _guard = black_box(lock).lock().unwrap();
            black_box(ready(black_box(held).get(black_box("key"))).unwrap());
        }),
        // The path before routes (issue 26): the gate itself behind a field-read accessor.
        ("direct_cache().get", &|| {
            let cache = black_box(direct).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        }),
        ("direct_cache()", &|| {
            black_box(black_box(direct).cache().unwrap());
        }),
        // The path before issue 27 (a copy): the route's future and the driver's, each boxed
        // by `async_trait`.
        ("old_boxed cache().get", &|| {
            let cache = black_box(old).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        }),
        ("cache().get", &|| {
            let cache = black_box(infra).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        }),
        ("capability(named).get", &|| {
            let cache = black_box(infra)
                .capability(&CACHE, black_box("named"))
                .unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        }),
        ("cache()", &|| {
            black_box(black_box(infra).cache().unwrap());
        }),
        ("capability(named)", &|| {
            black_box(
                black_box(infra)
                    .capability(&CACHE, black_box("named"))
                    .unwrap(),
            );
        }),
    ];

    let mut criterion = Criterion::default().configure_from_args();
    for threads in [1, 2] {
        let mut group = criterion.benchmark_group(format!("accessors/threads={threads}"));
        for (name, op) in operations {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| on_threads(threads, iters, op));
            });
        }
        group.finish();
    }
    criterion.final_summary();
    started.shutdown();
}
