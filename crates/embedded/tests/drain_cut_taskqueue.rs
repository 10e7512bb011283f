//! A `reserve` cut by a drain loses no task: `taskqueue.memory` behind its gate, a `reserve`
//! waiting, a task enqueued and the drain begun at once, many times with the two racing. Each
//! time the task is either the `reserve`'s answer or still in the queue. The memory queue takes
//! a task inside one poll (no `.await` between the lease and the answer), so a cut, which only
//! ever drops a suspended `reserve`, never finds a task leased for it.

use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::__private::{Gate, GateContext, GateExit};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue, TaskQueueCapability};
use sandloom_driverkit::{Driver, ProvidedBy};
use sandloom_embedded::{MemoryTaskQueue, MemoryTaskQueueOptions};

type Gated = <TaskQueueCapability as ProvidedBy<MemoryTaskQueue>>::Gate;

const ROUNDS: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reserve_cut_by_a_drain_loses_no_task() {
    let (mut delivered, mut cut) = (0, 0);
    for round in 0..ROUNDS {
        let options = MemoryTaskQueueOptions {
            visibility_timeout_ms: 200,
            ..MemoryTaskQueueOptions::default()
        };
        let driver = MemoryTaskQueue::from_options(options).unwrap();
        driver.start().await.unwrap();
        let gate = Arc::new(Gated::wrap(
            driver,
            &GateContext {
                features: &[],
                instance: &"default".into(),
                driver: "memory",
                telemetry: false,
            },
        ));
        let reserve = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.reserve("jobs", Duration::from_secs(30)).await }
        });
        // Inside the gate before the drain begins: a drain begun first refuses the `reserve`
        // rather than cutting it, which is not this test's race. A fixed pause was not enough
        // on a loaded machine (a clean-clone CI run answered `Refused`).
        let entered = tokio::time::timeout(Duration::from_secs(10), async {
            while gate.state().in_flight() == 0 {
                tokio::time::sleep(Duration::from_micros(100)).await;
            }
        })
        .await;
        assert!(
            entered.is_ok(),
            "round {round}: the reserve never entered the gate"
        );
        // And waiting in the driver.
        tokio::time::sleep(Duration::from_millis(2)).await;

        // The task, through the driver itself (the gate is about to refuse), from another
        // thread, and the drain from this one, racing: the round shifts the drain a little.
        let enqueue = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move {
                gate.driver()
                    .enqueue("jobs", Bytes::from_static(b"t"), EnqueueOptions::default())
                    .await
            }
        });
        for _ in 0..(round % 20) * 50 {
            std::hint::spin_loop();
        }
        gate.state().begin_drain();
        let id = enqueue.await.unwrap().unwrap();

        match reserve.await.unwrap() {
            Ok(Some(reservation)) => {
                assert_eq!(reservation.task.id, id);
                delivered += 1;
            }
            Ok(None) => panic!("round {round}: a 30 s reserve answered None"),
            Err(error) => {
                assert_eq!(GateExit::of(&error), Some(GateExit::Cut), "{error}");
                cut += 1;
                // Still in the queue, not leased to the dropped reserve: reservable at once.
                let again = gate
                    .driver()
                    .reserve("jobs", Duration::ZERO)
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("round {round}: the task was lost by a cut"));
                assert_eq!(again.task.id, id);
            }
        }
        assert_eq!(gate.state().in_flight(), 0);
        gate.driver().stop().await.unwrap();
    }
    println!("{ROUNDS} rounds: {delivered} delivered, {cut} cut, 0 lost");
    assert_eq!(delivered + cut, ROUNDS);
}
