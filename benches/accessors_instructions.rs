//! The accessors' instruction counts, for callgrind: one operation of `accessors.rs` run `N`
//! times on one thread, with nothing else measured (criterion's clock, a vDSO call, does not
//! run under valgrind). The count per operation is the difference between two runs divided by
//! the difference of their `N`, which leaves out startup and shutdown:
//!
//! ```text
//! cargo bench -p sandloom-benches --bench accessors_instructions --no-run
//! valgrind --tool=callgrind target/release/deps/accessors_instructions-* 'cache().get' 100000
//! valgrind --tool=callgrind target/release/deps/accessors_instructions-* 'cache().get' 200000
//! ```
//!
//! Instructions are not time, but they do not depend on what else the machine runs; see
//! `BENCHMARKS.md`.

mod noop;
mod support;

use std::hint::black_box;
use std::sync::Arc;

use sandloom::sdk::{CACHE, Cache, Infra};

use support::ready;

fn main() {
    // `cargo bench` passes `--bench`: only the other arguments are ours.
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    // Without arguments (`cargo test --benches` runs it so, so that it does not rot): each
    // operation a few times is enough to prove it runs.
    let (operation, default_times) = match args.next() {
        Some(operation) => (operation, 100_000),
        None => ("cache().get".to_owned(), 100),
    };
    let times: u64 = args
        .next()
        .map_or(default_times, |n| n.parse().expect("a count"));
    let started = noop::start();
    let infra: &Infra = started.infra();
    let held: Arc<dyn Cache> = started.held();
    let direct = started.direct();
    let old = noop::old::OldInfra::new();
    if operation == "sizes" {
        // What each `get` returns: the old path's boxed future (a pointer pair), the new
        // path's `OpFuture` (the buffer and two function pointers).
        let pre_telemetry = started.pre_telemetry();
        let sizes = [
            (
                "old_boxed cache().get",
                size_of_val(&old.cache().unwrap().get("key")),
            ),
            (
                "pre_telemetry_gate.get",
                size_of_val(&pre_telemetry.get("key")),
            ),
            (
                "direct_cache().get",
                size_of_val(&direct.cache().unwrap().get("key")),
            ),
            (
                "cache().get",
                size_of_val(&infra.cache().unwrap().get("key")),
            ),
        ];
        for (name, size) in sizes {
            println!("{name}: {size} bytes");
        }
        drop(held);
        started.shutdown();
        return;
    }
    let op: &dyn Fn() = match operation.as_str() {
        "cache().get" => &|| {
            let cache = black_box(infra).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        },
        "capability(named).get" => &|| {
            let cache = black_box(infra)
                .capability(&CACHE, black_box("named"))
                .unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        },
        "old_boxed cache().get" => &|| {
            let cache = black_box(&old).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        },
        "direct_cache().get" => &|| {
            let cache = black_box(&direct).cache().unwrap();
            black_box(ready(cache.get(black_box("key"))).unwrap());
        },
        "held_arc.get" => &|| {
            black_box(ready(black_box(&held).get(black_box("key"))).unwrap());
        },
        other => panic!("unknown operation `{other}`"),
    };
    for _ in 0..times {
        op();
    }
    drop(held);
    started.shutdown();
}
