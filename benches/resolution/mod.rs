//! The resolution benchmark, shared by `resolution_10` … `resolution_10000`: each of those
//! binaries links `sandloom-embedded` (10 driver entries) and one synthetic driver crate, so that
//! it holds exactly N entries; linkme slices are global to a binary and the kernel reads all of
//! the slice on every resolution, so N cannot vary inside one binary.
//!
//! `INFRA` selects the four embedded defaults (`cache.memory`, `notifier.log`,
//! `objectstore.fs`, `taskqueue.memory`): the drivers a real application starts, whose
//! construction is the floor any registry adds to. Measured, all in one criterion group:
//!
//! | id | what |
//! |---|---|
//! | `check` | `Kernel::check()`: the kernel's resolution, every conflict check included |
//! | `check+construct` | `check()`, then constructing the four drivers |
//! | `start+shutdown` | `Kernel::start()` then `Running::shutdown()`, current-thread runtime |
//! | `construct` | baseline: constructing the four drivers from typed options, nothing else |
//! | `match+construct` | baseline: a hand-written `match` over the N names, then construct |
//! | `hashmap+construct` | baseline: a `HashMap` filled by N `register()` calls, then construct |
//! | `raw_scan` | baseline: one pass over the slice finding the four selected entries |
//! | `by_hand_start+stop` | baseline: construct, start, build the `Infra`, stop, by hand |
//! | `start+shutdown/cpu`, `by_hand_start+stop/cpu` | the same two, in the CPU time of all the process's threads rather than wall-clock time |
//!
//! The `/cpu` pair is there for machines whose host takes CPU time away (a virtual machine's
//! "steal", the eighth value of `/proc/stat`'s `cpu` line): wall-clock time counts
//! it, unevenly, and a start that hands work to another thread (the blocking pool) waits for
//! that thread's CPU to be given back. CPU time leaves it out, and leaves out waiting.
//!
//! After criterion's rows, a real run (`--bench`, with no filter or one that keeps
//! `start+shutdown`) prints a paired comparison of `start+shutdown`
//! and `by_hand_start+stop` ([`paired_startup`]): the two timed back to back in alternating
//! rounds, the ratio taken per round. Two criterion rows are measured seconds apart, and on a
//! virtual machine their ratio moved by ±0.1 from one run to the next with nothing changed; the
//! median of per-round ratios does not drift with the machine.

#![allow(dead_code)] // each benchmark binary uses part of this module

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use sandloom::sdk::{
    CACHE, Cache, Infra, NOTIFIER, Notifier, OBJECT_STORE, ObjectStore, TASK_QUEUE, TaskQueue,
};
use sandloom::{InfraConfig, Kernel, LinkedDrivers};
use sandloom_bench_synthetic::{Found, Registry, Synthetic};
use sandloom_driverkit::{Driver, NoOptions};
use sandloom_embedded::{
    FsObjectStore, FsObjectStoreOptions, LogNotifier, LogNotifierOptions, MemoryCache,
    MemoryCacheOptions, MemoryTaskQueue, MemoryTaskQueueOptions,
};
use sandloom_kernel::registry::{self, DriverEntry};

use crate::support;

/// What one benchmark binary links.
pub(crate) struct Bench {
    /// `link_drivers!(sandloom_embedded, <the synthetic crate>)` of the binary.
    pub(crate) linked: LinkedDrivers,
    /// The driver entries the binary must hold.
    pub(crate) entries: usize,
    /// The synthetic crate's hand-written `match`.
    pub(crate) by_match: fn(&str, &str) -> Option<Found>,
    /// The synthetic crate's explicit `register()` calls.
    pub(crate) register_all: fn(&mut Registry),
}

/// What `INFRA` selects, as `(capability, driver)`.
const SELECTED: [(&str, &str); 4] = [
    ("cache", "memory"),
    ("notifier", "log"),
    ("objectstore", "fs"),
    ("taskqueue", "memory"),
];

/// The same four, as indices into `sandloom_bench_synthetic_gen::BUILTIN`.
const SELECTED_BUILTINS: [Found; 4] = [
    Found::Builtin(0),
    Found::Builtin(2),
    Found::Builtin(4),
    Found::Builtin(9),
];

