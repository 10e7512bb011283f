//! The consumer campaign (see the [module docs](super)) and its report.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};

use super::accounting::account;
use super::{Setup, UNCONFIRMED_ACK_WINDOW};
use crate::Scale;
use crate::crew::Crew;
use crate::cuts::{cut, end_cuts};
use crate::ledger::{self, Ledger, Record};
use crate::pool::{Event, Orders, Point, Pool};

/// The figures of a consumer campaign.
#[derive(Debug, Clone, Default)]
pub struct ConsumeReport {
    /// The driver.
    pub driver: &'static str,
    /// `process` or `task`.
    pub workers_are: &'static str,
    /// Tasks enqueued.
    pub tasks: usize,
    /// Workers at once.
    pub workers: usize,
    /// Workers started in all.
    pub started: usize,
    /// Kills, by point.
    pub kills: BTreeMap<String, usize>,
    /// Connection cuts.
    pub cuts: usize,
    /// Tasks no ledger records done.
    pub lost: usize,
    /// Extra `done` records.
    pub duplicated: usize,
    /// Duplicates explained by a kill between work and ack.
    pub explained_by_kill: usize,
    /// Duplicates explained by an ack that failed.
    pub explained_by_failed_ack: usize,
    /// Duplicates explained by an unconfirmed ack that answered `Ok` right before a cut or
    /// its worker's kill (see [`Setup::unconfirmed_acks`]).
    pub explained_by_lost_ack: usize,
    /// Duplicates nothing explains.
    pub unexplained: usize,
    /// Acks that failed, by error kind.
    pub failed_acks: BTreeMap<String, usize>,
    /// Tasks the campaign drained after the workers stopped (left by dead workers).
    pub drained: usize,
    /// Dead letters at the end.
    pub dead: usize,
    /// Tasks done that nobody enqueued.
    pub phantom: usize,
    /// Failed operations the workers retried, by operation and kind.
    pub errors: BTreeMap<String, usize>,
    /// The seed.
    pub seed: u64,
}

impl fmt::Display for ConsumeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kills: usize = self.kills.values().sum();
        write!(
            f,
            "{} consumers ({} workers as {}, {} started): tasks {}, kills {kills} {:?}, cuts {}, \
             lost {}, duplicated {} (explained {}: {} by kills between work and ack, {} by failed acks \
             {:?}, {} by unconfirmed acks lost to a cut or kill; unexplained {}), drained after the run {}, dead {}, phantom {}, retried errors {:?}, seed {}",
            self.driver,
            self.workers,
            self.workers_are,
            self.started,
            self.tasks,
            self.kills,
            self.cuts,
            self.lost,
            self.duplicated,
            self.explained_by_kill + self.explained_by_failed_ack + self.explained_by_lost_ack,
            self.explained_by_kill,
            self.explained_by_failed_ack,
            self.failed_acks,
            self.explained_by_lost_ack,
            self.unexplained,
            self.drained,
            self.dead,
            self.phantom,
            self.errors,
            self.seed
        )
    }
}

impl ConsumeReport {
    /// Fail unless nothing was lost, every duplicate is explained, and the run was as large
    /// as asked.
    ///
    /// # Panics
    /// When one of those does not hold.
    pub fn assert_holds(&self, scale: &Scale, cuts: bool) {
        let kills: usize = self.kills.values().sum();
        assert_eq!(self.lost, 0, "tasks lost: {self}");
        assert_eq!(self.unexplained, 0, "unexplained duplicates: {self}");
        assert_eq!(self.dead, 0, "dead letters: {self}");
        assert_eq!(self.phantom, 0, "tasks nobody enqueued: {self}");
        assert_eq!(kills, scale.kills, "kills: {self}");
        if cuts {
            assert_eq!(self.cuts, scale.cuts, "cuts: {self}");
        }
    }
}

/// Enqueue `n` tasks on `direct`, 8 at a time; their ids.
async fn enqueue_all(direct: &Arc<dyn TaskQueue>, queue: &str, n: usize) -> HashSet<String> {
    let mut lanes = Vec::new();
    for lane in 0..8 {
        let (direct, queue) = (Arc::clone(direct), queue.to_owned());
        lanes.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in (lane..n).step_by(8) {
                let payload = Bytes::from(format!("task-{i}"));
                let id = direct
                    .enqueue(&queue, payload, EnqueueOptions::default())
                    .await
                    .unwrap_or_else(|err| panic!("enqueue task {i}: {err}"));
                ids.push(id);
            }
            ids
        }));
    }
    let mut ids = HashSet::new();
    for lane in lanes {
        ids.extend(lane.await.expect("an enqueue lane"));
    }
    assert_eq!(ids.len(), n, "the queue answered an id twice");
    ids
}

