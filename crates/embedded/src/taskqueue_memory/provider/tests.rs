use std::collections::HashSet;
use std::sync::Mutex as StdMutex;

use sandloom_driverkit::sdk::ErrorKind;
use serde::de::value::{Error as DeError, MapDeserializer};

use serde::Deserialize;

use super::*;

const NO_WAIT: Duration = Duration::ZERO;

fn queue_with(visibility_timeout_ms: u64, max_attempts: u32) -> MemoryTaskQueue {
    MemoryTaskQueue::from_options(MemoryTaskQueueOptions {
        visibility_timeout_ms,
        max_attempts,
        ..MemoryTaskQueueOptions::default()
    })
    .unwrap()
}

fn queue() -> MemoryTaskQueue {
    queue_with(30_000, 5)
}

async fn put(queue: &MemoryTaskQueue, name: &str, payload: &'static str) -> String {
    queue
        .enqueue(
            name,
            Bytes::from_static(payload.as_bytes()),
            EnqueueOptions::default(),
        )
        .await
        .unwrap()
}

async fn take(queue: &MemoryTaskQueue, name: &str) -> Reservation {
    queue
        .reserve(name, NO_WAIT)
        .await
        .unwrap()
        .expect("a ready task")
}

#[tokio::test]
async fn tasks_are_delivered_in_enqueue_order_per_queue() {
    let queue = queue();
    let first = put(&queue, "q", "1").await;
    put(&queue, "other", "x").await;
    let second = put(&queue, "q", "2").await;
    assert_ne!(first, second);
    let a = take(&queue, "q").await;
    let b = take(&queue, "q").await;
    assert_eq!(
        (a.task.id.as_str(), b.task.id.as_str()),
        (first.as_str(), second.as_str())
    );
    assert_eq!(
        (
            a.task.payload.as_ref(),
            a.task.queue.as_str(),
            a.task.attempts
        ),
        (&b"1"[..], "q", 1)
    );
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    queue.ack(&a).await.unwrap();
    queue.ack(&b).await.unwrap();
    assert_eq!(take(&queue, "other").await.task.payload, "x");
}

