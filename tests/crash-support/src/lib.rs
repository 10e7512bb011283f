//! Crash campaigns for Sandloom drivers' tests (RELIABILITY.md, "Crash campaigns").
//!
//! A campaign runs workers, kills some of them with `SIGKILL` at chosen points (during a
//! backend call, mid-task, between the work and its ack, at a random moment), cuts their
//! connections with [`TcpProxy`](sandloom_test_support::TcpProxy), and
//! then accounts for everything from durable ledgers that the workers write *before* they
//! acknowledge anything:
//!
//! - [`taskqueue`]: consumers and producers on a `TaskQueue`: 0 tasks lost, every duplicate
//!   delivery explained by a kill or a failed ack between the work and its ack, and with an
//!   idempotency key 0 copies from retried enqueues.
//! - [`objectstore`]: a writer of 1–8 MiB self-describing objects killed mid-put: never a torn
//!   object, never a staging file in `list`.
//! - [`fence`]: workers contending for a `Lock`, killed, frozen with `SIGSTOP` past their
//!   lease and cut off, writing with their fences to a resource that refuses stale ones: 0
//!   writes accepted out of fence order, 0 holders at once, fences that only grow.
//!
//! # For driver authors
//! Workers are real processes: the campaign re-runs the *test binary itself* with
//! `--exact crash_worker --ignored` and its orders in an environment variable, so a driver's
//! test file needs one ignored test named [`WORKER_TEST`] that hands over to
//! [`taskqueue::worker_main`] (or [`objectstore::writer_main`], [`fence::worker_main`]), and
//! one test per campaign.
//! No extra binary target, nothing for `cargo test --workspace` to know about. The memory
//! queue, which processes cannot share, runs its workers as Tokio tasks instead
//! ([`taskqueue::TaskPool`]).
//!
//! Sizes come from [`Scale::from_env`]: small for CI, `SANDLOOM_CRASH_SCALE=large` for the
//! documented runs. Nothing is timed: the only clocks stop a hung run.

mod crew;
mod cuts;
pub mod fence;
pub mod ledger;
pub mod objectstore;
pub mod pool;
pub mod taskqueue;

use std::time::Duration;

/// The name of the ignored test through which a test binary becomes a worker process.
pub const WORKER_TEST: &str = "crash_worker";

/// How big a campaign is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// Tasks enqueued and consumed (task queues); objects written at least (object stores).
    pub tasks: usize,
    /// Workers running at once.
    pub workers: usize,
    /// Workers killed.
    pub kills: usize,
    /// Connection cuts (drivers reached through a proxy).
    pub cuts: usize,
    /// Seed of every random choice; the report prints it, `SANDLOOM_CRASH_SEED` replays it.
    pub seed: u64,
    /// A run that makes no progress for this long has hung and fails.
    pub hung_after: Duration,
}

impl Scale {
    /// CI's size: 2,000 tasks, 4 workers, 20 kills, 6 cuts.
    pub fn small() -> Scale {
        Scale {
            tasks: 2_000,
            workers: 4,
            kills: 20,
            cuts: 6,
            seed: 0,
            hung_after: Duration::from_mins(1),
        }
    }

    /// The documented larger run: 20,000 tasks, 6 workers, 200 kills, 60 cuts.
    pub fn large() -> Scale {
        Scale {
            tasks: 20_000,
            workers: 6,
            kills: 200,
            cuts: 60,
            seed: 0,
            hung_after: Duration::from_mins(2),
        }
    }

    /// [`Scale::small`], or [`Scale::large`] with `SANDLOOM_CRASH_SCALE=large`, then each of
    /// `SANDLOOM_CRASH_TASKS`, `_WORKERS`, `_KILLS`, `_CUTS`, `_SEED` when set. The seed is
    /// drawn from the clock unless given.
    ///
    /// # Panics
    /// On a value that is not a number, or an unknown scale name.
    pub fn from_env() -> Scale {
        let mut scale = match std::env::var("SANDLOOM_CRASH_SCALE").as_deref() {
            Err(_) | Ok("" | "small") => Scale::small(),
            Ok("large") => Scale::large(),
            Ok(other) => panic!("SANDLOOM_CRASH_SCALE={other}: use `small` or `large`"),
        };
        let number = |name: &str| {
            std::env::var(name).ok().map(|value| {
                value
                    .parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name}={value}: not a number"))
            })
        };
        let count = |name: &str, default: usize| number(name).map_or(default, |n| n as usize);
        scale.tasks = count("SANDLOOM_CRASH_TASKS", scale.tasks).max(1);
        scale.workers = count("SANDLOOM_CRASH_WORKERS", scale.workers).max(1);
        scale.kills = count("SANDLOOM_CRASH_KILLS", scale.kills);
        scale.cuts = count("SANDLOOM_CRASH_CUTS", scale.cuts);
        scale.seed = number("SANDLOOM_CRASH_SEED").unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
        scale
    }
}

/// `SplitMix64`: small, seedable, good enough to choose kill points and fill objects.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

/// A fresh directory for a campaign's ledgers (and a store's root), removed when dropped —
/// unless `SANDLOOM_CRASH_KEEP` is set, to read the ledgers after a failure.
///
/// # Panics
/// When no temporary directory can be created.
pub fn scratch() -> tempfile::TempDir {
    let keep = std::env::var_os("SANDLOOM_CRASH_KEEP").is_some();
    let dir = tempfile::Builder::new()
        .prefix("sandloom-crash-")
        .disable_cleanup(keep)
        .tempdir()
        .expect("a temporary directory");
    if keep {
        eprintln!("crash campaign files kept in {}", dir.path().display());
    }
    dir
}