/// Run a consumer campaign (see the [module docs](super)) on `pool`'s workers.
///
/// # Panics
/// When the run hangs, a worker ends on its own, or the queue misbehaves for the campaign's
/// own instance. The report's [`ConsumeReport::assert_holds`] checks the figures.
pub async fn consume_campaign<P: Pool>(setup: &Setup<'_>, pool: &mut P) -> ConsumeReport {
    let scale = setup.scale;
    let ids = enqueue_all(&setup.direct, &setup.queue, scale.tasks).await;
    let orders = |no: usize| Orders {
        role: "consume".into(),
        ledger: setup.dir.join(format!("worker-{no}.ledger")),
        target: setup.target.clone(),
        queue: setup.queue.clone(),
        from: 0,
        to: 0,
        params: String::new(),
    };
    let workers_are = pool.kind();
    let mut crew = Crew::new(pool, scale.seed);
    for _ in 0..scale.workers {
        crew.spawn(orders);
    }
    let (n, kills, cuts) = (scale.tasks, scale.kills, scale.cuts);
    let kill_due = |k: usize| (k + 1) * n / (kills + 1);
    let cut_due = |c: usize| (2 * c + 1) * n / (2 * cuts + 2);
    let mut done: HashSet<String> = HashSet::new();
    let mut phantom = HashSet::new();
    let (mut armed, mut cut_handles, mut cut_times) = (0, Vec::new(), Vec::new());
    loop {
        while armed < kills && done.len() >= kill_due(armed) {
            if !crew.arm(Point::ARMED[armed % Point::ARMED.len()]) {
                break;
            }
            armed += 1;
        }
        if cut_handles.len() < cuts && done.len() >= cut_due(cut_handles.len()) {
            cut(setup.proxy.as_ref(), &mut cut_handles, &mut cut_times);
        }
        if done.len() == n && !crew.finishing {
            crew.finish();
        }
        if crew.finishing && crew.live.is_empty() {
            break;
        }
        let progress = done.len();
        let (no, event) = crew
            .next_event(scale.hung_after, || format!("{progress} of {n} tasks done"))
            .await;
        match crew.handle(no, event) {
            Some(Event::Done(id)) => {
                if ids.contains(&id) {
                    done.insert(id);
                } else {
                    phantom.insert(id);
                }
            }
            Some(Event::Exited) if !crew.finishing => {
                crew.spawn(orders);
            }
            _ => {}
        }
    }
    end_cuts(setup.proxy.as_ref(), &mut cut_handles).await;

    // What the dead left behind comes back after the visibility timeout: the campaign's own
    // instance takes it, as one more worker that is never killed.
    let drain_path = setup.dir.join("drain.ledger");
    let mut drain = Ledger::create(&drain_path).expect("the drain ledger");
    let mut drained = 0;
    while let Some(reservation) = setup
        .direct
        .reserve(&setup.queue, setup.visibility * 2 + Duration::from_secs(1))
        .await
        .expect("reserve while draining")
    {
        drain.write(&Record::Done(reservation.task.id.clone()));
        setup
            .direct
            .ack(&reservation)
            .await
            .expect("ack while draining");
        drain.write(&Record::Acked(
            reservation.task.id.clone(),
            ledger::now_micros(),
        ));
        drained += 1;
    }
    let dead = match setup.direct.dead_letters(&setup.queue, 10_000).await {
        Ok(dead) => dead.len(),
        Err(err) if err.kind() == ErrorKind::Unsupported => 0,
        Err(err) => panic!("dead_letters: {err}"),
    };

    let window = setup.unconfirmed_acks.then_some(UNCONFIRMED_ACK_WINDOW);
    let mut report = account(&crew, setup.dir, &ids, drained, &cut_times, window);
    report.driver = setup.driver;
    report.workers_are = workers_are;
    report.workers = scale.workers;
    report.cuts = cut_handles.len();
    report.dead = dead;
    report.phantom += phantom.len();
    report.seed = scale.seed;
    report
}