/// A constructed driver, kept only to be dropped outside the timing.
#[allow(dead_code)]
enum Built {
    Cache(MemoryCache),
    Notifier(LogNotifier),
    ObjectStore(FsObjectStore),
    TaskQueue(MemoryTaskQueue),
    Synthetic(Synthetic),
}

/// Construct what a lookup found, from typed options: no `INFRA`, no checks.
fn construct(found: Found, root: &Path) -> Built {
    let built = match found {
        Found::Builtin(0) => {
            MemoryCache::from_options(MemoryCacheOptions::default()).map(Built::Cache)
        }
        Found::Builtin(2) => {
            LogNotifier::from_options(LogNotifierOptions::default()).map(Built::Notifier)
        }
        Found::Builtin(4) => FsObjectStore::from_options(FsObjectStoreOptions {
            root: root.to_path_buf(),
        })
        .map(Built::ObjectStore),
        Found::Builtin(9) => {
            MemoryTaskQueue::from_options(MemoryTaskQueueOptions::default()).map(Built::TaskQueue)
        }
        Found::Builtin(other) => panic!("built-in {other} is not selected"),
        Found::Synthetic(_) => Synthetic::from_options(NoOptions {}).map(Built::Synthetic),
    };
    built.expect("the selected drivers construct")
}

fn construct_all(found: [Found; 4], root: &Path) -> [Built; 4] {
    found.map(|found| construct(found, root))
}

/// The least any resolution over the slice does: one pass, finding the selected entries.
fn raw_scan(
    entries: &'static [DriverEntry],
    selected: &[(&str, &str); 4],
) -> [Option<&'static DriverEntry>; 4] {
    let mut found = [None; 4];
    for entry in entries {
        for (slot, &(capability, name)) in found.iter_mut().zip(selected) {
            if entry.name == name && entry.capability == capability {
                *slot = Some(entry);
            }
        }
    }
    found
}

/// Construct, start, hand to an `Infra` and stop the four drivers by hand: what the kernel's
/// `start` + `shutdown` does, without resolution, gates, timeouts or panic guards.
pub(crate) async fn by_hand(root: &Path) {
    let cache = Arc::new(MemoryCache::from_options(MemoryCacheOptions::default()).unwrap());
    let notifier = Arc::new(LogNotifier::from_options(LogNotifierOptions::default()).unwrap());
    let store = Arc::new(
        FsObjectStore::from_options(FsObjectStoreOptions {
            root: root.to_path_buf(),
        })
        .unwrap(),
    );
    let queue = Arc::new(MemoryTaskQueue::from_options(MemoryTaskQueueOptions::default()).unwrap());
    cache.start().await.unwrap();
    notifier.start().await.unwrap();
    store.start().await.unwrap();
    queue.start().await.unwrap();
    let infra = Infra::builder()
        .with(&CACHE, "default", Arc::clone(&cache) as Arc<dyn Cache>)
        .with(
            &NOTIFIER,
            "default",
            Arc::clone(&notifier) as Arc<dyn Notifier>,
        )
        .with(
            &OBJECT_STORE,
            "default",
            Arc::clone(&store) as Arc<dyn ObjectStore>,
        )
        .with(
            &TASK_QUEUE,
            "default",
            Arc::clone(&queue) as Arc<dyn TaskQueue>,
        )
        .build()
        .unwrap();
    black_box(&infra);
    queue.stop().await.unwrap();
    store.stop().await.unwrap();
    notifier.stop().await.unwrap();
    cache.stop().await.unwrap();
}

