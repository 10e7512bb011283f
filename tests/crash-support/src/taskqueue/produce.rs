//! The producer campaign (see the [module docs](super)), its count of copies, and its report.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::Setup;
use super::worker::key;
use crate::crew::Crew;
use crate::cuts::{cut, end_cuts};
use crate::ledger::{self, Record};
use crate::pool::{Event, Orders, Point, Pool};

/// The figures of a producer campaign.
#[derive(Debug, Clone, Default)]
pub struct ProduceReport {
    /// The driver.
    pub driver: &'static str,
    /// `process` or `task`.
    pub workers_are: &'static str,
    /// Distinct keys enqueued.
    pub keys: usize,
    /// Producers at once.
    pub producers: usize,
    /// Kills, by point.
    pub kills: BTreeMap<String, usize>,
    /// Connection cuts.
    pub cuts: usize,
    /// Enqueues that failed and were retried, by kind.
    pub retries: BTreeMap<String, usize>,
    /// Tasks in the queue beyond one per key.
    pub copies: usize,
    /// Keys without a task.
    pub missing: usize,
    /// Keys whose enqueues answered an id other than the task's.
    pub other_ids: usize,
    /// The seed.
    pub seed: u64,
}

impl fmt::Display for ProduceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kills: usize = self.kills.values().sum();
        write!(
            f,
            "{} producers with idempotency keys ({} producers as {}): keys {}, kills {kills} {:?}, \
             cuts {}, retried enqueues {:?}, copies {}, missing {}, other ids {}, seed {}",
            self.driver,
            self.producers,
            self.workers_are,
            self.keys,
            self.kills,
            self.cuts,
            self.retries,
            self.copies,
            self.missing,
            self.other_ids,
            self.seed
        )
    }
}

impl ProduceReport {
    /// Fail unless there is exactly one task per key, with the id its enqueues answered, at
    /// least one producer was killed during an enqueue, and there were `cuts` cuts. (Fast
    /// producers, those of an in-process queue, can run out of keys before every planned kill;
    /// the report gives the kills made.)
    ///
    /// # Panics
    /// When one of those does not hold.
    pub fn assert_holds(&self, cuts: Option<usize>) {
        assert_eq!(self.copies, 0, "copies: {self}");
        assert_eq!(self.missing, 0, "missing: {self}");
        assert_eq!(self.other_ids, 0, "other ids: {self}");
        assert!(
            self.kills.get("call").is_some_and(|n| *n > 0),
            "no kill during an enqueue: {self}"
        );
        if let Some(cuts) = cuts {
            assert_eq!(self.cuts, cuts, "cuts: {self}");
        }
    }
}

