//! The fence campaign's run (see the [module docs](super)) and its report.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use super::check::{Figures, Restart, check, grants_of};
use super::resource::Resource;
use super::worker::Params;
use super::{FenceScale, Setup};
use crate::crew::Crew;
use crate::cuts::{cut, end_cuts};
use crate::ledger::{self, Record};
use crate::pool::{Event, Orders, Point, ProcessPool};

/// How much longer than the ttl a frozen holder stays frozen at least: the store's expiry
/// comes a ttl after the grant, and the campaign hears of the grant a little after it.
const PAUSE_PAST_TTL: Duration = Duration::from_millis(100);
/// How often the campaign looks at its clocks while no worker speaks.
const TICK: Duration = Duration::from_millis(20);
/// Kill points, in turn: during `acquire_wait`, holding before the write, after the write
/// before the release, anywhere.
const KILL_POINTS: [Point; 4] = [Point::Call, Point::Work, Point::Unacked, Point::Anywhere];

/// The figures of a fence campaign.
#[derive(Debug, Clone, Default)]
pub struct FenceReport {
    /// The driver.
    pub driver: &'static str,
    /// Workers at once.
    pub workers: usize,
    /// Workers started in all.
    pub started: usize,
    /// The leases' ttl.
    pub ttl: Duration,
    /// Kills, by point.
    pub kills: BTreeMap<String, usize>,
    /// Holders frozen and continued.
    pub pauses: usize,
    /// The longest freeze.
    pub longest_pause: Duration,
    /// Connection cuts.
    pub cuts: usize,
    /// Restarts of the lock's server.
    pub restarts: usize,
    /// What the ledgers and the resource's log show.
    pub figures: Figures,
    /// Refreshes that answered `lost` (`Conflict`): the holder learnt it had lost its lease.
    pub refreshes_lost: usize,
    /// Failed operations the workers retried or went past, by operation and kind.
    pub errors: BTreeMap<String, usize>,
    /// The fence the resource's row holds at the end, and the greatest fence its log accepted.
    pub row_fence: (u64, u64),
    /// The seed.
    pub seed: u64,
}

impl fmt::Display for FenceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kills: usize = self.kills.values().sum();
        let g = &self.figures;
        write!(
            f,
            "{} fence campaign ({} worker processes, {} started, ttl {:?}): grants {}, takeovers {}, \
             fence gaps {}; kills {kills} {:?}, pauses {} (longest {:?}), cuts {}, server restarts {}; \
             writes {} (accepted {}, refused as stale {}, of which after a pause {}; accepted after a \
             pause {}; answer lost {}); refreshes that found the lease lost {}; \
             INVARIANTS: accepted out of fence order {}, two holders both accepted in reverse order {}, \
             two holders at once {}, refused while certainly holding {}, fence regressions {}, \
             duplicate fences {}, writes without a grant {}; row fence {} (log's greatest accepted {}); \
             retried errors {:?}; seed {}",
            self.driver,
            self.workers,
            self.started,
            self.ttl,
            g.grants,
            g.takeovers,
            g.fence_gaps,
            self.kills,
            self.pauses,
            self.longest_pause,
            self.cuts,
            self.restarts,
            g.writes,
            g.accepted,
            g.refused,
            g.refused_after_pause,
            g.accepted_after_pause,
            g.unanswered,
            self.refreshes_lost,
            g.out_of_order,
            g.two_holders_accepted,
            g.overlapping_holders,
            g.refused_while_holding,
            g.fence_regressions,
            g.duplicate_fences,
            g.writes_without_grant,
            self.row_fence.0,
            self.row_fence.1,
            self.errors,
            self.seed
        )
    }
}