/// Run the group `resolution/N=<entries>`.
///
/// # Panics
/// When the binary does not hold `entries` driver entries, or the configuration does not start.
pub(crate) fn main(bench: &Bench) {
    let entries = registry::drivers();
    assert_eq!(
        entries.len(),
        bench.entries,
        "this binary must link exactly {} driver entries",
        bench.entries
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root: PathBuf = dir.path().join("objects");
    let config = InfraConfig::from_toml_str(&support::embedded_defaults(&root), "bench")
        .expect("valid INFRA");
    let kernel = Kernel::new(config.clone(), bench.linked);
    let report = kernel.check().expect("the embedded defaults resolve");
    assert_eq!(report.lines.len(), 4);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("resolution/N={}", bench.entries));

    group.bench_function("check", |b| b.iter(|| black_box(&kernel).check()));
    group.bench_function("check+construct", |b| {
        b.iter_with_large_drop(|| {
            let report = black_box(&kernel).check().unwrap();
            (report, construct_all(SELECTED_BUILTINS, &root))
        });
    });
    group.bench_function("start+shutdown", |b| {
        b.iter_batched(
            || Kernel::new(config.clone(), bench.linked),
            |kernel| {
                runtime.block_on(async {
                    let running = kernel.start().await.expect("starts");
                    running.shutdown().await.expect("stops");
                });
            },
            BatchSize::SmallInput,
        );
    });

    group.bench_function("construct", |b| {
        b.iter_with_large_drop(|| construct_all(black_box(SELECTED_BUILTINS), &root));
    });
    group.bench_function("match+construct", |b| {
        b.iter_with_large_drop(|| {
            let found = black_box(&SELECTED).map(|(capability, name)| {
                (bench.by_match)(capability, name).expect("a selected name matches")
            });
            construct_all(found, &root)
        });
    });
    group.bench_function("hashmap+construct", |b| {
        b.iter_with_large_drop(|| {
            let mut registry = Registry::default();
            (bench.register_all)(&mut registry);
            assert!(registry.conflicts().is_empty());
            let found = black_box(&SELECTED).map(|(capability, name)| {
                registry
                    .get(capability, name)
                    .expect("a selected name is registered")
            });
            (registry, construct_all(found, &root))
        });
    });
    group.bench_function("raw_scan", |b| {
        b.iter(|| raw_scan(black_box(entries), black_box(&SELECTED)));
    });
    group.bench_function("by_hand_start+stop", |b| {
        b.iter(|| runtime.block_on(by_hand(&root)));
    });
    group.bench_function("start+shutdown/cpu", |b| {
        b.iter_custom(|iters| {
            let kernels: Vec<Kernel> = (0..iters)
                .map(|_| Kernel::new(config.clone(), bench.linked))
                .collect();
            let start = support::process_cpu_time();
            for kernel in kernels {
                runtime.block_on(async {
                    let running = kernel.start().await.expect("starts");
                    running.shutdown().await.expect("stops");
                });
            }
            support::process_cpu_time().saturating_sub(start)
        });
    });
    group.bench_function("by_hand_start+stop/cpu", |b| {
        b.iter_custom(|iters| {
            let start = support::process_cpu_time();
            for _ in 0..iters {
                runtime.block_on(by_hand(&root));
            }
            support::process_cpu_time().saturating_sub(start)
        });
    });
    group.finish();
    criterion.final_summary();
    if wants_paired(bench.entries) {
        paired_startup(bench, &config, &root, &runtime);
    }
}

/// Whether to run [`paired_startup`]: in a real run (`--bench`, not `--list`) whose filter, if
/// any, matches `start+shutdown`'s id. Criterion reads its filter from the arguments that are
/// not options; numbers are taken for options' values (`--measurement-time 3`), and an option
/// with a word for its value (`--save-baseline before`) reads as a filter that skips it.
fn wants_paired(entries: usize) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let id = format!("resolution/N={entries}/start+shutdown");
    let mut filters = args
        .iter()
        .filter(|arg| !arg.starts_with('-') && arg.parse::<f64>().is_err())
        .peekable();
    args.iter().any(|arg| arg == "--bench")
        && !args.iter().any(|arg| arg == "--list")
        && (filters.peek().is_none() || filters.any(|filter| id.contains(filter.as_str())))
}

/// Rounds of [`paired_startup`] (odd: the median is one round's).
const PAIRED_ROUNDS: usize = 61;
/// Runs of each side per round of [`paired_startup`].
const PAIRED_RUNS: u32 = 100;

