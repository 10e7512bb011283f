//! Obligations on delivery: the round trip, exact payloads, unique ids, `reserve` waiting and
//! waking, a reserved task hidden from others, and `delay`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{DELAY, EnqueueOptions, TaskQueue};

use super::TaskQueueSettings;
use super::support::{POSTPONE, SLACK, TOLERANCE, expect_none, put, queue_name, take};
use crate::harness::Instance;
use crate::{call, ensure, expect_unsupported};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

pub(super) async fn enqueue_reserve_ack_round_trips<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "basic");
    let id = put(q, &name, Bytes::from_static(b"hello")).await?;
    ensure!(!id.is_empty(), "enqueue returned an empty id");
    let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    ensure!(
        r.task.id == id,
        "enqueue returned id {id:?}, the reserved task has id {:?}",
        r.task.id
    );
    ensure!(
        r.task.queue == name,
        "a task reserved from {name:?} names queue {:?}",
        r.task.queue
    );
    ensure!(
        r.task.payload == "hello",
        "payload \"hello\" came back as {:?}",
        r.task.payload
    );
    ensure!(
        r.task.attempts == 1,
        "the first delivery must have attempts 1, it has {}",
        r.task.attempts
    );
    ensure!(
        !r.receipt.is_empty(),
        "the reservation has an empty receipt"
    );
    call!("ack of a current reservation", q.ack(&r));
    let vt = i.request.visibility_timeout;
    expect_none(
        q,
        &name,
        vt + vt / 2,
        "an acked task must be gone for good, also after the visibility timeout",
    )
    .await
}

pub(super) async fn payloads_round_trip_exactly<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "payloads");
    let payloads: Vec<(&str, Bytes)> = vec![
        ("every byte value", (0..=255_u8).collect::<Vec<u8>>().into()),
        ("NUL bytes", Bytes::from_static(b"\0a\0\0\xff")),
        ("an empty payload", Bytes::new()),
        (
            "a 64 KiB payload",
            (0..64 * 1024_u32)
                .map(|n| (n % 251) as u8)
                .collect::<Vec<u8>>()
                .into(),
        ),
    ];
    let mut expected = HashMap::new();
    for (what, payload) in &payloads {
        let id = put(q, &name, payload.clone()).await?;
        expected.insert(id, (*what, payload.clone()));
    }
    for _ in 0..payloads.len() {
        let r = take(q, &name, SLACK, "reserve of an enqueued task").await?;
        let Some((what, payload)) = expected.remove(&r.task.id) else {
            return Err(format!(
                "reserve delivered task {:?}, not one enqueued (or delivered twice)",
                r.task.id
            ));
        };
        ensure!(
            r.task.payload == payload,
            "{what} of {} bytes came back as {} bytes{}",
            payload.len(),
            r.task.payload.len(),
            if r.task.payload.len() == payload.len() {
                " with different content"
            } else {
                ""
            }
        );
        call!("ack", q.ack(&r));
    }
    Ok(())
}

pub(super) async fn task_ids_are_unique<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "ids");
    let mut enqueued = HashSet::new();
    for n in 0..50 {
        let id = put(q, &name, Bytes::from_static(b"same payload")).await?;
        ensure!(!id.is_empty(), "enqueue returned an empty id");
        ensure!(
            enqueued.insert(id.clone()),
            "enqueue {n} of the same payload returned id {id:?} again"
        );
    }
    for n in 0..50 {
        let r = take(q, &name, SLACK, &format!("delivery {n} of 50 tasks")).await?;
        ensure!(
            enqueued.remove(&r.task.id),
            "reserve delivered task {:?}, which is not an enqueued id or was delivered before",
            r.task.id
        );
        call!("ack", q.ack(&r));
    }
    Ok(())
}

pub(super) async fn reserve_on_an_empty_queue_waits_then_answers_none<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "empty");
    let wait = Duration::from_millis(800);
    let start = Instant::now();
    let got = call!("reserve of an empty queue", q.reserve(&name, wait));
    let elapsed = start.elapsed();
    ensure!(
        got.is_none(),
        "reserve of an empty queue delivered a task: {got:?}"
    );
    let late = s.late();
    ensure!(
        elapsed + late >= wait,
        "reserve of an empty queue with wait {wait:?} answered None after {elapsed:?}: it must \
         wait for a task (to within the declared tolerance of {late:?})"
    );
    ensure!(
        elapsed <= wait + late,
        "reserve of an empty queue with wait {wait:?} took {elapsed:?}: more than the declared \
         tolerance ({late:?}) past its wait"
    );
    let start = Instant::now();
    let got = call!("reserve with a zero wait", q.reserve(&name, Duration::ZERO));
    let elapsed = start.elapsed();
    ensure!(
        got.is_none(),
        "reserve of an empty queue delivered a task: {got:?}"
    );
    ensure!(
        elapsed <= late,
        "reserve of an empty queue with a zero wait took {elapsed:?}: more than the declared \
         tolerance ({late:?})"
    );
    Ok(())
}

