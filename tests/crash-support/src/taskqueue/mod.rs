//! Crash campaigns on a `TaskQueue`.
//!
//! **Consumers** ([`consume_campaign`]): the campaign enqueues `tasks` tasks straight to the
//! server, then runs `workers` consumers that reserve, record the task done in their ledger
//! (synced), and ack. It arms `kills` of them, in turn, to die during `reserve`, mid-task,
//! between the work and the ack, or anywhere; each dead worker is replaced. It cuts the
//! workers' connections `cuts` times. When every task is recorded done, it stops the workers,
//! drains what the dead left behind (after the visibility timeout) and reads every ledger:
//!
//! - **lost**: tasks no ledger records done: must be 0;
//! - **duplicated**: extra `done` records of a task. Each must be explained by a `done` that
//!   was never acked: the last `done` of a killed worker's ledger (killed between work and ack),
//!   or a `done` whose ack failed (its connection cut, or its lease over). Unexplained: must
//!   be 0, and so must dead letters and tasks nobody enqueued.
//!
//! **Producers** ([`produce_campaign`], feature `dedupe`): producers enqueue keyed tasks through
//! the proxy, retrying `Unavailable` and `Timeout`; killed ones are replaced by one that
//! retries from the first key its predecessor did not record. Then the queue is drained: one
//! task per key (0 copies), with the id every enqueue of that key answered.
//!
//! The parts, by role:
//! - `worker`: what a worker does, in a process of its own or as a task ([`worker_main`]);
//! - `task_pool`: workers as Tokio tasks of the test's process ([`TaskPool`]);
//! - `crate::crew` and `crate::cuts` (shared with the fence campaign): the campaign's side of
//!   its workers (spawning, arming, killing, replacing), and cutting the workers' proxy;
//! - `consume`: the consumer campaign and its report ([`ConsumeReport`]);
//! - `accounting`: reading the consumers' ledgers: lost tasks, and what explains each duplicate;
//! - `produce`: the producer campaign, its count of copies and its report ([`ProduceReport`]).

mod accounting;
mod consume;
mod produce;
mod task_pool;
mod worker;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::taskqueue::TaskQueue;
use sandloom_test_support::TcpProxy;

use crate::Scale;

pub use consume::{ConsumeReport, consume_campaign};
pub use produce::{ProduceReport, produce_campaign};
pub use task_pool::TaskPool;
pub use worker::worker_main;

/// How long after an unconfirmed ack a cut or a kill may still have lost it.
pub const UNCONFIRMED_ACK_WINDOW: Duration = Duration::from_millis(500);

/// What a campaign runs against.
pub struct Setup<'a> {
    /// The driver, for the report (`taskqueue.postgres`).
    pub driver: &'static str,
    /// The task queue's name.
    pub queue: String,
    /// The campaign's own instance, straight to the server: it enqueues, drains and checks.
    pub direct: Arc<dyn TaskQueue>,
    /// The workers' target (a URL through `proxy`), passed to their `open`.
    pub target: String,
    /// The proxy between the workers and the server, which the campaign cuts; `None`: no cuts.
    pub proxy: Option<Arc<TcpProxy>>,
    /// The driver's visibility timeout, as configured.
    pub visibility: Duration,
    /// Whether an `ack` that answered `Ok` may still not have reached the server (AMQP 0-9-1
    /// acks are not confirmed): then a duplicate is also explained by an ack followed within
    /// [`UNCONFIRMED_ACK_WINDOW`] by a cut or by the kill of its worker.
    pub unconfirmed_acks: bool,
    /// Where the ledgers go.
    pub dir: &'a Path,
    /// How big.
    pub scale: Scale,
}

impl fmt::Debug for Setup<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Setup")
            .field("driver", &self.driver)
            .field("queue", &self.queue)
            .field("scale", &self.scale)
            .finish_non_exhaustive()
    }
}