#[tokio::test]
async fn acked_tasks_are_gone_and_a_second_ack_conflicts() {
    let queue = queue_with(50, 5);
    put(&queue, "q", "x").await;
    let reservation = take(&queue, "q").await;
    queue.ack(&reservation).await.unwrap();
    assert_eq!(
        queue.ack(&reservation).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(
        queue.nack(&reservation, None).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        queue.reserve("q", NO_WAIT).await.unwrap().is_none(),
        "never redelivered"
    );
}

#[tokio::test]
async fn an_unacked_task_is_redelivered_after_the_visibility_timeout() {
    let queue = queue_with(50, 5);
    put(&queue, "q", "x").await;
    let first = take(&queue, "q").await;
    assert!(
        queue.reserve("q", NO_WAIT).await.unwrap().is_none(),
        "hidden while reserved"
    );
    let second = queue
        .reserve("q", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.task.id, first.task.id);
    assert_eq!(second.task.attempts, 2);
    assert_ne!(second.receipt, first.receipt);
    assert_eq!(
        queue.ack(&first).await.unwrap_err().kind(),
        ErrorKind::Conflict,
        "stale"
    );
    queue.ack(&second).await.unwrap();
}

#[tokio::test]
async fn ack_after_the_visibility_timeout_is_a_conflict() {
    let queue = queue_with(50, 5);
    put(&queue, "q", "x").await;
    let reservation = take(&queue, "q").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        queue.ack(&reservation).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(
        take(&queue, "q").await.task.attempts,
        2,
        "the task was not lost"
    );
}

#[tokio::test]
async fn nack_redelivers_now_or_after_the_delay() {
    let queue = queue();
    put(&queue, "q", "x").await;
    let first = take(&queue, "q").await;
    queue.nack(&first, None).await.unwrap();
    let second = take(&queue, "q").await;
    assert_eq!(second.task.attempts, 2);
    queue
        .nack(&second, Some(Duration::from_millis(100)))
        .await
        .unwrap();
    assert!(
        queue.reserve("q", NO_WAIT).await.unwrap().is_none(),
        "not before the delay"
    );
    let third = queue
        .reserve("q", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third.task.attempts, 3);
}

#[tokio::test]
async fn nacks_beyond_the_retry_limit_dead_letter_the_task() {
    let queue = queue_with(30_000, 3);
    let id = put(&queue, "q", "poison").await;
    put(&queue, "q", "fine").await;
    for attempt in 1..=3 {
        let reservation = take(&queue, "q").await;
        assert_eq!(
            (reservation.task.id.as_str(), reservation.task.attempts),
            (id.as_str(), attempt)
        );
        queue.nack(&reservation, None).await.unwrap();
    }
    let dead = queue.dead_letters("q", 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (
            dead[0].id.as_str(),
            dead[0].attempts,
            dead[0].queue.as_str()
        ),
        (id.as_str(), 3, "q")
    );
    assert_eq!(dead[0].payload, "poison");
    assert_eq!(take(&queue, "q").await.task.payload, "fine");
    assert!(queue.dead_letters("other", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn timeouts_beyond_the_retry_limit_dead_letter_the_task() {
    let queue = queue_with(30, 2);
    put(&queue, "q", "slow").await;
    let first = take(&queue, "q").await;
    let second = queue
        .reserve("q", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((first.task.attempts, second.task.attempts), (1, 2));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    let dead = queue.dead_letters("q", 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].attempts, 2);
}

#[tokio::test]
async fn dead_letters_are_oldest_first_and_limited() {
    let queue = queue_with(30_000, 1);
    for payload in ["a", "b", "c"] {
        put(&queue, "q", payload).await;
        let reservation = take(&queue, "q").await;
        queue.nack(&reservation, None).await.unwrap();
    }
    let dead = queue.dead_letters("q", 2).await.unwrap();
    let payloads: Vec<&[u8]> = dead.iter().map(|task| task.payload.as_ref()).collect();
    assert_eq!(payloads, [&b"a"[..], &b"b"[..]]);
    assert!(queue.dead_letters("q", 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn delayed_tasks_wait_and_fifo_holds_among_ready_ones() {
    let queue = queue();
    let later = EnqueueOptions::default().with_delay(Duration::from_millis(100));
    queue.enqueue("q", "late".into(), later).await.unwrap();
    put(&queue, "q", "now").await;
    assert_eq!(take(&queue, "q").await.task.payload, "now");
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    let started = Instant::now();
    let late = queue
        .reserve("q", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(late.task.payload, "late");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "woke when the delay passed"
    );
}

#[tokio::test]
async fn reserve_wakes_promptly_on_enqueue_and_gives_up_after_wait() {
    let queue = Arc::new(queue());
    let started = Instant::now();
    assert!(
        queue
            .reserve("q", Duration::from_millis(50))
            .await
            .unwrap()
            .is_none()
    );
    assert!(started.elapsed() >= Duration::from_millis(50));

    let waiter = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move { queue.reserve("q", Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = Instant::now();
    put(&queue, "q", "x").await;
    let reservation = waiter.await.unwrap().unwrap().unwrap();
    assert_eq!(reservation.task.payload, "x");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn empty_queue_names_are_invalid_input() {
    let queue = queue();
    let enqueue = queue
        .enqueue("", "x".into(), EnqueueOptions::default())
        .await;
    assert_eq!(enqueue.unwrap_err().kind(), ErrorKind::InvalidInput);
    assert_eq!(
        queue.reserve("", NO_WAIT).await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        queue.dead_letters("", 1).await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let forged = Reservation::new(Task::new("task-1", "", "x".into(), 1), "r");
    assert_eq!(
        queue.ack(&forged).await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        queue.nack(&forged, None).await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

#[tokio::test]
async fn forged_or_foreign_reservations_conflict() {
    let queue = queue();
    put(&queue, "q", "x").await;
    let real = take(&queue, "q").await;
    for forged in [
        Reservation::new(real.task.clone(), "not-the-receipt"),
        Reservation::new(Task::new("bogus", "q", "x".into(), 1), real.receipt.clone()),
        Reservation::new(
            Task::new(real.task.id.clone(), "unknown", "x".into(), 1),
            real.receipt.clone(),
        ),
    ] {
        assert_eq!(
            queue.ack(&forged).await.unwrap_err().kind(),
            ErrorKind::Conflict
        );
        assert_eq!(
            queue.nack(&forged, None).await.unwrap_err().kind(),
            ErrorKind::Conflict
        );
    }
    queue.ack(&real).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_consumers_process_every_task_exactly_once() {
    const TASKS: usize = 200;
    let queue = Arc::new(queue());
    let held: Arc<StdMutex<HashSet<String>>> = Arc::default();
    let done: Arc<StdMutex<Vec<String>>> = Arc::default();
    let mut consumers = Vec::new();
    for _ in 0..8 {
        let (queue, held, done) = (Arc::clone(&queue), Arc::clone(&held), Arc::clone(&done));
        consumers.push(tokio::spawn(async move {
            while let Some(reservation) = queue
                .reserve("jobs", Duration::from_millis(300))
                .await
                .unwrap()
            {
                let id = reservation.task.id.clone();
                assert!(
                    held.lock().unwrap().insert(id.clone()),
                    "{id} held twice at once"
                );
                tokio::task::yield_now().await;
                assert!(held.lock().unwrap().remove(&id));
                done.lock().unwrap().push(id);
                queue.ack(&reservation).await.unwrap();
            }
        }));
    }
    let mut ids = HashSet::new();
    for i in 0..TASKS {
        let id = queue
            .enqueue(
                "jobs",
                Bytes::from(i.to_string()),
                EnqueueOptions::default(),
            )
            .await
            .unwrap();
        assert!(ids.insert(id));
        if i % 25 == 0 {
            tokio::task::yield_now().await;
        }
    }
    for consumer in consumers {
        consumer.await.unwrap();
    }
    let done = done.lock().unwrap();
    assert_eq!(done.len(), TASKS, "each task processed exactly once");
    assert_eq!(done.iter().cloned().collect::<HashSet<_>>(), ids);
}

#[tokio::test]
async fn stop_answers_stopped_and_wakes_waiting_consumers() {
    let queue = Arc::new(queue());
    put(&queue, "q", "x").await;
    let reservation = take(&queue, "q").await;
    let waiter = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move { queue.reserve("q", Duration::from_secs(30)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    queue.stop().await.unwrap();
    let woken = tokio::time::timeout(Duration::from_secs(2), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(woken.unwrap_err().kind(), ErrorKind::Stopped);
    assert!(!queue.health().await.is_healthy());
    let enqueue = queue
        .enqueue("q", "x".into(), EnqueueOptions::default())
        .await;
    assert_eq!(enqueue.unwrap_err().kind(), ErrorKind::Stopped);
    assert_eq!(
        queue.reserve("q", NO_WAIT).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
    assert_eq!(
        queue.ack(&reservation).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
    assert_eq!(
        queue.nack(&reservation, None).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
    assert_eq!(
        queue.dead_letters("q", 1).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
}

#[test]
fn options_are_validated_and_refuse_unknown_fields() {
    let parse = |pairs: Vec<(&'static str, u64)>| {
        MemoryTaskQueueOptions::deserialize(MapDeserializer::<_, DeError>::new(pairs.into_iter()))
    };
    assert_eq!(parse(vec![]).unwrap(), MemoryTaskQueueOptions::default());
    let custom = parse(vec![("visibility_timeout_ms", 10), ("max_attempts", 2)]).unwrap();
    assert_eq!((custom.visibility_timeout_ms, custom.max_attempts), (10, 2));
    let err = parse(vec![("max_attempt", 2)]).unwrap_err();
    assert!(
        err.to_string().contains("unknown field `max_attempt`"),
        "{err}"
    );
    let zero_visibility = MemoryTaskQueueOptions {
        visibility_timeout_ms: 0,
        max_attempts: 1,
        ..MemoryTaskQueueOptions::default()
    };
    assert!(MemoryTaskQueue::from_options(zero_visibility).is_err());
    let zero_attempts = MemoryTaskQueueOptions {
        visibility_timeout_ms: 1,
        max_attempts: 0,
        ..MemoryTaskQueueOptions::default()
    };
    assert!(MemoryTaskQueue::from_options(zero_attempts).is_err());
    assert_eq!(
        MemoryTaskQueue::supported_features(),
        &[DELAY, DEAD_LETTER, FIFO, DEDUPE]
    );
    let window = parse(vec![("dedupe_window_ms", 0)]).unwrap();
    assert_eq!(window.dedupe_window_ms, 0);
}

async fn put_once(queue: &MemoryTaskQueue, name: &str, key: &str, payload: &'static str) -> String {
    let once = EnqueueOptions::default().with_idempotency_key(key);
    queue
        .enqueue(name, Bytes::from_static(payload.as_bytes()), once)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_key_names_one_task_until_its_window_after_ack_has_passed() {
    // Window 0: the key is forgotten as soon as its task is acked.
    let queue = MemoryTaskQueue::from_options(MemoryTaskQueueOptions {
        dedupe_window_ms: 0,
        ..MemoryTaskQueueOptions::default()
    })
    .unwrap();
    let first = put_once(&queue, "q", "k", "first").await;
    assert_eq!(put_once(&queue, "q", "k", "second").await, first);
    let r = take(&queue, "q").await;
    assert_eq!(
        (r.task.id.as_str(), r.task.payload.as_ref()),
        (first.as_str(), &b"first"[..])
    );
    // Reserved, then nacked: still in the queue, still the same task.
    assert_eq!(put_once(&queue, "q", "k", "third").await, first);
    queue.nack(&r, None).await.unwrap();
    assert_eq!(put_once(&queue, "q", "k", "third").await, first);
    let r = take(&queue, "q").await;
    queue.ack(&r).await.unwrap();
    let again = put_once(&queue, "q", "k", "fourth").await;
    assert_ne!(
        again, first,
        "a key whose window has passed names a new task"
    );
    let r = take(&queue, "q").await;
    assert_eq!(
        (r.task.id.as_str(), r.task.payload.as_ref()),
        (again.as_str(), &b"fourth"[..])
    );
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    // The earlier forgetting must not forget the new task's key.
    queue.ack(&r).await.unwrap();
    let newest = put_once(&queue, "q", "k", "fifth").await;
    assert_ne!(newest, again);
}

#[tokio::test]
async fn a_key_is_remembered_after_ack_within_the_window_and_for_dead_letters() {
    let queue = queue_with(30_000, 1);
    let first = put_once(&queue, "q", "acked", "x").await;
    let r = take(&queue, "q").await;
    queue.ack(&r).await.unwrap();
    assert_eq!(put_once(&queue, "q", "acked", "y").await, first);
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    let dead = put_once(&queue, "q", "dead", "z").await;
    let r = take(&queue, "q").await;
    queue.nack(&r, None).await.unwrap(); // the only attempt: dead-lettered
    assert_eq!(queue.dead_letters("q", 10).await.unwrap().len(), 1);
    assert_eq!(put_once(&queue, "q", "dead", "z").await, dead);
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
    // Keys are per queue; invalid keys are refused and enqueue nothing.
    assert_ne!(put_once(&queue, "other", "acked", "x").await, first);
    for bad in [String::new(), "a\0b".to_owned(), "k".repeat(256)] {
        let once = EnqueueOptions::default().with_idempotency_key(bad);
        let err = queue.enqueue("q", Bytes::new(), once).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
    assert!(queue.reserve("q", NO_WAIT).await.unwrap().is_none());
}

/// The contract holds an overlong duration at least 100 years; the kit can only ask for a
/// century and see the task stay, so the cap itself is checked here (mutation testing lists
/// the constant's arithmetic as "outside", left to this test).
#[test]
fn an_overlong_duration_is_held_a_hundred_years_without_overflow() {
    let now = Instant::now();
    let century = Duration::from_hours(100 * 365 * 24);
    for duration in [Duration::MAX, Duration::from_hours(200 * 365 * 24)] {
        let until = after(now, duration);
        assert!(
            until - now >= century,
            "{duration:?} held only {:?}",
            until - now
        );
    }
    assert_eq!(
        after(now, Duration::from_millis(1500)) - now,
        Duration::from_millis(1500)
    );
}