impl FenceReport {
    /// Fail unless every invariant holds, every frozen holder's late write was refused, and
    /// the run was as large as asked (`cuts`, `restarts`: whether the campaign could cut and
    /// restart).
    ///
    /// # Panics
    /// When one of those does not hold.
    pub fn assert_holds(&self, scale: &FenceScale, cuts: bool, restarts: bool) {
        let g = &self.figures;
        assert_eq!(
            g.violations(),
            [],
            "the lock failed: {self}\nfirst violations:\n{}",
            g.examples.join("\n")
        );
        assert_eq!(
            self.row_fence.0, self.row_fence.1,
            "row and log disagree: {self}"
        );
        assert!(g.grants >= scale.grants, "grants: {self}");
        assert_eq!(
            self.kills.values().sum::<usize>(),
            scale.kills,
            "kills: {self}"
        );
        assert_eq!(self.pauses, scale.pauses, "pauses: {self}");
        assert_eq!(
            g.paused, scale.pauses,
            "frozen grants in the ledgers: {self}"
        );
        assert_eq!(
            g.refused_after_pause, self.pauses,
            "every frozen holder's late write must be refused: {self}"
        );
        if self.pauses > 0 {
            assert!(
                g.refused > 0,
                "no write refused as stale after a pause: {self}"
            );
        }
        if cuts {
            assert_eq!(self.cuts, scale.cuts, "cuts: {self}");
        }
        if restarts {
            assert_eq!(self.restarts, scale.restarts, "restarts: {self}");
        }
    }
}

/// A holder frozen by the campaign.
struct Frozen {
    no: usize,
    fence: u64,
    since: Instant,
}

