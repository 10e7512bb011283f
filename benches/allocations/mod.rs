//! Allocation counts, shared by `allocations_10` and `allocations_10000`: each binary installs a
//! counting global allocator (`stats_alloc`) and links its own driver entries, so the count of
//! `Kernel::check()` at both sizes tells what one unselected entry costs. The counting
//! allocator lives only in these binaries, so that it slows none of the timed benchmarks.

use std::alloc::System;

use sandloom::{InfraConfig, Kernel, LinkedDrivers};
use sandloom_kernel::registry;
use stats_alloc::{Region, StatsAlloc};

use crate::support;

/// Allocations (reallocations included) and bytes allocated while `f` ran, and its output.
pub(crate) fn count<R>(
    alloc: &'static StatsAlloc<System>,
    f: impl FnOnce() -> R,
) -> (usize, usize, R) {
    let region = Region::new(alloc);
    let output = f();
    let change = region.change();
    (
        change.allocations + change.reallocations,
        change.bytes_allocated,
        output,
    )
}

/// The most allocations `check()` of the four embedded defaults may make, whatever the number
/// of linked entries: 12 per selected instance. It makes 33 (`BENCHMARKS.md`): the report's
/// strings, each instance's options and the plan. Before the unknown-key probe stopped
/// formatting serde's error it made 110, which this budget refuses.
pub(crate) const CHECK_BUDGET: usize = 48;

/// Count the allocations of one `check()` of the embedded defaults, print them, and refuse a
/// count over [`CHECK_BUDGET`].
///
/// # Panics
/// When the defaults do not resolve, or `check()` allocates more than the budget.
pub(crate) fn check(alloc: &'static StatsAlloc<System>, linked: LinkedDrivers) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config =
        InfraConfig::from_toml_str(&support::embedded_defaults(&dir.path().join("o")), "bench")
            .expect("valid INFRA");
    let kernel = Kernel::new(config, linked);
    kernel.check().expect("the embedded defaults resolve"); // warm: nothing lazy is counted
    let (allocations, bytes, report) = count(alloc, || kernel.check());
    drop(report);
    let entries = registry::drivers().len();
    println!(
        "allocations: check() with {entries} linked entries, 4 selected: {allocations} allocations, {bytes} bytes"
    );
    assert!(
        allocations <= CHECK_BUDGET,
        "check() made {allocations} allocations with {entries} entries (budget {CHECK_BUDGET}): \
         does the kernel allocate per linked entry again?"
    );
}
