//! Delays longer than one delay queue holds (20 days) take several hops, each copy carrying
//! when it is due: a copy that reaches the ready queue before then is parked again for the
//! rest of its delay, not delivered. Waiting out a 20-day hop is not a test, so this one plants
//! such a copy in the ready queue by hand, due 1.5 s later.
//!
//! Needs `SANDLOOM_TEST_AMQP_URL` (`eval "$(scripts/test-services up)"`); without it the test
//! is reported as ignored.

mod support;

use std::time::{Duration, Instant};

use lapin::options::BasicPublishOptions;
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Connection, ConnectionProperties};
use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
use support::{server_url, unique_prefix};

#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
#[tokio::test]
async fn a_copy_that_reaches_the_ready_queue_before_it_is_due_is_parked_for_the_rest() {
    let prefix = unique_prefix("long-delay");
    let queue = AmqpTaskQueue::from_options(AmqpTaskQueueOptions {
        url: server_url().into(),
        queue_prefix: prefix.clone(),
        queue_ttl_ms: Some(60_000),
        ..AmqpTaskQueueOptions::default()
    })
    .expect("options");
    queue.start().await.expect("start");
    // Declares the ready queue, with the driver's arguments.
    assert!(
        queue
            .reserve("far", Duration::ZERO)
            .await
            .unwrap()
            .is_none()
    );
    // Long delays are accepted: 400 days and Duration::MAX, neither delivered now.
    for delay in [Duration::from_hours(400 * 24), Duration::MAX] {
        let later = EnqueueOptions::default().with_delay(delay);
        queue
            .enqueue("far", "never now".into(), later)
            .await
            .unwrap();
    }

    // The last hop of a long delay, 1.5 s before it is due.
    let connection = Connection::connect(&server_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let channel = connection.create_channel().await.expect("channel");
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let mut headers = FieldTable::default();
    headers.insert("x-sandloom-attempts".into(), AMQPValue::LongLongInt(0));
    headers.insert(
        "x-sandloom-due-ms".into(),
        AMQPValue::LongLongInt(i64::try_from(now_ms + 1500).unwrap()),
    );
    let properties = BasicProperties::default()
        .with_delivery_mode(2)
        .with_message_id(ShortString::from("planted"))
        .with_headers(headers);
    let planted = Instant::now();
    channel
        .basic_publish(
            "".into(),
            format!("{prefix}q.far").into(),
            BasicPublishOptions::default(),
            b"due soon",
            properties,
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");

    let reservation = queue
        .reserve("far", Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the planted copy is delivered once it is due");
    let after = planted.elapsed();
    assert_eq!(reservation.task.id, "planted");
    assert_eq!(reservation.task.payload, "due soon");
    assert_eq!(reservation.task.attempts, 1, "parking is not a delivery");
    assert!(
        after >= Duration::from_millis(1400),
        "delivered {after:?} after it was planted, before it was due"
    );
    assert!(
        after <= Duration::from_secs(3),
        "delivered only {after:?} after it was planted, due after 1.5 s"
    );
    queue.ack(&reservation).await.unwrap();
    // The long-delayed tasks are still parked.
    assert!(
        queue
            .reserve("far", Duration::from_millis(300))
            .await
            .unwrap()
            .is_none()
    );
    queue.stop().await.unwrap();
    let _ = connection.close(200, "done".into()).await;
}
