//! Allocations counted by a global allocator: of `Kernel::check()` with 11 linked driver entries
//! (`sandloom-embedded`'s 10, no synthetic, and the no-op cache of the accessor benchmarks; compare
//! with `allocations_10000`), and per accessor call, of the accessor alone (goal: none) and of the
//! accessor with a no-op `get` against the same `get` on a held `Arc<dyn Cache>`.
//! See `benches/allocations/mod.rs` and `BENCHMARKS.md`.

mod allocations;
mod noop;
mod support;

use std::alloc::System;
use std::hint::black_box;

use sandloom::sdk::CACHE;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

use support::ready;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const CALLS: usize = 1000;

/// Allocations per call of `op`, over [`CALLS`] calls.
fn per_call(op: impl Fn()) -> f64 {
    op(); // warm
    let (allocations, _, ()) = allocations::count(GLOBAL, || {
        for _ in 0..CALLS {
            op();
        }
    });
    #[allow(clippy::cast_precision_loss)] // small counts
    let per_call = allocations as f64 / CALLS as f64;
    per_call
}

fn main() {
    allocations::check(
        GLOBAL,
        sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_10),
    );

    let started = noop::start();
    let infra = started.infra();
    let held = started.held();
    let pre_telemetry = started.pre_telemetry();
    let direct = started.direct();
    let old = noop::old::OldInfra::new();
    let rows = [
        (
            "old_boxed cache().get",
            per_call(|| {
                black_box(ready(black_box(&old).cache().unwrap().get("key")).unwrap());
            }),
        ),
        (
            "direct_cache().get",
            per_call(|| {
                black_box(ready(black_box(&direct).cache().unwrap().get("key")).unwrap());
            }),
        ),
        (
            "pre_telemetry_gate.get",
            per_call(|| {
                black_box(ready(black_box(&pre_telemetry).get("key")).unwrap());
            }),
        ),
        (
            "cache()",
            per_call(|| {
                black_box(black_box(infra).cache().unwrap());
            }),
        ),
        (
            "capability(named)",
            per_call(|| {
                black_box(
                    black_box(infra)
                        .capability(&CACHE, black_box("named"))
                        .unwrap(),
                );
            }),
        ),
        (
            "held_arc.get",
            per_call(|| {
                black_box(ready(black_box(&held).get("key")).unwrap());
            }),
        ),
        (
            "cache().get",
            per_call(|| {
                black_box(ready(black_box(infra).cache().unwrap().get("key")).unwrap());
            }),
        ),
        (
            "capability(named).get",
            per_call(|| {
                let cache = black_box(infra)
                    .capability(&CACHE, black_box("named"))
                    .unwrap();
                black_box(ready(cache.get("key")).unwrap());
            }),
        ),
    ];
    for (name, per_call) in rows {
        println!("allocations: {name}: {per_call} per call");
    }
    let of = |name: &str| {
        rows.iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, a)| a)
            .unwrap()
    };
    for accessor in ["cache()", "capability(named)"] {
        assert!(of(accessor) == 0.0, "the accessor {accessor} allocates");
    }
    // The copy of the path before issue 27 boxes two futures per call: the route's and the
    // driver's (`async_trait`). Measured here so that the comparison is in one binary.
    assert!(
        (of("old_boxed cache().get") - 2.0).abs() < f64::EPSILON,
        "the copy of the old path no longer allocates twice per call"
    );
    // Issue 27: no allocation per operation through the gate, the route, a held `Arc` or a
    // copy of the gate (no subscriber or recorder is installed: telemetry boxes only then).
    for call in [
        "cache().get",
        "capability(named).get",
        "held_arc.get",
        "direct_cache().get",
        "pre_telemetry_gate.get",
    ] {
        assert!(of(call) == 0.0, "{call} allocates");
    }
    drop(held);
    started.shutdown();
}
