//! Accessors: obtaining a cache through `Infra` and calling a no-op `get`, for the default
//! instance (`infra.cache()`) and a named one (`infra.capability(&CACHE, "named")`), against
//! the same call on an already-held `Arc<dyn Cache>`; on one thread, and on two threads sharing
//! the same `Infra`. Futures are polled once without an executor (they are ready at once).
//! See `BENCHMARKS.md`.

mod noop;
mod support;

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::Criterion;
use sandloom::sdk::{CACHE, Cache, Infra};

use support::ready;

/// Run `op` `iters` times on each of `threads` threads released together; the slowest
/// thread's time, so criterion reports the time of one call on one thread.
fn on_threads(threads: usize, iters: u64, op: &(dyn Fn() + Sync)) -> Duration {
    let barrier = Barrier::new(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        op();
                    }
                    start.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no panic"))
            .max()
            .expect("at least one thread")
    })
}

fn main() {
    let started = noop::start();
    let infra: &Infra = started.infra();
    let held: std::sync::Arc<dyn Cache> = started.held();
    let held = &held;
    // Each one is the complete operation a module performs, measured the same way.
    let operations: [(&str, &(dyn Fn() + Sync)); 6] = [
        // What the harness itself costs per call (a loop and an indirect call).
        ("harness", &|| {}),
        ("held_arc.get", &|| {
            black_box(ready(black_box(held).get(black_box("key"))).unwrap());
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
