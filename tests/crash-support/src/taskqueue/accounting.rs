//! The accounting of a consumer campaign: every ledger read once, every task found done, and
//! every duplicate `done` matched with what explains it (see the [module docs](super)).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use super::ConsumeReport;
use crate::crew::Crew;
use crate::cuts::CUT_FOR;
use crate::ledger::{self, Record};
use crate::pool::Pool;

/// Read every ledger and count.
// One pass over every ledger, in the order the module docs explain.
#[allow(clippy::too_many_lines)]
pub(super) fn account<P: Pool>(
    crew: &Crew<'_, P>,
    dir: &Path,
    ids: &HashSet<String>,
    drained: usize,
    cuts: &[u64],
    unconfirmed: Option<Duration>,
) -> ConsumeReport {
    let mut done: HashMap<String, usize> = HashMap::new();
    let mut by_lost_ack: HashMap<String, usize> = HashMap::new();
    let mut acked_at: HashMap<String, Vec<u64>> = HashMap::new();
    let mut by_kill: HashMap<String, usize> = HashMap::new();
    let mut by_ack: HashMap<String, usize> = HashMap::new();
    let mut report = ConsumeReport {
        tasks: ids.len(),
        started: crew.next,
        kills: crew.kills_by_point(),
        drained,
        ..ConsumeReport::default()
    };
    let ledgers = (0..crew.next)
        .map(|no| {
            (
                dir.join(format!("worker-{no}.ledger")),
                crew.killed_at.get(&no).copied(),
            )
        })
        .chain([(dir.join("drain.ledger"), None)]);
    for (path, killed_at) in ledgers {
        let killed = killed_at.is_some();
        let mut open: Option<String> = None;
        for record in ledger::read(&path) {
            match record {
                Record::Done(id) => {
                    if let Some(unsettled) = open.replace(id.clone()) {
                        // Done, then done again without a word about the first one's ack.
                        report.unexplained += 1;
                        eprintln!("{}: {unsettled} done and never settled", path.display());
                    }
                    *done.entry(id).or_default() += 1;
                }
                Record::Acked(id, at) => {
                    open = None;
                    // An unconfirmed ack that answered `Ok` during a cut, or right before
                    // a cut or the kill of its worker: it may never have left the machine.
                    if let Some(window) = unconfirmed {
                        let (window, cut_for) =
                            (window.as_micros() as u64, CUT_FOR.as_micros() as u64);
                        let killed_soon = |kill: u64| kill >= at && kill - at <= window;
                        let in_cut = |cut: u64| cut <= at + window && at <= cut + cut_for + window;
                        if killed_at.is_some_and(killed_soon) || cuts.iter().copied().any(in_cut) {
                            *by_lost_ack.entry(id.clone()).or_default() += 1;
                        }
                    }
                    acked_at.entry(id).or_default().push(at);
                }
                Record::AckFailed(id, kind) => {
                    open = None;
                    *by_ack.entry(id).or_default() += 1;
                    *report.failed_acks.entry(kind).or_default() += 1;
                }
                Record::Error(op, kind) => {
                    *report.errors.entry(format!("{op} {kind}")).or_default() += 1;
                }
                _ => {}
            }
        }
        if let Some(id) = open {
            if killed {
                *by_kill.entry(id).or_default() += 1;
            } else {
                report.unexplained += 1;
                eprintln!(
                    "{}: {id} done, never acked, by a worker nobody killed",
                    path.display()
                );
            }
        }
    }
    report.lost = ids.iter().filter(|id| !done.contains_key(*id)).count();
    for (id, count) in &done {
        if !ids.contains(id) {
            report.phantom += 1;
        }
        let extra = count - 1;
        report.duplicated += extra;
        let kill = by_kill.get(id).copied().unwrap_or(0).min(extra);
        let ack = by_ack.get(id).copied().unwrap_or(0).min(extra - kill);
        let lost = by_lost_ack
            .get(id)
            .copied()
            .unwrap_or(0)
            .min(extra - kill - ack);
        report.explained_by_kill += kill;
        report.explained_by_failed_ack += ack;
        report.explained_by_lost_ack += lost;
        if extra > kill + ack + lost {
            report.unexplained += extra - kill - ack - lost;
            // When its acks answered, in ms from the nearest cut's start (for the diagnosis).
            let from_cut: Vec<i64> = acked_at
                .get(id)
                .into_iter()
                .flatten()
                .map(|at| {
                    let at = (*at).cast_signed();
                    cuts.iter()
                        .map(|c| (at - (*c).cast_signed()) / 1000)
                        .min_by_key(|d| d.abs())
                        .unwrap_or(i64::MAX)
                })
                .collect();
            eprintln!(
                "task {id}: done {count} times; {kill} kills, {ack} failed acks and {lost} lost acks \
                 explain it; its acks answered at {from_cut:?} ms from the nearest cut"
            );
        }
    }
    report
}
