//! Failure behaviour against real parts: a closed port, a listener that never answers, and a
//! real RabbitMQ behind a proxy that the tests cut, stall and restore.
//!
//! The broker tests need `SANDLOOM_TEST_AMQP_URL` (`eval "$(scripts/test-services up)"`);
//! without it they are reported as ignored.

mod support;

use std::time::{Duration, Instant};

use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
use sandloom_driverkit::{Driver, Health};
use support::{server_url, unique_prefix, url_via};

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    port
}

fn options(url: String, prefix: &str) -> AmqpTaskQueueOptions {
    AmqpTaskQueueOptions {
        url: url.into(),
        queue_prefix: prefix.to_owned(),
        connect_timeout_ms: 2_000,
        operation_timeout_ms: 2_000,
        reconnect_backoff_max_ms: 400,
        queue_ttl_ms: Some(60_000),
        ..AmqpTaskQueueOptions::default()
    }
}

async fn started(options: AmqpTaskQueueOptions) -> AmqpTaskQueue {
    let queue = AmqpTaskQueue::from_options(options).expect("options");
    queue.start().await.expect("start");
    queue
}

/// Retry `enqueue` until it succeeds (the driver reconnects with backoff), for at most 15 s.
async fn enqueue_until_back(queue: &AmqpTaskQueue, name: &str, payload: &'static str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match queue
            .enqueue(name, payload.into(), EnqueueOptions::default())
            .await
        {
            Ok(id) => return id,
            Err(err) => {
                assert!(
                    matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
                    "while reconnecting, enqueue must answer Unavailable or Timeout, not {err}"
                );
                assert!(
                    Instant::now() < deadline,
                    "the driver did not recover: {err}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test]
async fn unreachable_broker_at_start_is_an_error_naming_the_address_within_the_connect_timeout() {
    let port = closed_port();
    let url = format!("amqp://guest:hunter2-secret@127.0.0.1:{port}/%2f");
    let queue = AmqpTaskQueue::from_options(options(url, "sandloom-test.")).unwrap();
    let began = Instant::now();
    let err = queue.start().await.unwrap_err();
    let elapsed = began.elapsed();
    let message = err.to_string();
    assert!(elapsed < Duration::from_secs(3), "start took {elapsed:?}");
    assert!(
        message.contains(&format!("amqp://***@127.0.0.1:{port}/%2f")),
        "the error must name the address: {message}"
    );
    assert!(!message.contains("hunter2-secret"), "{message}");
    let chain = format!("{:?}", std::error::Error::source(&err));
    assert!(!chain.contains("hunter2-secret"), "{chain}");
    // Operations fail the same typed way, and do not hang.
    let enqueue = queue
        .enqueue("jobs", "x".into(), EnqueueOptions::default())
        .await
        .unwrap_err();
    assert_eq!(enqueue.kind(), ErrorKind::Unavailable, "{enqueue}");
    assert!(!enqueue.to_string().contains("hunter2-secret"));
    assert!(matches!(queue.health().await, Health::Unhealthy(_)));
    queue.stop().await.unwrap();
}

#[tokio::test]
async fn a_broker_that_never_answers_times_out_at_start() {
    // Accepts the TCP connection and never says a word.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut options = options(
        format!("amqp://guest:hunter2-secret@{addr}/%2f"),
        "sandloom-test.",
    );
    options.connect_timeout_ms = 500;
    let queue = AmqpTaskQueue::from_options(options).unwrap();
    let began = Instant::now();
    let err = queue.start().await.unwrap_err();
    let elapsed = began.elapsed();
    assert!(
        elapsed >= Duration::from_millis(450) && elapsed < Duration::from_secs(2),
        "start answered after {elapsed:?}, the connect timeout is 500 ms"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("amqp://***@{addr}/%2f")),
        "{message}"
    );
    assert!(message.contains("500 ms"), "{message}");
    assert!(!message.contains("hunter2-secret"), "{message}");
    silent.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_broker_that_goes_away_gives_typed_errors_and_the_driver_recovers() {
    let proxy = support::proxy().await;
    let prefix = unique_prefix("away");
    let mut options = options(url_via(proxy.address()), &prefix);
    options.visibility_timeout_ms = 2_000;
    let queue = started(options).await;
    let mut held = Vec::new();
    for payload in ["acked late", "left to time out"] {
        queue
            .enqueue("jobs", payload.into(), EnqueueOptions::default())
            .await
            .unwrap();
        held.push(
            queue
                .reserve("jobs", Duration::from_secs(5))
                .await
                .unwrap()
                .expect("the enqueued task"),
        );
    }
    assert!(queue.is_connected());

    proxy.cut();
    // Every operation answers a typed error, promptly, and nothing panics.
    for round in 0..3 {
        let began = Instant::now();
        let enqueue = queue
            .enqueue("jobs", "lost?".into(), EnqueueOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(enqueue.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
            "enqueue {round} while the broker is away: {enqueue}"
        );
        let reserve = queue
            .reserve("jobs", Duration::from_millis(200))
            .await
            .unwrap_err();
        assert!(
            matches!(reserve.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
            "reserve {round} while the broker is away: {reserve}"
        );
        assert!(
            began.elapsed() < Duration::from_secs(6),
            "took {:?}",
            began.elapsed()
        );
    }
    assert!(!queue.is_connected());
    assert!(matches!(queue.health().await, Health::Unhealthy(_)));
    // The reservation died with its connection: the broker hands the task out again.
    let ack = queue.ack(&held[0]).await.unwrap_err();
    assert_eq!(ack.kind(), ErrorKind::Conflict, "{ack}");

    proxy.restore();
    let fresh_id = enqueue_until_back(&queue, "jobs", "fresh").await;
    assert!(queue.is_connected());
    assert!(queue.health().await.is_healthy());
    // Past the visibility timeout of the reservation nobody settled: the broker already took
    // it back with the connection, so the driver must not publish a second copy.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    // Nothing was lost and nothing doubled: both tasks held when the connection died come back
    // once (their lost delivery counted), and so does the one enqueued after the recovery.
    let mut seen = Vec::new();
    while let Some(r) = queue.reserve("jobs", Duration::from_secs(1)).await.unwrap() {
        seen.push((r.task.id.clone(), r.task.attempts));
        queue.ack(&r).await.unwrap();
        assert!(seen.len() <= 3, "more tasks than enqueued: {seen:?}");
    }
    seen.sort();
    let mut expected = vec![
        (held[0].task.id.clone(), 2),
        (held[1].task.id.clone(), 2),
        (fresh_id, 1),
    ];
    expected.sort();
    assert_eq!(seen, expected);
    queue.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_broker_that_hangs_gives_timeouts_and_the_driver_goes_on_afterwards() {
    let proxy = support::proxy().await;
    let prefix = unique_prefix("hang");
    let mut options = options(url_via(proxy.address()), &prefix);
    options.operation_timeout_ms = 700;
    let queue = started(options).await;
    queue
        .enqueue("jobs", "before".into(), EnqueueOptions::default())
        .await
        .unwrap();

    proxy.stall();
    let began = Instant::now();
    let err = queue
        .enqueue("jobs", "during".into(), EnqueueOptions::default())
        .await
        .unwrap_err();
    let elapsed = began.elapsed();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(err.to_string().contains("700 ms"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    let err = queue
        .reserve("jobs", Duration::from_millis(100))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    // A caller that gives up on `reserve` half-way strands nothing either.
    let given_up = tokio::time::timeout(
        Duration::from_millis(100),
        queue.reserve("jobs", Duration::ZERO),
    )
    .await;
    assert!(
        given_up.is_err(),
        "the stalled reserve answered: {given_up:?}"
    );

    proxy.restore();
    let after = enqueue_until_back(&queue, "jobs", "after").await;
    // Every answer that came late was given back; the publish that timed out may still have
    // reached the broker: at least once.
    let mut payloads = Vec::new();
    while let Some(r) = queue
        .reserve("jobs", Duration::from_millis(500))
        .await
        .unwrap()
    {
        payloads.push(String::from_utf8_lossy(&r.task.payload).into_owned());
        if r.task.id == after {
            assert_eq!(r.task.attempts, 1);
        }
        queue.ack(&r).await.unwrap();
        assert!(
            payloads.len() < 10,
            "more tasks than enqueued: {payloads:?}"
        );
    }
    assert!(payloads.contains(&"before".to_owned()), "{payloads:?}");
    assert!(payloads.contains(&"after".to_owned()), "{payloads:?}");
    queue.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_queue_loses_no_task_when_a_worker_dies_between_reserve_and_ack() {
    let prefix = unique_prefix("worker-dies");
    let producer = started(options(server_url(), &prefix)).await;
    let id = producer
        .enqueue("jobs", "survive".into(), EnqueueOptions::default())
        .await
        .unwrap();

    // The worker reserves the task, then disappears without ack: dropped, never stopped.
    let worker = started(options(server_url(), &prefix)).await;
    let r = worker
        .reserve("jobs", Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the enqueued task");
    assert_eq!((r.task.id.as_str(), r.task.attempts), (id.as_str(), 1));
    drop(worker);

    // Another instance gets it, with the lost delivery counted.
    let again = producer
        .reserve("jobs", Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the task of the dead worker");
    assert_eq!(again.task.id, id);
    assert_eq!(again.task.payload, "survive");
    assert_eq!(again.task.attempts, 2);
    producer.ack(&again).await.unwrap();

    // The same through a connection that dies under a live worker.
    let proxy = support::proxy().await;
    let worker = started(options(url_via(proxy.address()), &prefix)).await;
    let id = producer
        .enqueue(
            "jobs",
            "survive the network".into(),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();
    let r = worker
        .reserve("jobs", Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the enqueued task");
    assert_eq!(r.task.id, id);
    proxy.cut();
    let again = producer
        .reserve("jobs", Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the task of the cut-off worker");
    assert_eq!(
        (again.task.id.as_str(), again.task.attempts),
        (id.as_str(), 2)
    );
    producer.ack(&again).await.unwrap();
    // The cut-off worker learns its reservation is stale.
    assert_eq!(
        worker.ack(&r).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    worker.stop().await.unwrap();
    producer.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_task_that_kills_every_worker_still_reaches_the_dead_letters() {
    let prefix = unique_prefix("poison");
    let mut opts = options(server_url(), &prefix);
    opts.max_attempts = 2;
    let producer = started(opts.clone()).await;
    let id = producer
        .enqueue("jobs", "poison".into(), EnqueueOptions::default())
        .await
        .unwrap();
    for attempt in 1..=2 {
        let worker = started(opts.clone()).await;
        let r = worker
            .reserve("jobs", Duration::from_secs(10))
            .await
            .unwrap()
            .expect("the poison task");
        assert_eq!(
            (r.task.id.as_str(), r.task.attempts),
            (id.as_str(), attempt)
        );
        drop(worker); // the worker "crashes"
    }
    // Its second lost delivery exhausts it: it is dead-lettered, not handed out a third time.
    assert!(
        producer
            .reserve("jobs", Duration::from_secs(2))
            .await
            .unwrap()
            .is_none()
    );
    let dead = producer.dead_letters("jobs", 10).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!((dead[0].id.as_str(), dead[0].attempts), (id.as_str(), 2));
    producer.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn mixed_delays_do_not_hold_each_other_back() {
    let prefix = unique_prefix("delays");
    let queue = started(options(server_url(), &prefix)).await;
    let began = Instant::now();
    let long = EnqueueOptions::default().with_delay(Duration::from_secs(30));
    queue.enqueue("jobs", "long".into(), long).await.unwrap();
    let short = EnqueueOptions::default().with_delay(Duration::from_millis(300));
    queue.enqueue("jobs", "short".into(), short).await.unwrap();
    let r = queue
        .reserve("jobs", Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the short delay, not held back by the long one enqueued before it");
    assert_eq!(r.task.payload, "short");
    assert!(began.elapsed() >= Duration::from_millis(300));
    assert!(began.elapsed() < Duration::from_secs(5));
    queue.ack(&r).await.unwrap();
    queue.stop().await.unwrap();
}

/// A queue declared again with other arguments: the hint comes before the broker's error, so
/// that the kernel's `error_chain` (which skips a source the message ends with) reads it once.
#[tokio::test]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_queue_with_other_arguments_reads_the_hint_and_the_cause_once() {
    let prefix = unique_prefix("ttl");
    let first = started(options(server_url(), &prefix)).await;
    first
        .enqueue("jobs", "one".into(), EnqueueOptions::default())
        .await
        .expect("first enqueue");
    let mut changed = options(server_url(), &prefix);
    changed.queue_ttl_ms = Some(30_000);
    let second = started(changed).await;
    let err = second
        .enqueue("jobs", "two".into(), EnqueueOptions::default())
        .await
        .expect_err("enqueued on a queue declared with another TTL");
    let err = sandloom_driverkit::error_chain(&err);
    let hint = "(the queue exists with other arguments: was `queue_ttl_ms` changed? delete the queue or restore the option)";
    assert_eq!(err.matches(hint).count(), 1, "{err}");
    assert_eq!(err.matches("PRECONDITION_FAILED").count(), 1, "{err}");
    assert!(err.contains(&format!("failed {hint}: ")), "{err}");
    first.stop().await.unwrap();
    second.stop().await.unwrap();
}
