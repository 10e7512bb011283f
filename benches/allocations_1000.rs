//! Allocations of `Kernel::check()` with 1,000 linked driver entries (`sandloom-embedded`'s 10
//! and 990 synthetic), counted by a global allocator; compare with `allocations_10`.
//! See `benches/allocations/mod.rs` and `BENCHMARKS.md`.

mod allocations;
mod support;

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    allocations::check(
        GLOBAL,
        sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_1000),
    );
}
