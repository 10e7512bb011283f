//! Obligations under concurrency and on order: many consumers lose nothing and never share a
//! task; FIFO where declared.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{FIFO, Reservation, TaskQueue};

use super::TaskQueueSettings;
use super::support::{SLACK, ensure_redelivery, expect_none, lock, put, queue_name, take};
use crate::harness::Instance;
use crate::{call, ensure};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

/// What the consumers of the concurrency obligation saw, shared between them.
#[derive(Default)]
struct Ledger {
    /// Task id → when the consumer holding it received it.
    holders: HashMap<String, Instant>,
    /// Task id → successful acks.
    acked: HashMap<String, u32>,
}

/// Take and ack tasks until every task is acked or the queue stays empty for twice the
/// visibility timeout.
async fn consume<T: TaskQueue + 'static>(
    q: crate::harness::Shared<T>,
    name: Arc<str>,
    expected: Arc<HashMap<String, Bytes>>,
    ledger: Arc<Mutex<Ledger>>,
    vt: Duration,
) -> Result<(), String> {
    loop {
        if lock(&ledger).acked.len() >= expected.len() {
            return Ok(());
        }
        let reserved = q
            .reserve(&name, vt * 2)
            .await
            .map_err(|e| format!("reserve failed: {e}"))?;
        let Some(r) = reserved else {
            return Ok(());
        };
        let received = Instant::now();
        match expected.get(&r.task.id) {
            None => return Err(format!("reserve delivered unknown task {:?}", r.task.id)),
            Some(payload) if *payload != r.task.payload => {
                return Err(format!(
                    "task {:?} came back with another payload",
                    r.task.id
                ));
            }
            Some(_) => {}
        }
        if let Some(since) = lock(&ledger).holders.insert(r.task.id.clone(), received) {
            // A redelivery after the visibility timeout is legitimate; an overlap is not.
            let held = received.saturating_duration_since(since);
            ensure!(
                held >= vt / 2,
                "task {:?} was held by two consumers at once: the other one had received it {held:?} earlier, within the visibility timeout ({vt:?})",
                r.task.id
            );
        }
        // The work: lets another consumer run while this one holds the task.
        tokio::task::yield_now().await;
        let outcome = q.ack(&r).await;
        let mut book = lock(&ledger);
        if book.holders.get(&r.task.id) == Some(&received) {
            book.holders.remove(&r.task.id);
        }
        match outcome {
            Ok(()) => *book.acked.entry(r.task.id).or_default() += 1,
            // Held past the visibility timeout (a slow machine) and redelivered: someone else
            // acks it.
            Err(e) if e.kind() == ErrorKind::Conflict => {}
            Err(e) => return Err(format!("ack of task {:?} failed: {e}", r.task.id)),
        }
    }
}

pub(super) async fn concurrent_consumers_lose_nothing_and_never_share_a_task<
    T: TaskQueueProvider,
>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    const PRODUCERS: u32 = 4;
    const PER_PRODUCER: u32 = 50;
    const CONSUMER_PAIRS: usize = 4;
    let vt = i.request.visibility_timeout;
    let name: Arc<str> = queue_name(&i.request, "concurrent").into();
    // Producers on several threads, each with concurrent enqueues.
    let mut producers = Vec::new();
    for p in 0..PRODUCERS {
        let (q, name) = (i.shared(), Arc::clone(&name));
        producers.push(tokio::spawn(async move {
            let enqueues = (0..PER_PRODUCER).map(|n| {
                let (q, name) = (&q, &name);
                async move {
                    let payload = Bytes::from(format!("{p}-{n}"));
                    let id = put(&**q, name, payload.clone()).await?;
                    Ok::<_, String>((id, payload))
                }
            });
            futures_util::future::try_join_all(enqueues).await
        }));
    }
    let mut expected = HashMap::new();
    for producer in producers {
        for (id, payload) in producer
            .await
            .map_err(|e| format!("a producer panicked: {e}"))??
        {
            ensure!(
                expected.insert(id.clone(), payload).is_none(),
                "enqueue returned id {id:?} twice"
            );
        }
    }
    let expected = Arc::new(expected);
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    // 8 consumers: pairs on several threads, each pair interleaving within its task.
    let mut consumers = Vec::new();
    for _ in 0..CONSUMER_PAIRS {
        let consumer = || {
            consume(
                i.shared(),
                Arc::clone(&name),
                Arc::clone(&expected),
                Arc::clone(&ledger),
                vt,
            )
        };
        consumers.push(tokio::spawn(futures_util::future::try_join(
            consumer(),
            consumer(),
        )));
    }
    for consumer in consumers {
        consumer
            .await
            .map_err(|e| format!("a consumer panicked: {e}"))??;
    }
    verify_every_task_acked_once(&expected, &lock(&ledger).acked)?;
    expect_none(
        &*i.driver,
        &name,
        vt + vt / 2,
        "after every task was acked the queue must be empty",
    )
    .await
}