/// Run a producer campaign (see the [module docs](super)): `scale.tasks / 4` keys,
/// `scale.workers` producers, `scale.kills / 2` kills and `scale.cuts / 2` cuts.
///
/// # Panics
/// As [`consume_campaign`](super::consume_campaign).
pub async fn produce_campaign<P: Pool>(setup: &Setup<'_>, pool: &mut P) -> ProduceReport {
    let scale = setup.scale;
    let keys = (scale.tasks / 4).max(1) as u64;
    let producers = scale.workers.min(keys as usize) as u64;
    let (kills, cuts) = (scale.kills / 2, scale.cuts / 2);
    let workers_are = pool.kind();
    let mut crew = Crew::new(pool, scale.seed);
    let ledger_of = |no: usize| setup.dir.join(format!("producer-{no}.ledger"));
    let orders = |no: usize, from: u64, to: u64| Orders {
        role: "produce".into(),
        ledger: ledger_of(no),
        target: setup.target.clone(),
        queue: setup.queue.clone(),
        from,
        to,
        params: String::new(),
    };
    // Which key range each producer works on.
    let mut ranges: HashMap<usize, (u64, u64)> = HashMap::new();
    for p in 0..producers {
        let range = (p * keys / producers, (p + 1) * keys / producers);
        let no = crew.spawn(|no| orders(no, range.0, range.1));
        ranges.insert(no, range);
    }
    let kill_due = |k: usize| (k + 1) * keys as usize / (kills + 1);
    let cut_due = |c: usize| (2 * c + 1) * keys as usize / (2 * cuts + 2);
    let mut enqueued: HashSet<u64> = HashSet::new();
    let (mut armed, mut cut_handles, mut cut_times) = (0, Vec::new(), Vec::new());
    loop {
        while armed < kills && enqueued.len() >= kill_due(armed) {
            // Producers die during an enqueue or anywhere.
            if !crew.arm([Point::Call, Point::Anywhere][armed % 2]) {
                break;
            }
            armed += 1;
        }
        if cut_handles.len() < cuts && enqueued.len() >= cut_due(cut_handles.len()) {
            cut(setup.proxy.as_ref(), &mut cut_handles, &mut cut_times);
        }
        // Producers on an in-process queue may run out of keys before every kill is armed.
        if enqueued.len() as u64 == keys && !crew.finishing {
            crew.finish();
        }
        if crew.finishing && crew.live.is_empty() {
            break;
        }
        let progress = enqueued.len();
        let (no, event) = crew
            .next_event(scale.hung_after, || {
                format!("{progress} of {keys} keys enqueued")
            })
            .await;
        match crew.handle(no, event) {
            Some(Event::Enqueued(n)) => {
                enqueued.insert(n);
            }
            Some(Event::Exited) if !crew.finishing => {
                // Its successor retries from the first key it did not record.
                let (from, to) = ranges[&no];
                let recorded: HashSet<String> = ledger::read(&ledger_of(no))
                    .into_iter()
                    .filter_map(|record| match record {
                        Record::Enqueued(key, _) => Some(key),
                        _ => None,
                    })
                    .collect();
                // What it recorded counts, even when it died before saying so.
                enqueued.extend((from..to).filter(|n| recorded.contains(&key(*n))));
                let resume = (from..to)
                    .find(|n| !recorded.contains(&key(*n)))
                    .unwrap_or(to);
                let successor = crew.spawn(|s| orders(s, resume, to));
                ranges.insert(successor, (resume, to));
            }
            _ => {}
        }
    }
    end_cuts(setup.proxy.as_ref(), &mut cut_handles).await;
    let mut report = ProduceReport {
        driver: setup.driver,
        workers_are,
        keys: keys as usize,
        producers: producers as usize,
        kills: crew.kills_by_point(),
        cuts: cut_handles.len(),
        seed: scale.seed,
        ..ProduceReport::default()
    };
    let ledgers: Vec<PathBuf> = (0..crew.next).map(ledger_of).collect();
    count_copies(setup, keys, &ledgers, &mut report).await;
    report
}

/// Drain the queue and hold it against every enqueue's answer in the producers' `ledgers`:
/// copies, keys without a task, keys answered another id, and the retried enqueues.
async fn count_copies(
    setup: &Setup<'_>,
    keys: u64,
    ledgers: &[PathBuf],
    report: &mut ProduceReport,
) {
    // Every enqueue's answer, from the ledgers.
    let mut answered: HashMap<String, HashSet<String>> = HashMap::new();
    for path in ledgers {
        for record in ledger::read(path) {
            match record {
                Record::Enqueued(key, id) => {
                    answered.entry(key).or_default().insert(id);
                }
                Record::Error(_, kind) => *report.retries.entry(kind).or_default() += 1,
                _ => {}
            }
        }
    }
    // What is in the queue.
    let mut tasks: HashMap<String, Vec<String>> = HashMap::new();
    while let Some(reservation) = setup
        .direct
        .reserve(&setup.queue, Duration::from_secs(1))
        .await
        .expect("reserve while draining")
    {
        let key = String::from_utf8_lossy(&reservation.task.payload).into_owned();
        tasks
            .entry(key)
            .or_default()
            .push(reservation.task.id.clone());
        setup
            .direct
            .ack(&reservation)
            .await
            .expect("ack while draining");
    }
    for n in 0..keys {
        let key = key(n);
        match tasks.get(&key).map(Vec::as_slice) {
            None | Some([]) => report.missing += 1,
            Some(ids) => {
                report.copies += ids.len() - 1;
                let answers = answered.get(&key).cloned().unwrap_or_default();
                if answers.iter().any(|id| *id != ids[0]) {
                    report.other_ids += 1;
                    eprintln!("{key}: tasks {ids:?}, enqueues answered {answers:?}");
                }
            }
        }
    }
}
