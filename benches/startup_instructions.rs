//! Startup's instruction counts, for callgrind: `start+shutdown` or `by_hand_start+stop` of
//! `resolution_100` (the same 100 linked entries, the same `INFRA`) run `N` times on one
//! current-thread runtime. The count per run is the difference between two runs divided by the
//! difference of their `N`, which leaves out the process's own startup:
//!
//! ```text
//! cargo bench -p sandloom-benches --bench startup_instructions --no-run
//! B=$(ls target/release/deps/startup_instructions-* | grep -v '\.d$')
//! for op in start+shutdown by_hand_start+stop; do for n in 200 400; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$op.$n $B $op $n; done; done
//! ```
//!
//! Instructions are not time (a system call counts as one), but they do not depend on what
//! else the machine runs; see `BENCHMARKS.md`.

mod resolution;
mod support;

fn main() {
    // `cargo bench` passes `--bench`: only the other arguments are ours.
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    // Without arguments (`cargo test --benches` runs it so, so that it does not rot): both
    // operations a few times.
    let Some(operation) = args.next() else {
        for operation in ["start+shutdown", "by_hand_start+stop"] {
            resolution::instructions(linked(), operation, 3);
        }
        return;
    };
    let times: u64 = args.next().map_or(1_000, |n| n.parse().expect("a count"));
    resolution::instructions(linked(), &operation, times);
}

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_100)
}
