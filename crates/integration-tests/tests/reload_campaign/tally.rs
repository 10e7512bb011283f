//! What every operation answered, classified against the swap windows.
//!
//! An operation is *in a swap window* when a reload was running when it began, or one began or
//! ended while it ran (the [`Window`]'s epoch is odd during a reload and moves at both ends).
//! Its error is then classified:
//!
//! - **failed by a swap**: `Stopped`, whatever its mark (`GateExit` `Refused`, `Cut`,
//!   `Abandoned`, or none: the driver's own `Stopped` from an instance stopped under it). Nothing
//!   but a reload stops an instance in this campaign, so a `Stopped` outside a window is counted
//!   as *failed otherwise*. What was issue 26's known gap is listed apart (and asserted 0 like
//!   the rest), so that a failure says which mechanism broke: a waiting operation (`reserve`,
//!   `acquire_wait`, `changes`) cut by the drain, and any failure by a swap of the idle waiters
//!   (operations named `… (idle)`), which wait longer than the stop timeout. The route runs
//!   both again on the new instance, so neither should fail;
//!   An operation of the workers ended by the stop of its instance after running longer than
//!   the stop timeout (on this loaded machine a Postgres statement can) is listed apart too:
//!   the drain's budget is a deadline by design, and a test must not depend on the machine's
//!   speed;
//! - **state from a replaced instance**: an operation on something another instance handed out
//!   or stored (a reservation, a lease, an etag, a change cursor, an object written in the same
//!   iteration) when a swap window lies between the two. The new instance never granted or
//!   stored it, so its refusal (`Conflict`, `NotFound`) is the contract's answer, not a failure
//!   (data do not move between instances); counted apart;
//! - **failed otherwise**: any other error. The goal is 0.
//!
//! `Unsupported` is the answer of an instance whose driver does not declare the feature (a
//! `secrets.file` has no `versions`): counted apart, never a failure.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sandloom::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::__private::GateExit;

/// Moves at the start and at the end of every reload: odd while one runs.
#[derive(Default)]
pub(crate) struct Window(AtomicU64);

impl Window {
    /// The epoch now.
    pub(crate) fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    /// A reload begins.
    pub(crate) fn open(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    /// The reload returned.
    pub(crate) fn close(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether an interval that began at epoch `since` and ends now may contain a swap.
    pub(crate) fn crossed(&self, since: u64) -> bool {
        since % 2 == 1 || self.now() != since
    }
}

/// The counts of one campaign.
#[derive(Default, Debug, Clone)]
pub(crate) struct Figures {
    /// Operations called.
    pub(crate) attempted: u64,
    /// Answered `Ok`.
    pub(crate) ok: u64,
    /// Answered `Unsupported` (the serving driver does not declare the feature).
    pub(crate) unsupported: u64,
    /// Failed by a swap, by `operation: mark`, but for waiting operations and idle waiters.
    pub(crate) by_swap: BTreeMap<String, u64>,
    /// Failed by a swap: waiting operations cut by the drain and idle waiters (issue 26's gap
    /// before the route ran them again), by `operation: mark`.
    pub(crate) gap: BTreeMap<String, u64>,
    /// Ended by a swap after running longer than the stop timeout, by `operation: mark`.
    pub(crate) over_budget: BTreeMap<String, u64>,
    /// State from a replaced instance refused, by `operation: kind`.
    pub(crate) token_crossed: BTreeMap<String, u64>,
    /// Failed otherwise, by `operation: kind`.
    pub(crate) other: BTreeMap<String, u64>,
    /// The first few failures otherwise and by a swap, in full.
    pub(crate) other_examples: Vec<String>,
    /// The longest answer of each operation, outside and inside swap windows.
    pub(crate) longest: BTreeMap<String, (std::time::Duration, std::time::Duration)>,
    /// A value read back from the instance that stored it, outside any swap window, that was
    /// not what was written.
    pub(crate) mismatches: u64,
    /// `changes (idle)` answered with a relist (`Changes::relisted`): its cursor belonged to
    /// an instance a reload replaced while it waited. Not a failure: the contract's answer.
    pub(crate) relisted: u64,
}

impl Figures {
    /// Failed, all causes.
    pub(crate) fn failed(&self) -> u64 {
        self.failed_by_swap() + total(&self.token_crossed) + total(&self.other) + self.mismatches
    }

    /// Failed by a swap, waiting operations and idle waiters included.
    pub(crate) fn failed_by_swap(&self) -> u64 {
        total(&self.by_swap) + total(&self.gap) + total(&self.over_budget)
    }

    /// One line per figure, for the test's output and RELIABILITY.md.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "operations attempted: {}, ok: {}, unsupported: {}, failed: {}",
            self.attempted,
            self.ok,
            self.unsupported,
            self.failed()
        );
        let _ = writeln!(
            out,
            "failed by a swap: {} (waiting operations and idle waiters: {} {:?}; slower than the stop timeout: {} {:?}; else: {} {:?})",
            self.failed_by_swap(),
            total(&self.gap),
            self.gap,
            total(&self.over_budget),
            self.over_budget,
            total(&self.by_swap),
            self.by_swap
        );
        let _ = writeln!(
            out,
            "state from a replaced instance refused: {} {:?}",
            total(&self.token_crossed),
            self.token_crossed
        );
        let _ = writeln!(out, "changes relisted across a reload: {}", self.relisted);
        let _ = writeln!(
            out,
            "failed otherwise: {} {:?}; read-back mismatches outside a swap: {}",
            total(&self.other),
            self.other,
            self.mismatches
        );
        let _ = writeln!(
            out,
            "longest answers (outside, inside a swap window): {:?}",
            self.longest
        );
        for example in &self.other_examples {
            let _ = writeln!(out, "  {example}");
        }
        out
    }
}

