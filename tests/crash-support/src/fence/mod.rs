//! The fence campaign: a `Lock` driver proven under kills, pauses, cuts and store restarts.
//!
//! `workers` processes contend for one lock name with a short ttl. A holder records its grant
//! (synced), refreshes once, writes to the **resource** with its fence, and releases. The
//! resource ([`resource`]) is a Postgres row that accepts a write only with a fence greater
//! than the last one it accepted, and logs every write's outcome in an append-only table.
//! Workers reach the lock through the campaign's [`TcpProxy`] and the resource directly (it is
//! the judge, not the subject).
//!
//! Faults, spread over the run by progress (grants seen):
//! - `kills` `SIGKILL`s, in turn during `acquire_wait`, holding a lease before the write,
//!   after the write before the release, and anywhere;
//! - `pauses`: a holder is frozen with `SIGSTOP` before its write, until its lease is over and
//!   a newer fence was accepted, then continued with `SIGCONT`: it writes its stale fence;
//! - `cuts` of the proxy (every connection dropped, new ones refused, for 300 ms);
//! - `restarts` of the lock's server, when the test gives a way to restart it (Redis without
//!   persistence: leases and fence counters lost, the counter re-seeded by the driver).
//!
//! Then [`check`] reads every ledger and the log, and the report ([`FenceReport`]) holds the
//! run to: 0 writes accepted out of fence order, 0 pairs of holders whose fences were both
//! accepted in reverse order, 0 grants whose certainly-held intervals overlap, 0 writes refused
//! while their lease was certainly held, fences strictly growing with time and never granted
//! twice (across kills and restarts), and every frozen holder's late write refused.
//!
//! The parts: `worker` (what a worker process does, [`worker_main`]), `resource` (the
//! protected row and its log), `campaign` (the run, [`fence_campaign`]), `check` (the
//! checker, a pure function with its own tests on the ledgers of broken locks), `broken`
//! ([`ReusedFence`], a lock that reuses fences, on which a test runs the campaign to watch it
//! fail).

mod broken;
mod campaign;
pub mod check;
pub mod resource;
mod worker;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sandloom_test_support::TcpProxy;

use crate::Scale;

pub use broken::ReusedFence;
pub use campaign::{FenceReport, fence_campaign};
pub use worker::worker_main;

/// How big a fence campaign is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FenceScale {
    /// Grants to see (the run's length).
    pub grants: usize,
    /// Workers at once.
    pub workers: usize,
    /// Workers killed.
    pub kills: usize,
    /// Holders frozen past their ttl.
    pub pauses: usize,
    /// Connection cuts.
    pub cuts: usize,
    /// Restarts of the lock's server (when the test can restart it).
    pub restarts: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// A run that records no grant for this long has hung and fails.
    pub hung_after: Duration,
}

impl FenceScale {
    /// From [`Scale::from_env`]: `tasks`/4 grants, its workers, `kills`/2 kills, `kills`/4
    /// pauses, its cuts, `cuts`/3 restarts (small: 500 grants, 4 workers, 10 kills, 5 pauses,
    /// 6 cuts, 2 restarts; large: 5,000, 6, 100, 50, 60, 20). Then
    /// `SANDLOOM_CRASH_GRANTS`, `_PAUSES` and `_RESTARTS` when set.
    ///
    /// # Panics
    /// On a value that is not a number (as [`Scale::from_env`]).
    pub fn from_env() -> FenceScale {
        let scale = Scale::from_env();
        let count = |name: &str, default: usize| {
            std::env::var(name).ok().map_or(default, |value| {
                value
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}={value}: not a number"))
            })
        };
        FenceScale {
            grants: count("SANDLOOM_CRASH_GRANTS", scale.tasks / 4).max(1),
            workers: scale.workers.max(2),
            kills: scale.kills / 2,
            pauses: count("SANDLOOM_CRASH_PAUSES", scale.kills / 4),
            cuts: scale.cuts,
            restarts: count("SANDLOOM_CRASH_RESTARTS", scale.cuts / 3),
            seed: scale.seed,
            hung_after: scale.hung_after,
        }
    }
}

/// What a fence campaign runs against.
pub struct Setup<'a> {
    /// The driver, for the report (`lock.redis`).
    pub driver: &'static str,
    /// The lock's name.
    pub lock: String,
    /// The workers' target (a URL through `proxy`, and whatever the test's `open` needs).
    pub target: String,
    /// The proxy between the workers and the lock's server, which the campaign cuts; `None`:
    /// no cuts.
    pub proxy: Option<Arc<TcpProxy>>,
    /// The Postgres server of the resource (straight, not through the proxy).
    pub resource_url: String,
    /// The leases' ttl.
    pub ttl: Duration,
    /// Where the ledgers go.
    pub dir: &'a Path,
    /// How big.
    pub scale: FenceScale,
    /// Kill and restart the lock's server, returning when it answers again; `None`: no
    /// restarts. Called from the campaign's task (`block_in_place`: a multi-threaded runtime).
    pub restart: Option<Box<dyn FnMut() + Send + 'a>>,
}

impl fmt::Debug for Setup<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Setup")
            .field("driver", &self.driver)
            .field("lock", &self.lock)
            .field("ttl", &self.ttl)
            .field("scale", &self.scale)
            .field("restarts", &self.restart.is_some())
            .finish_non_exhaustive()
    }
}
