//! What the benchmarks against a peer share (`cache_redis`, `lock_redis`, `secrets_vault`,
//! `taskqueue_postgres`): timing a number of sequential calls inside a runtime, and the paired
//! comparison printed after criterion's measurements in a real run.

#![allow(dead_code)] // each benchmark binary uses part of this module

use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

/// Time `iters` sequential runs of `op`, inside `runtime`.
pub(crate) fn timed<F, Fut>(runtime: &Runtime, iters: u64, op: F) -> Duration
where
    F: Fn() -> Fut,
    Fut: Future,
{
    runtime.block_on(async {
        let begin = Instant::now();
        for _ in 0..iters {
            op().await;
        }
        begin.elapsed()
    })
}

/// Rounds that time `calls` runs of Sandloom's side and as many of the peer's back to back,
/// alternating which side goes first. The median of the per-round ratios stays meaningful on
/// a machine whose load drifts during the run, where two criterion rows measured a minute
/// apart may not.
///
/// ```ignore
/// let paired = Paired::new(&runtime, 40, 200).named("driver", "raw");
/// paired.print("get", || driver_get(), || raw_get());
/// ```
pub(crate) struct Paired<'r> {
    runtime: &'r Runtime,
    rounds: usize,
    calls: u32,
    /// How the output names the two sides: Sandloom's, then the peer's.
    names: (&'static str, &'static str),
}

impl<'r> Paired<'r> {
    pub(crate) fn new(runtime: &'r Runtime, rounds: usize, calls: u32) -> Self {
        Self {
            runtime,
            rounds,
            calls,
            names: ("sandloom", "peer"),
        }
    }

    /// Name the two sides in the output (default `sandloom` and `peer`).
    pub(crate) fn named(self, sandloom: &'static str, peer: &'static str) -> Self {
        Self {
            names: (sandloom, peer),
            ..self
        }
    }

    /// Print the medians of both sides' time per run, and the median per-round ratio (the
    /// peer's time over Sandloom's: above 1 means Sandloom is faster).
    pub(crate) fn print<S, SF, P, PF>(&self, row: &str, sandloom: S, peer: P)
    where
        S: Fn() -> SF,
        SF: Future,
        P: Fn() -> PF,
        PF: Future,
    {
        let calls = u64::from(self.calls);
        self.print_measured(
            row,
            || timed(self.runtime, calls, &sandloom),
            || timed(self.runtime, calls, &peer),
        );
    }

    /// As [`Paired::print`], for sides that time themselves: each call of `sandloom` or `peer`
    /// runs one round's `calls` runs and returns the time they took, so that it can prepare
    /// each round (a vacuum, a clean-up) outside the time it returns.
    pub(crate) fn print_measured(
        &self,
        row: &str,
        mut sandloom: impl FnMut() -> Duration,
        mut peer: impl FnMut() -> Duration,
    ) {
        let calls = f64::from(self.calls);
        let mut ratios = Vec::with_capacity(self.rounds);
        let mut ours = Vec::with_capacity(self.rounds);
        let mut theirs = Vec::with_capacity(self.rounds);
        for round in 0..self.rounds {
            let (a, b) = if round % 2 == 0 {
                let a = sandloom();
                (a, peer())
            } else {
                let b = peer();
                (sandloom(), b)
            };
            ratios.push(b.as_secs_f64() / a.as_secs_f64());
            ours.push(a.as_secs_f64() * 1e6 / calls);
            theirs.push(b.as_secs_f64() * 1e6 / calls);
        }
        let (our_name, their_name) = self.names;
        println!(
            "paired {row}: {our_name} {:.1} µs/run, {their_name} {:.1} µs/run (medians of {} \
             rounds × {} runs); {our_name} throughput = {:.2} × {their_name} (median per-round \
             ratio)",
            median(&mut ours),
            median(&mut theirs),
            self.rounds,
            self.calls,
            median(&mut ratios)
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