/// Run a fence campaign (see the [module docs](super)) on `pool`'s worker processes.
///
/// # Panics
/// When the run hangs (no grant for `hung_after`, a freeze that no newer accepted write ends),
/// a worker ends on its own, or the resource cannot be set up or read. The report's
/// [`FenceReport::assert_holds`] checks the figures.
#[allow(clippy::too_many_lines)] // one loop that reads as the campaign's timeline
pub async fn fence_campaign(setup: &mut Setup<'_>, pool: &mut ProcessPool) -> FenceReport {
    let scale = setup.scale;
    let namespace = format!(
        "{}_{}_{}",
        setup.driver,
        std::process::id(),
        ledger::now_micros()
    );
    let resource = Resource::create(&setup.resource_url, &namespace)
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let params = Params {
        ttl: setup.ttl,
        resource_url: setup.resource_url.clone(),
        namespace,
    }
    .encode();
    let orders = |no: usize| Orders {
        role: "fence".into(),
        ledger: setup.dir.join(format!("worker-{no}.ledger")),
        target: setup.target.clone(),
        queue: setup.lock.clone(),
        from: no as u64,
        to: 0,
        params: params.clone(),
    };
    let mut crew = Crew::new(pool, scale.seed);
    for _ in 0..scale.workers {
        crew.spawn(orders);
    }
    let n = scale.grants;
    let kill_due = |k: usize| (k + 1) * n / (scale.kills + 1);
    let pause_due = |p: usize| (p + 1) * n / (scale.pauses + 1);
    let cut_due = |c: usize| (2 * c + 1) * n / (2 * scale.cuts + 2);
    let restart_due = |r: usize| (4 * r + 3) * n / (4 * scale.restarts + 4);
    let can_restart = setup.restart.is_some();

    let (mut grants, mut newest_accepted) = (0, 0);
    let mut holding: HashMap<usize, u64> = HashMap::new();
    let (mut kills_armed, mut pauses_armed, mut pause_pending) = (0, 0, false);
    let mut frozen: Option<Frozen> = None;
    let mut frozen_fences: HashMap<usize, HashSet<u64>> = HashMap::new();
    let (mut pauses, mut longest_pause) = (0, Duration::ZERO);
    let (mut cut_handles, mut cut_times) = (Vec::new(), Vec::new());
    let mut restarts_at: Vec<Restart> = Vec::new();
    let mut progress = Instant::now();
    let state = |grants: usize, crew: &Crew<'_, ProcessPool>| {
        format!("{grants} of {n} grants seen; {}", crew.describe())
    };
    loop {
        while kills_armed < scale.kills && grants >= kill_due(kills_armed) {
            if !crew.arm(KILL_POINTS[kills_armed % KILL_POINTS.len()]) {
                break;
            }
            kills_armed += 1;
        }
        // One pause at a time: armed, then frozen, then continued.
        if !pause_pending
            && frozen.is_none()
            && pauses_armed < scale.pauses
            && grants >= pause_due(pauses_armed)
            && crew.arm(Point::Pause)
        {
            pauses_armed += 1;
            pause_pending = true;
        }
        if cut_handles.len() < scale.cuts && grants >= cut_due(cut_handles.len()) {
            cut(setup.proxy.as_ref(), &mut cut_handles, &mut cut_times);
        }
        if let Some(restart) = setup.restart.as_mut()
            && restarts_at.len() < scale.restarts
            && grants >= restart_due(restarts_at.len())
        {
            // Every lease granted before `done` may be lost from `began` on.
            let began = ledger::now_micros();
            tokio::task::block_in_place(restart);
            restarts_at.push(Restart {
                began,
                done: ledger::now_micros(),
            });
        }
        if let Some(held) = &frozen {
            let elapsed = held.since.elapsed();
            if elapsed >= setup.ttl + PAUSE_PAST_TTL && newest_accepted > held.fence {
                crew.resume(held.no);
                crew.disarm(held.no);
                pauses += 1;
                longest_pause = longest_pause.max(elapsed);
                frozen = None;
            } else {
                assert!(
                    elapsed < scale.hung_after,
                    "worker {} frozen with fence {} for {elapsed:?}: no newer fence was accepted \
                     (newest {newest_accepted}); {}",
                    held.no,
                    held.fence,
                    state(grants, &crew)
                );
            }
        }
        if grants >= n && !crew.finishing && !pause_pending && frozen.is_none() {
            crew.finish();
        }
        if crew.finishing && crew.live.is_empty() {
            break;
        }
        assert!(
            progress.elapsed() < scale.hung_after,
            "the fence campaign made no progress for {:?}: {}",
            scale.hung_after,
            state(grants, &crew)
        );
        let Some((no, event)) = crew.next_event_within(TICK).await else {
            continue;
        };
        match crew.handle(no, event) {
            Some(Event::Granted(fence)) => {
                grants += 1;
                holding.insert(no, fence);
                progress = Instant::now();
            }
            Some(Event::Wrote(fence, true)) => newest_accepted = newest_accepted.max(fence),
            Some(Event::Holding) if crew.armed_at(no) == Some(Point::Pause) => {
                let fence = holding[&no];
                crew.pause(no);
                frozen_fences.entry(no).or_default().insert(fence);
                frozen = Some(Frozen {
                    no,
                    fence,
                    since: Instant::now(),
                });
                pause_pending = false;
            }
            Some(Event::Exited) if !crew.finishing => {
                crew.spawn(orders);
            }
            _ => {}
        }
    }
    end_cuts(setup.proxy.as_ref(), &mut cut_handles).await;

    let mut all = Vec::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    let mut refreshes_lost = 0;
    for no in 0..crew.next {
        let records = ledger::read(&setup.dir.join(format!("worker-{no}.ledger")));
        for record in &records {
            match record {
                Record::Error(op, kind) => *errors.entry(format!("{op} {kind}")).or_default() += 1,
                Record::Refreshed { outcome, .. } if outcome == "lost" => refreshes_lost += 1,
                Record::Refreshed { outcome, .. } if outcome != "ok" => {
                    *errors.entry(format!("refresh {outcome}")).or_default() += 1;
                }
                Record::Released { outcome, .. } if outcome != "true" && outcome != "false" => {
                    *errors.entry(format!("release {outcome}")).or_default() += 1;
                }
                _ => {}
            }
        }
        let frozen = frozen_fences.remove(&no).unwrap_or_default();
        all.extend(grants_of(no as u64, &records, &frozen));
    }
    let log = resource.log().await.unwrap_or_else(|err| panic!("{err}"));
    let row = resource.fence().await.unwrap_or_else(|err| panic!("{err}"));
    let greatest = log
        .iter()
        .filter(|entry| entry.accepted)
        .map(|entry| entry.fence)
        .max()
        .unwrap_or(0);
    let figures = check(&all, &log, setup.ttl, &restarts_at);
    if let Err(err) = resource.clean().await {
        eprintln!("{err}");
    }
    FenceReport {
        driver: setup.driver,
        workers: scale.workers,
        started: crew.next,
        ttl: setup.ttl,
        kills: crew.kills_by_point(),
        pauses,
        longest_pause,
        cuts: cut_handles.len(),
        restarts: if can_restart { restarts_at.len() } else { 0 },
        figures,
        refreshes_lost,
        errors,
        row_fence: (row, greatest),
        seed: scale.seed,
    }
}