fn total(map: &BTreeMap<String, u64>) -> u64 {
    map.values().sum()
}

/// The operations that wait, which a drain cuts (declared `#[waits]`).
const WAITS: &[&str] = &["reserve", "acquire_wait", "changes"];

/// Where every worker records what its operations answered.
pub(crate) struct Tally {
    /// The stop timeout.
    pub(crate) budget: std::time::Duration,
    /// The swap windows.
    pub(crate) window: Window,
    /// The step of the variant rings serving now (set after each applied reload), for the
    /// examples.
    pub(crate) step: std::sync::atomic::AtomicUsize,
    figures: Mutex<Figures>,
}

impl Tally {
    /// A tally of a campaign whose stop timeout is `budget`.
    pub(crate) fn new(budget: std::time::Duration) -> Self {
        Self {
            budget,
            window: Window::default(),
            step: std::sync::atomic::AtomicUsize::new(0),
            figures: Mutex::default(),
        }
    }

    /// Record `result` of `operation`, begun at epoch `began`; `token` is the epoch at which
    /// the token it acts on was obtained, for operations on one; it took `elapsed`.
    pub(crate) fn record<T>(
        &self,
        operation: &'static str,
        began: u64,
        token: Option<u64>,
        elapsed: std::time::Duration,
        result: &InfraResult<T>,
    ) {
        let in_window = self.window.crossed(began);
        let step = self.step.load(Ordering::SeqCst);
        let token_crossed = token.is_some_and(|since| self.window.crossed(since));
        let mut figures = self.figures.lock().unwrap();
        figures.attempted += 1;
        let longest = figures.longest.entry(operation.to_owned()).or_default();
        if in_window {
            longest.1 = longest.1.max(elapsed);
        } else {
            longest.0 = longest.0.max(elapsed);
        }
        let Err(error) = result else {
            figures.ok += 1;
            return;
        };
        let kind = error.kind();
        if kind == ErrorKind::Unsupported {
            figures.unsupported += 1;
        } else if kind == ErrorKind::Stopped && in_window {
            let mark = mark(error);
            let gap = operation.ends_with("(idle)")
                || (mark == "cut" && WAITS.iter().any(|waits| operation.starts_with(waits)));
            let map = if gap {
                &mut figures.gap
            } else if elapsed >= self.budget {
                &mut figures.over_budget
            } else {
                &mut figures.by_swap
            };
            *map.entry(format!("{operation}: {mark}")).or_default() += 1;
            if figures.other_examples.len() < 10 {
                figures.other_examples.push(format!(
                    "{operation} (by a swap, after {elapsed:?}, ended at step {step}): {error}"
                ));
            }
        } else if token_crossed {
            *figures
                .token_crossed
                .entry(format!("{operation}: {kind:?}"))
                .or_default() += 1;
        } else {
            *figures
                .other
                .entry(format!("{operation}: {kind:?}"))
                .or_default() += 1;
            if figures.other_examples.len() < 10 {
                figures.other_examples.push(format!(
                    "{operation} (window {in_window}, after {elapsed:?}): {error}"
                ));
            }
        }
    }

    /// A value read back outside any swap window was not the one written.
    pub(crate) fn mismatch(&self, what: &str) {
        let mut figures = self.figures.lock().unwrap();
        figures.mismatches += 1;
        if figures.other_examples.len() < 10 {
            figures.other_examples.push(format!("mismatch: {what}"));
        }
    }

    /// A `changes` answered with a relist.
    pub(crate) fn relisted(&self) {
        self.figures.lock().unwrap().relisted += 1;
    }

    /// The counts so far.
    pub(crate) fn figures(&self) -> Figures {
        self.figures.lock().unwrap().clone()
    }
}

fn mark(error: &InfraError) -> &'static str {
    match GateExit::of(error) {
        Some(GateExit::Refused) => "refused",
        Some(GateExit::Cut) => "cut",
        Some(GateExit::Abandoned) => "abandoned",
        Some(_) => "other mark",
        None => "stopped by the driver",
    }
}
