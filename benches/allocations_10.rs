//! Allocations counted by a global allocator: of `Kernel::check()` with 11 linked driver entries
//! (`sandloom-embedded`'s 10, no synthetic, and the no-op cache of the accessor benchmarks; compare
//! with `allocations_10000`), and per accessor call, of the accessor alone (goal: none) and of the
//! accessor with a no-op `get` against the same `get` on a held `Arc<dyn Cache>`; and of one
//! `start` + `shutdown` of the four embedded defaults against the same drivers started and
//! stopped by hand (issue 27, item 5).
//! See `benches/allocations/mod.rs` and `BENCHMARKS.md`.

mod allocations;
mod noop;
mod resolution;
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

/// The most allocations one `start` + `shutdown` of the four embedded defaults may make more
/// than the same four drivers constructed, started, put in an `Infra` and stopped by hand
/// (`by_hand_start+stop`). Issue 27 measured 115 more (145 against 30, callgrind); sharing the
/// names, making the report and the health checks when asked, and boxing each `start` and `stop`
/// once brought it to 58 more here (89 against 31; `BENCHMARKS.md`), and the third round
/// (driverkit's twelve per start: the gate as its own lifecycle, the shared instance name, the
/// features moved; the resolution's index) to 43 to 45 more (74 to 76 against 31, as the start
/// of `objectstore.fs` waits or not). Options deserialized in place rather than from a copy of
/// their table made it 39 more (70 against 31); each driver's `start` and `stop` future held
/// inline rather than boxed (8) and the `Infra` sharing the instance names (4), 27 more (58
/// against 31); the report sharing the configuration's origin, one fewer: 26 more (57
/// against 31). The budget leaves a few for the allocator's and tokio's own variations, and
/// refuses any one of the larger cuts undone (the names alone were 28, driverkit's 12, the
/// lifecycle boxes 8).
const START_EXTRA_BUDGET: usize = 32;

/// Count the allocations of `start` + `shutdown` and of the by-hand path, print both, and refuse
/// a kernel over [`START_EXTRA_BUDGET`] more than by hand.
fn start_shutdown(linked: sandloom::LinkedDrivers) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path().join("objects");
    let config = sandloom::InfraConfig::from_toml_str(&support::embedded_defaults(&root), "bench")
        .expect("valid INFRA");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let start_shutdown = |kernel: sandloom::Kernel| {
        runtime.block_on(async {
            let running = kernel.start().await.expect("starts");
            running.shutdown().await.expect("stops");
        });
    };
    // Warm (the runtime's own first allocations, lazy statics), then counted. The kernel and its
    // configuration are made beforehand, as criterion's `iter_batched` does.
    start_shutdown(sandloom::Kernel::new(config.clone(), linked));
    runtime.block_on(resolution::by_hand(&root));
    let kernel = sandloom::Kernel::new(config, linked);
    let (kernel_allocations, _, ()) = allocations::count(GLOBAL, || start_shutdown(kernel));
    let (by_hand, _, ()) =
        allocations::count(GLOBAL, || runtime.block_on(resolution::by_hand(&root)));
    println!(
        "allocations: start+shutdown of the 4 embedded defaults: {kernel_allocations}; by_hand_start+stop: {by_hand}"
    );
    assert!(
        kernel_allocations <= by_hand + START_EXTRA_BUDGET,
        "start+shutdown made {kernel_allocations} allocations, by hand {by_hand} (budget: {START_EXTRA_BUDGET} more): \
         does startup copy names or build its report and health checks up front again?"
    );
}

fn main() {
    let linked = sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_10);
    allocations::check(GLOBAL, linked);
    start_shutdown(linked);

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
