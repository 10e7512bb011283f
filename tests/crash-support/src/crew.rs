//! The campaign's side of its workers: which are live, which are armed and where, which were
//! killed, when and where. Shared by the task queue campaigns and the fence campaign.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use crate::Rng;
use crate::ledger;
use crate::pool::{Event, Orders, Point, Pool, ProcessPool};

/// The live state of a campaign's workers: who is armed, who was killed, and where.
pub(crate) struct Crew<'p, P: Pool> {
    pool: &'p mut P,
    /// Workers started and not yet exited.
    pub(crate) live: HashSet<usize>,
    armed: HashMap<usize, Point>,
    killed: HashMap<usize, Point>,
    /// When each killed worker was killed, in µs (the ledgers' clock).
    pub(crate) killed_at: HashMap<usize, u64>,
    /// The number the next worker gets: workers `0..next` were started.
    pub(crate) next: usize,
    rng: Rng,
    /// The work is done: armed workers were killed, the others told to stop.
    pub(crate) finishing: bool,
}

impl<'p, P: Pool> Crew<'p, P> {
    /// No workers yet; kill choices drawn from `seed`.
    pub(crate) fn new(pool: &'p mut P, seed: u64) -> Self {
        Crew {
            pool,
            live: HashSet::new(),
            armed: HashMap::new(),
            killed: HashMap::new(),
            killed_at: HashMap::new(),
            next: 0,
            rng: Rng::new(seed),
            finishing: false,
        }
    }

    /// Start the next worker with the orders made for its number; its number.
    pub(crate) fn spawn(&mut self, orders: impl FnOnce(usize) -> Orders) -> usize {
        let no = self.next;
        self.next += 1;
        self.pool.spawn(no, &orders(no));
        self.live.insert(no);
        no
    }

    /// Arm a random live, unarmed worker at `point`; false when there is none.
    pub(crate) fn arm(&mut self, point: Point) -> bool {
        let mut free: Vec<usize> = self
            .live
            .iter()
            .copied()
            .filter(|no| !self.armed.contains_key(no) && !self.killed.contains_key(no))
            .collect();
        if free.is_empty() {
            return false;
        }
        free.sort_unstable();
        let no = free[self.rng.below(free.len() as u64) as usize];
        self.pool.arm(no, point);
        self.armed.insert(no, point);
        true
    }

    /// Kill worker `no`, unless it is gone or already killed, and note where and when.
    fn kill(&mut self, no: usize, point: Point) {
        if self.live.contains(&no) && !self.killed.contains_key(&no) {
            self.armed.remove(&no);
            self.pool.kill(no);
            self.killed.insert(no, point);
            self.killed_at.insert(no, ledger::now_micros());
        }
    }

    /// React to a worker's event; returns it when the caller has more to do with it.
    pub(crate) fn handle(&mut self, no: usize, event: Event) -> Option<Event> {
        match event {
            Event::Parked | Event::Calling | Event::KillNow => {
                if let Some(&point) = self.armed.get(&no) {
                    self.kill(no, point);
                }
                None
            }
            Event::Armed => {
                let tx = self.pool.sender();
                let delay = Duration::from_millis(self.rng.below(30));
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let _ = tx.send((no, Event::KillNow));
                });
                None
            }
            Event::Exited => {
                self.live.remove(&no);
                let well = self.pool.reap(no);
                assert!(
                    self.killed.contains_key(&no) || (self.finishing && well),
                    "worker {no} ended on its own before the campaign stopped it (see its stderr above)"
                );
                Some(Event::Exited)
            }
            other => Some(other),
        }
    }

    /// No more work: kill the armed ones where they are, stop the rest.
    pub(crate) fn finish(&mut self) {
        self.finishing = true;
        let armed: Vec<usize> = self.armed.keys().copied().collect();
        for no in armed {
            self.kill(no, Point::Idle);
        }
        let live: Vec<usize> = self.live.iter().copied().collect();
        for no in live {
            if !self.killed.contains_key(&no) {
                self.pool.stop(no);
            }
        }
    }

    /// The next event of a worker.
    ///
    /// # Panics
    /// When none comes for `hung_after` (the run hung); `state` says how far it got.
    pub(crate) async fn next_event(
        &mut self,
        hung_after: Duration,
        state: impl Fn() -> String,
    ) -> (usize, Event) {
        match tokio::time::timeout(hung_after, self.pool.events().recv()).await {
            Ok(Some(event)) => event,
            Ok(None) => unreachable!("the pool holds a sender"),
            Err(elapsed) => panic!(
                "the campaign made no progress ({elapsed}) for {hung_after:?}: {}; live workers {:?}, armed {:?}",
                state(),
                self.live,
                self.armed
            ),
        }
    }

    /// Where worker `no` is armed, if it is.
    pub(crate) fn armed_at(&self, no: usize) -> Option<Point> {
        self.armed.get(&no).copied()
    }

    /// Worker `no` is armed no more (it reached a point that is not a kill).
    pub(crate) fn disarm(&mut self, no: usize) {
        self.armed.remove(&no);
    }

    /// The next event of a worker, if one comes within `limit` (the caller watches for a hung
    /// run itself).
    pub(crate) async fn next_event_within(&mut self, limit: Duration) -> Option<(usize, Event)> {
        match tokio::time::timeout(limit, self.pool.events().recv()).await {
            Ok(Some(event)) => Some(event),
            Ok(None) => unreachable!("the pool holds a sender"),
            Err(_) => None,
        }
    }

    /// Live workers, armed ones by point, for a hung run's message.
    pub(crate) fn describe(&self) -> String {
        format!("live workers {:?}, armed {:?}", self.live, self.armed)
    }

    /// How many workers were killed at each point, for the report.
    pub(crate) fn kills_by_point(&self) -> BTreeMap<String, usize> {
        let mut by = BTreeMap::new();
        for point in self.killed.values() {
            *by.entry(point.to_string()).or_default() += 1;
        }
        by
    }
}

impl Crew<'_, ProcessPool> {
    /// Freeze worker `no` (`SIGSTOP`).
    pub(crate) fn pause(&mut self, no: usize) {
        self.pool.pause(no);
    }

    /// Continue worker `no` (`SIGCONT`) and tell it to go on.
    pub(crate) fn resume(&mut self, no: usize) {
        self.pool.resume(no);
    }
}