/// Time `start+shutdown` and `by_hand_start+stop` back to back, [`PAIRED_RUNS`] runs of each
/// per round, alternating which goes first, and print the medians of both sides' time per run
/// and of the per-round ratio (kernel ÷ by hand), in wall-clock and in process CPU time, with
/// the ratios' quartiles.
fn paired_startup(
    bench: &Bench,
    config: &InfraConfig,
    root: &Path,
    runtime: &tokio::runtime::Runtime,
) {
    // Wall-clock and CPU time of one side's round.
    let timed = |run: &mut dyn FnMut()| {
        let (wall, cpu) = (Instant::now(), support::process_cpu_time());
        run();
        (
            wall.elapsed(),
            support::process_cpu_time().saturating_sub(cpu),
        )
    };
    let kernel_side = || {
        // Made outside the time, as criterion's `iter_batched` does.
        let kernels: Vec<Kernel> = (0..PAIRED_RUNS)
            .map(|_| Kernel::new(config.clone(), bench.linked))
            .collect();
        let mut kernels = kernels.into_iter();
        timed(&mut || {
            for kernel in kernels.by_ref() {
                runtime.block_on(async {
                    let running = kernel.start().await.expect("starts");
                    running.shutdown().await.expect("stops");
                });
            }
        })
    };
    let by_hand_side = || {
        timed(&mut || {
            for _ in 0..PAIRED_RUNS {
                runtime.block_on(by_hand(root));
            }
        })
    };
    // Per round, (kernel, by hand): in wall-clock time, and in CPU time.
    let mut wall: Vec<(Duration, Duration)> = Vec::with_capacity(PAIRED_ROUNDS);
    let mut cpu: Vec<(Duration, Duration)> = Vec::with_capacity(PAIRED_ROUNDS);
    for round in 0..PAIRED_ROUNDS {
        let (kernel, hand) = if round % 2 == 0 {
            let kernel = kernel_side();
            (kernel, by_hand_side())
        } else {
            let hand = by_hand_side();
            (kernel_side(), hand)
        };
        wall.push((kernel.0, hand.0));
        cpu.push((kernel.1, hand.1));
    }
    let per_run = |time: Duration| time.as_secs_f64() * 1e6 / f64::from(PAIRED_RUNS);
    for (clock, rounds) in [("wall", &wall), ("cpu", &cpu)] {
        let [_, kernel, _] = quartiles(rounds.iter().map(|r| per_run(r.0)).collect());
        let [_, hand, _] = quartiles(rounds.iter().map(|r| per_run(r.1)).collect());
        let [low, ratio, high] = quartiles(
            rounds
                .iter()
                .map(|r| r.0.as_secs_f64() / r.1.as_secs_f64())
                .collect(),
        );
        println!(
            "paired resolution/N={}/start+shutdown ({clock}): {kernel:.1} µs/run against \
             by_hand_start+stop {hand:.1} µs/run; ratio {ratio:.2}× (median of {PAIRED_ROUNDS} \
             rounds × {PAIRED_RUNS} runs; quartiles {low:.2}–{high:.2})",
            bench.entries
        );
    }
}

/// The first quartile, the median and the third quartile of `values`.
fn quartiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let at = |q: usize| values[(values.len() - 1) * q / 4];
    [at(1), at(2), at(3)]
}

/// For callgrind (`startup_instructions.rs`): run `operation` (`start+shutdown` or
/// `by_hand_start+stop`, as in [`main`]) `times` times on a current-thread runtime, with nothing
/// else measured. Compare two counts with `times` of at most [`KERNELS`].
///
/// # Panics
/// On an unknown operation, or when the configuration does not start.
/// Kernels [`instructions`] makes beforehand, at least: compare counts of `times` up to this.
const KERNELS: u64 = 1_000;

pub(crate) fn instructions(linked: LinkedDrivers, operation: &str, times: u64) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root: PathBuf = dir.path().join("objects");
    let config = InfraConfig::from_toml_str(&support::embedded_defaults(&root), "bench")
        .expect("valid INFRA");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match operation {
        "start+shutdown" => {
            // Made beforehand, as criterion's `iter_batched` does, and as many whatever `times`
            // (those not started are leaked, not dropped): the difference between two counts
            // holds no copy of the configuration, and its drop as criterion's runs do.
            let made = times.max(KERNELS);
            let mut kernels: Vec<Kernel> = (0..made)
                .map(|_| Kernel::new(config.clone(), linked))
                .collect();
            for kernel in kernels.drain(..usize::try_from(times).expect("a count")) {
                runtime.block_on(async {
                    let running = kernel.start().await.expect("starts");
                    running.shutdown().await.expect("stops");
                });
            }
            std::mem::forget(kernels);
        }
        "by_hand_start+stop" => {
            for _ in 0..times {
                runtime.block_on(by_hand(&root));
            }
        }
        other => panic!("unknown operation {other:?}: start+shutdown or by_hand_start+stop"),
    }
}