pub(super) async fn reserve_wakes_for_a_task_enqueued_while_waiting<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let name = queue_name(&i.request, "wake");
    let wait = Duration::from_secs(5);
    let start = Instant::now();
    let enqueued = std::sync::OnceLock::new();
    let (got, id) = tokio::join!(q.reserve(&name, wait), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let id = put(q, &name, Bytes::from_static(b"wake up")).await;
        let _ = enqueued.set(start.elapsed());
        id
    });
    let elapsed = start.elapsed();
    let id = id?;
    let got = got.map_err(|e| format!("a waiting reserve failed: {e}"))?;
    let Some(r) = got else {
        return Err(format!(
            "a reserve waiting {wait:?} answered None after {elapsed:?}, although a task was enqueued 200 ms into its wait"
        ));
    };
    ensure!(
        r.task.id == id,
        "the waiting reserve delivered task {:?}, not the one enqueued ({id:?})",
        r.task.id
    );
    // Counted from the end of the `enqueue`: the task may not be there before.
    let late = s.late();
    let enqueued = enqueued.get().copied().unwrap_or(elapsed);
    ensure!(
        elapsed <= enqueued + late,
        "a reserve waiting {wait:?} delivered a task enqueued {enqueued:?} into its wait only \
         after {elapsed:?}: it must wake for it within the declared tolerance ({late:?})"
    );
    call!("ack", q.ack(&r));
    Ok(())
}

pub(super) async fn reserved_task_is_invisible_to_other_consumers<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "invisible");
    put(q, &name, Bytes::from_static(b"held")).await?;
    let held = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    let others = futures_util::future::join_all((0..8).map(|_| q.reserve(&name, vt / 4))).await;
    for other in others {
        match other {
            Ok(None) => {}
            Ok(Some(r)) => {
                return Err(format!(
                    "task {:?} was delivered to another consumer while reserved (visibility timeout {vt:?})",
                    r.task.id
                ));
            }
            Err(e) => return Err(format!("reserve failed: {e}")),
        }
    }
    call!("ack", q.ack(&held));
    // Consumers racing for one task: exactly one gets it.
    let id = put(q, &name, Bytes::from_static(b"contested")).await?;
    let racers = futures_util::future::join_all((0..8).map(|_| q.reserve(&name, vt / 4))).await;
    let mut winners = Vec::new();
    for racer in racers {
        match racer {
            Ok(Some(r)) => winners.push(r),
            Ok(None) => {}
            Err(e) => return Err(format!("reserve failed: {e}")),
        }
    }
    ensure!(
        winners.len() == 1,
        "8 consumers racing for one task got {} deliveries (ids {:?}); exactly one must get it",
        winners.len(),
        winners.iter().map(|r| &r.task.id).collect::<Vec<_>>()
    );
    ensure!(
        winners[0].task.id == id,
        "the race delivered task {:?}, not the one enqueued",
        winners[0].task.id
    );
    call!("ack", q.ack(&winners[0]));
    Ok(())
}

pub(super) async fn delay_is_respected<T: TaskQueueProvider>(
    i: &Instance<T>,
    s: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let name = queue_name(&i.request, "delay");
    let delayed = EnqueueOptions::default().with_delay(POSTPONE);
    if !i.declares(DELAY) {
        expect_unsupported(
            "enqueue with a delay",
            &q.enqueue(&name, Bytes::from_static(b"later"), delayed)
                .await,
        )?;
        return expect_none(
            q,
            &name,
            POSTPONE + vt,
            "an enqueue that answered Unsupported must not enqueue the task",
        )
        .await;
    }
    let before = Instant::now();
    let later = call!(
        "enqueue with a delay",
        q.enqueue(&name, Bytes::from_static(b"later"), delayed)
    );
    let undelayed = put(q, &name, Bytes::from_static(b"now")).await?;
    let first = take(q, &name, SLACK, "reserve of an undelayed task").await?;
    if first.task.id == later {
        return Err(format!(
            "a task enqueued with a delay of {POSTPONE:?} was delivered after {:?}",
            before.elapsed()
        ));
    }
    ensure!(
        first.task.id == undelayed,
        "reserve delivered task {:?}, expected the undelayed task {undelayed:?}",
        first.task.id
    );
    call!("ack", q.ack(&first));
    let second = take(
        q,
        &name,
        POSTPONE + SLACK,
        &format!("a task enqueued with a delay of {POSTPONE:?} must be delivered after it"),
    )
    .await?;
    let after = before.elapsed();
    ensure!(
        second.task.id == later,
        "reserve delivered task {:?}, expected the delayed task {later:?}",
        second.task.id
    );
    ensure!(
        after + TOLERANCE >= POSTPONE,
        "a task enqueued with a delay of {POSTPONE:?} was delivered after {after:?}"
    );
    ensure!(
        after <= POSTPONE + s.late(),
        "a task enqueued with a delay of {POSTPONE:?} was delivered only {after:?} after the \
         enqueue: more than the declared tolerance ({:?}) past its delay",
        s.late()
    );
    ensure!(
        second.task.attempts == 1,
        "the first delivery of a delayed task has attempts {}",
        second.task.attempts
    );
    call!("ack", q.ack(&second));
    Ok(())
}
