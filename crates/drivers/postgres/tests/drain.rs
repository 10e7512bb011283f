//! A waiting `reserve` and the drain, against the real server: at shutdown an idle `reserve`
//! answers `Stopped` at once instead of holding shutdown for its `stop_timeout_ms`; and a
//! `reserve` cut by a drain loses no task. The cut may land while the lease statement is in
//! flight (the task is then leased to nobody): such a task comes back when its visibility
//! timeout ends, as after a consumer that died between reserve and ack.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandloom_driver_postgres::PostgresTaskQueue;
use sandloom_driverkit::__private::{Gate, GateContext, GateExit};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, TaskQueue as _};
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueueCapability};
use sandloom_driverkit::{Driver, ProvidedBy};
use sandloom_test_support::LogCapture;
use tracing::Level;

type Gated = <TaskQueueCapability as ProvidedBy<PostgresTaskQueue>>::Gate;

#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn an_idle_reserve_answers_stopped_at_shutdown_without_holding_it() {
    let log = LogCapture::new();
    let _guard = log.set_default(Level::INFO);
    let stop_timeout = Duration::from_secs(10);
    let text = format!(
        "stop_timeout_ms = {}\n[taskqueue.default]\ndriver = \"postgres\"\nurl = \"{}\"\ntable = \"{}\"\nnamespace = \"{}\"\n",
        stop_timeout.as_millis(),
        support::server_url(),
        support::TABLE,
        support::unique("drain_idle"),
    );
    let config = sandloom_kernel::InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    let running = sandloom_kernel::Kernel::new(
        config,
        sandloom_kernel::link_drivers!(sandloom_driver_postgres),
    )
    .start()
    .await
    .unwrap();
    let queue = running
        .infra()
        .capability_arc(&sandloom_driverkit::sdk::TASK_QUEUE, "default")
        .unwrap();
    let reserve = tokio::spawn(async move { queue.reserve("jobs", Duration::from_secs(30)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!reserve.is_finished(), "the reserve did not wait");

    let began = Instant::now();
    running.shutdown().await.unwrap();
    let took = began.elapsed();
    let error = reserve.await.unwrap().unwrap_err();
    assert!(
        took < stop_timeout / 2,
        "shutdown took {took:?} of its {stop_timeout:?} budget"
    );
    assert_eq!(error.kind(), ErrorKind::Stopped, "{error}");
    assert_eq!(GateExit::of(&error), Some(GateExit::Cut), "{error}");
    let logged = log.text();
    assert!(!logged.contains("operations still in flight"), "{logged}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_reserve_cut_by_a_drain_loses_no_task() {
    const ROUNDS: u64 = 40;
    let url = support::server_url();
    let (mut delivered, mut cut_free, mut cut_leased) = (0, 0, 0);
    for round in 0..ROUNDS {
        let options = support::options(&url, &support::unique("drain_cut"));
        let visibility = Duration::from_millis(options.visibility_timeout_ms);
        let gate = Arc::new(Gated::wrap(
            support::started(options).await,
            &GateContext {
                features: &[],
                instance: &"default".into(),
                driver: "postgres",
                telemetry: false,
            },
        ));
        let reserve = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.reserve("jobs", Duration::from_secs(30)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;

        // The enqueue wakes the waiting reserve, which sends its lease statement; the drain
        // begins somewhere around that, by the round: before it is sent, while it is in
        // flight, or after the answer.
        let id = gate
            .driver()
            .enqueue("jobs", Bytes::from_static(b"t"), EnqueueOptions::default())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_micros(round * 50)).await;
        gate.state().begin_drain();

        match reserve.await.unwrap() {
            Ok(Some(reservation)) => {
                assert_eq!(reservation.task.id, id);
                delivered += 1;
            }
            Ok(None) => panic!("round {round}: a 30 s reserve answered None"),
            Err(error) => {
                assert_eq!(GateExit::of(&error), Some(GateExit::Cut), "{error}");
                let now = gate.driver().reserve("jobs", Duration::ZERO).await.unwrap();
                let again = if let Some(again) = now {
                    cut_free += 1;
                    again
                } else {
                    // Leased by the statement the cut left in flight: back after the
                    // visibility timeout.
                    cut_leased += 1;
                    gate.driver()
                        .reserve("jobs", visibility * 6)
                        .await
                        .unwrap()
                        .unwrap_or_else(|| panic!("round {round}: the task was lost by a cut"))
                };
                assert_eq!(again.task.id, id);
            }
        }
        assert_eq!(gate.state().in_flight(), 0);
        gate.driver().stop().await.unwrap();
    }
    println!(
        "{ROUNDS} rounds: {delivered} delivered, {cut_free} cut before a lease, \
         {cut_leased} cut with the lease in flight (redelivered), 0 lost"
    );
    assert_eq!(delivered + cut_free + cut_leased, ROUNDS);
}

/// A `reserve` waiting on `taskqueue.postgres` across a reload to another namespace (a new
/// instance) is cut by the old instance's drain at once and runs again on the new one: it gets
/// the task enqueued there after the reload, and the reload does not wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_waiting_reserve_continues_on_the_new_instance_after_a_reload() {
    let stop_timeout = Duration::from_secs(30);
    let config = |namespace: &str| {
        let text = format!(
            "stop_timeout_ms = {}\n[taskqueue.default]\ndriver = \"postgres\"\nurl = \"{}\"\ntable = \"{}\"\nnamespace = \"{namespace}\"\n",
            stop_timeout.as_millis(),
            support::server_url(),
            support::TABLE,
        );
        sandloom_kernel::InfraConfig::from_toml_str(&text, "infra.toml").unwrap()
    };
    let running = sandloom_kernel::Kernel::new(
        config(&support::unique("reload_old")),
        sandloom_kernel::link_drivers!(sandloom_driver_postgres),
    )
    .start()
    .await
    .unwrap();
    let queue = running
        .infra()
        .capability_arc(&sandloom_driverkit::sdk::TASK_QUEUE, "default")
        .unwrap();
    let reserve = tokio::spawn({
        let queue = Arc::clone(&queue);
        async move { queue.reserve("jobs", Duration::from_mins(1)).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!reserve.is_finished(), "the reserve did not wait");

    let began = Instant::now();
    let report = running
        .reload(config(&support::unique("reload_new")))
        .await
        .unwrap();
    let took = began.elapsed();
    assert!(
        took < stop_timeout,
        "the reload waited {took:?} for an idle reserve"
    );
    assert_eq!(report.left_in_flight, 0);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !reserve.is_finished(),
        "the reserve did not wait on the new instance"
    );

    // Only the new namespace holds this task: the reserve got it from the new instance.
    sandloom_test_support::waits::reserve_gets_the_task_enqueued_now(&*queue, reserve, b"after")
        .await;
    drop(queue);
    running.shutdown().await.unwrap();
}
