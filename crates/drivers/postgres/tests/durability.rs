//! What a durable queue shared by many processes must hold to, against the real server: a task
//! survives a worker that dies between reserve and ack; a worker whose lease ran out cannot
//! settle the next worker's delivery; many processes may start (and create the table) at once;
//! the schema version is kept; namespaces keep instances apart.

mod support;

use std::time::{Duration, Instant};

use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_queue_loses_no_task_when_a_worker_dies_between_reserve_and_ack() {
    let url = support::server_url();
    let namespace = support::unique("dies");
    let options = support::options(&url, &namespace);
    let visibility = Duration::from_millis(options.visibility_timeout_ms);

    // Worker A takes the task and dies: its driver goes away without ack or nack.
    let worker_a = support::started(options.clone()).await;
    let id = worker_a
        .enqueue(
            "mail",
            Bytes::from_static(b"welcome ada"),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();
    let taken = worker_a
        .reserve("mail", Duration::from_secs(2))
        .await
        .unwrap()
        .expect("worker A gets the task");
    let reserved_at = Instant::now();
    worker_a.stop().await.unwrap();
    drop(worker_a);

    // Worker B, another instance (another process, as far as the table knows), gets it once
    // the lease runs out, and not before.
    let worker_b = support::started(options).await;
    let again = worker_b
        .reserve("mail", visibility * 10)
        .await
        .unwrap()
        .expect("the task comes back after the visibility timeout");
    let hidden = reserved_at.elapsed();
    assert!(
        hidden + Duration::from_millis(50) >= visibility,
        "redelivered after {hidden:?}, before the visibility timeout {visibility:?}"
    );
    assert_eq!(again.task.id, id);
    assert_eq!(again.task.payload, "welcome ada");
    assert_eq!(again.task.attempts, 2);
    assert_ne!(again.receipt, taken.receipt);
    worker_b.ack(&again).await.unwrap();
    assert!(
        worker_b
            .reserve("mail", visibility * 2)
            .await
            .unwrap()
            .is_none()
    );
    worker_b.stop().await.unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_last_delivery_abandoned_by_a_dead_worker_is_a_dead_letter_for_everyone() {
    let url = support::server_url();
    let namespace = support::unique("last");
    let options = PostgresTaskQueueOptions {
        max_attempts: 1,
        ..support::options(&url, &namespace)
    };
    let visibility = Duration::from_millis(options.visibility_timeout_ms);
    let worker = support::started(options.clone()).await;
    let id = worker
        .enqueue(
            "mail",
            Bytes::from_static(b"once"),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();
    let taken = worker
        .reserve("mail", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    worker.stop().await.unwrap();
    // Another process, which has never reserved anything, lists it once the lease is over;
    // nothing had to run at that moment.
    let other = support::started(options).await;
    assert!(other.dead_letters("mail", 10).await.unwrap().is_empty());
    tokio::time::sleep(visibility + Duration::from_millis(100)).await;
    let dead = other.dead_letters("mail", 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!((&dead[0].id, dead[0].attempts), (&id, 1));
    assert_eq!(dead[0].payload, "once");
    assert!(other.reserve("mail", visibility).await.unwrap().is_none());
    assert_eq!(
        other.ack(&taken).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    other.stop().await.unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_worker_whose_lease_ran_out_cannot_settle_the_next_workers_delivery() {
    let url = support::server_url();
    let namespace = support::unique("stale");
    let options = support::options(&url, &namespace);
    let slow = support::started(options.clone()).await;
    let fast = support::started(options).await;
    slow.enqueue("jobs", Bytes::from_static(b"x"), EnqueueOptions::default())
        .await
        .unwrap();
    let old = slow
        .reserve("jobs", Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    let current = fast
        .reserve("jobs", Duration::from_secs(5))
        .await
        .unwrap()
        .expect("redelivered to the other worker after the lease");
    assert_eq!(current.task.id, old.task.id);
    for outcome in [slow.ack(&old).await, slow.nack(&old, None).await] {
        assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Conflict);
    }
    // A forged receipt, or one of another namespace, settles nothing either.
    let mut forged = current.clone();
    forged.receipt = "00000000-0000-0000-0000-000000000000".to_owned();
    assert_eq!(
        slow.ack(&forged).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    let other = support::started(support::options(&url, &support::unique("other"))).await;
    assert_eq!(
        other.ack(&current).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    fast.ack(&current).await.unwrap();
    for queue in [slow, fast, other] {
        queue.stop().await.unwrap();
    }
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn many_processes_starting_at_once_create_the_table_once_and_keep_its_version() {
    let url = support::server_url();
    let schema = support::unique("sandloom_race");
    let table = "tasks";
    let options = PostgresTaskQueueOptions {
        schema: Some(schema.clone()),
        table: table.to_owned(),
        ..support::options(&url, "race")
    };
    let queues: Vec<PostgresTaskQueue> = (0..8)
        .map(|_| PostgresTaskQueue::from_options(options.clone()).unwrap())
        .collect();
    let starts = futures_util::future::join_all(queues.iter().map(Driver::start)).await;
    for start in starts {
        start.expect("every concurrent start succeeds");
    }
    let client = support::raw_client().await;
    let versions = client
        .query(
            &format!("SELECT version FROM \"{schema}\".\"{table}_schema\""),
            &[],
        )
        .await
        .unwrap();
    let versions: Vec<i32> = versions.iter().map(|row| row.get(0)).collect();
    assert_eq!(versions, [1, 2], "each migration recorded once");
    // Every instance works on the one table.
    let id = queues[3]
        .enqueue(
            "q",
            Bytes::from_static(b"shared"),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();
    let r = queues[6]
        .reserve("q", Duration::ZERO)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.task.id, id);
    queues[0].ack(&r).await.unwrap();
    for queue in &queues {
        queue.stop().await.unwrap();
    }

    // A table written by a newer driver is refused, not misread.
    client
        .execute(
            &format!("INSERT INTO \"{schema}\".\"{table}_schema\" (version) VALUES (99)"),
            &[],
        )
        .await
        .unwrap();
    let newer = PostgresTaskQueue::from_options(options).unwrap();
    let err = newer.start().await.unwrap_err();
    assert!(err.message().contains("schema version 99"), "{err}");
    newer.stop().await.unwrap();
    client
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_table_of_another_layout_is_refused_at_start() {
    let url = support::server_url();
    let table = support::unique("not_ours");
    let client = support::raw_client().await;
    client
        .batch_execute(&format!("CREATE TABLE \"{table}\" (id integer)"))
        .await
        .unwrap();
    let queue = PostgresTaskQueue::from_options(PostgresTaskQueueOptions {
        table: table.clone(),
        ..support::options(&url, "x")
    })
    .unwrap();
    let err = queue.start().await.unwrap_err();
    assert!(err.message().contains(&table), "{err}");
    queue.stop().await.unwrap();
    client
        .batch_execute(&format!(
            "DROP TABLE \"{table}\"; DROP TABLE IF EXISTS \"{table}_schema\""
        ))
        .await
        .unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn namespaces_sharing_a_table_never_see_each_others_tasks() {
    let url = support::server_url();
    let billing = support::started(support::options(&url, &support::unique("billing"))).await;
    let mail = support::started(support::options(&url, &support::unique("mail"))).await;
    let id = billing
        .enqueue(
            "jobs",
            Bytes::from_static(b"invoice"),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();
    assert!(
        mail.reserve("jobs", Duration::from_millis(200))
            .await
            .unwrap()
            .is_none()
    );
    let r = billing
        .reserve("jobs", Duration::ZERO)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.task.id, id);
    billing.ack(&r).await.unwrap();
    billing.stop().await.unwrap();
    mail.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn each_enqueue_wakes_a_waiting_worker_of_its_queue_and_none_is_left_waiting() {
    // No poll within the test: every task must reach its worker by a wake. An enqueue wakes
    // one waiter of its queue (not all of them), so a wake lost on the way, or sent to
    // another queue's waiter, leaves a worker waiting until its `wait` ends.
    let url = support::server_url();
    let namespace = support::unique("wakes");
    let options = PostgresTaskQueueOptions {
        poll_interval_ms: 600_000,
        ..support::options(&url, &namespace)
    };
    let queue = std::sync::Arc::new(support::started(options).await);
    let wait = Duration::from_mins(2);
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let queue = std::sync::Arc::clone(&queue);
            tokio::spawn(async move { queue.reserve("mail", wait).await })
        })
        .collect();
    let other = {
        let queue = std::sync::Arc::clone(&queue);
        tokio::spawn(async move { queue.reserve("billing", Duration::from_secs(3)).await })
    };
    // Let the workers look once and wait, then feed them one task at a time.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut ids = Vec::new();
    for n in 0..8 {
        let payload = Bytes::from(format!("task {n}"));
        ids.push(
            queue
                .enqueue("mail", payload, EnqueueOptions::default())
                .await
                .unwrap(),
        );
    }
    // A wake lost would leave its worker waiting out its whole `wait` (and then look once
    // more and find the task): 20 s is that failure, not a speed bound (a wake takes ms).
    let reservations = tokio::time::timeout(Duration::from_secs(20), async {
        let mut reservations = Vec::new();
        for worker in workers {
            reservations.push(worker.await.unwrap().unwrap());
        }
        reservations
    })
    .await
    .expect("a worker was left waiting for a task enqueued while it waited: a wake was lost");
    let mut taken = Vec::new();
    for reservation in reservations {
        let reservation = reservation.expect("a worker's wait ended without a task");
        taken.push(reservation.task.id.clone());
        queue.ack(&reservation).await.unwrap();
    }
    taken.sort();
    ids.sort();
    assert_eq!(taken, ids, "each task went to one worker");
    assert!(
        other.await.unwrap().unwrap().is_none(),
        "a waiter of another queue took a task"
    );
    queue.stop().await.unwrap();
}