fn verify_every_task_acked_once(
    expected: &HashMap<String, Bytes>,
    acked: &HashMap<String, u32>,
) -> Result<(), String> {
    let mut lost: Vec<&String> = expected
        .keys()
        .filter(|id| !acked.contains_key(*id))
        .collect();
    lost.sort();
    ensure!(
        lost.is_empty(),
        "{} of {} tasks were never delivered (lost), e.g. {:?}",
        lost.len(),
        expected.len(),
        &lost[..lost.len().min(5)]
    );
    let twice: Vec<(&String, &u32)> = acked.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(
        twice.is_empty(),
        "tasks were acked successfully more than once (a stale receipt was accepted): {twice:?}"
    );
    Ok(())
}

pub(super) async fn fifo_order_where_declared<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "order");
    let mut enqueued = Vec::new();
    for n in 0..20 {
        enqueued.push(put(q, &name, Bytes::from(format!("task {n}"))).await?);
    }
    let mut delivered = Vec::new();
    for n in 0..enqueued.len() {
        let r = take(q, &name, SLACK, &format!("delivery {n} of 20 tasks")).await?;
        call!("ack", q.ack(&r));
        delivered.push(r.task.id);
    }
    if i.declares(FIFO) {
        if let Some(at) = enqueued.iter().zip(&delivered).position(|(e, d)| e != d) {
            return Err(format!(
                "declared `fifo`, but delivery {at} was task {:?}, enqueued as number {:?}; expected {:?}",
                delivered[at],
                enqueued.iter().position(|id| *id == delivered[at]),
                enqueued[at]
            ));
        }
    } else {
        let mut sorted = delivered.clone();
        sorted.sort();
        sorted.dedup();
        let mut all = enqueued.clone();
        all.sort();
        ensure!(
            sorted == all,
            "20 enqueued tasks were not each delivered once: delivered {delivered:?}"
        );
    }
    Ok(())
}

/// How many settles of one receipt race in each round.
const RACERS: usize = 8;

/// `RACERS` settles of `r` at once, from tasks on several threads: `nacks` of them are nacks,
/// the rest acks. Returns which succeeded (`true` for a nack) and fails on anything but one
/// success and `Conflict` for the rest.
async fn race_settles<T: TaskQueueProvider>(
    i: &Instance<T>,
    r: &Reservation,
    nacks: usize,
) -> Result<bool, String> {
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (q, r) = (i.shared(), r.clone());
            let nack = n % 2 == 1 && n / 2 < nacks;
            tokio::spawn(async move {
                let outcome = if nack {
                    q.nack(&r, None).await
                } else {
                    q.ack(&r).await
                };
                (nack, outcome)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for racer in racers {
        let (nack, outcome) = racer
            .await
            .map_err(|e| format!("a racing ack or nack panicked: {e}"))?;
        let op = if nack { "nack" } else { "ack" };
        match outcome {
            Ok(()) => winners.push(nack),
            Err(e) if e.kind() == ErrorKind::Conflict => {}
            Err(e) => {
                return Err(format!(
                    "a racing {op} of one receipt must succeed or answer Conflict, it failed: {e}"
                ));
            }
        }
    }
    ensure!(
        winners.len() == 1,
        "{RACERS} racing settles of one receipt ({nacks} nacks, the rest acks) had {} \
         successes: exactly one may win, the others answer Conflict",
        winners.len()
    );
    Ok(winners[0])
}

pub(super) async fn concurrent_settles_of_one_receipt_have_one_winner<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    const ROUNDS: usize = 4;
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    // Acks only: one wins, the task is gone.
    let acked = queue_name(&i.request, "settle-acks");
    for _ in 0..ROUNDS {
        put(q, &acked, Bytes::from_static(b"acked once")).await?;
        let r = take(q, &acked, SLACK, "reserve of an enqueued task").await?;
        race_settles(i, &r, 0).await?;
    }
    // Acks and nacks: one wins, and the task's fate is the winner's.
    let mut nacked = Vec::new();
    let mut gone = Vec::new();
    for round in 0..ROUNDS {
        let name = queue_name(&i.request, &format!("settle-mixed-{round}"));
        put(q, &name, Bytes::from_static(b"acked or nacked")).await?;
        let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        if race_settles(i, &r, RACERS / 2).await? {
            nacked.push((name, r));
        } else {
            gone.push(name);
        }
    }
    for (name, first) in &nacked {
        let how = "after a nack won a race with acks of its receipt";
        let again = take(
            q,
            name,
            SLACK,
            &format!("{how}, the task must come back; reserve"),
        )
        .await?;
        ensure_redelivery(first, &again, 2, how)?;
        call!("ack", q.ack(&again));
    }
    let vt_and_a_half = vt + vt / 2;
    let mut quiet = vec![(acked, "after one of racing acks won, the task must be gone")];
    quiet.extend(gone.into_iter().map(|name| {
        (
            name,
            "after an ack won a race with nacks of its receipt, the task must be gone",
        )
    }));
    quiet.extend(nacked.into_iter().map(|(name, _)| {
        (
            name,
            "a task nacked in a race with acks must come back once, not twice",
        )
    }));
    futures_util::future::try_join_all(
        quiet
            .iter()
            .map(|(name, why)| expect_none(q, name, vt_and_a_half, why)),
    )
    .await?;
    Ok(())
}
