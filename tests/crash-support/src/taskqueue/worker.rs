//! What a worker does: consume (reserve, record done, ack) or produce (enqueue keyed tasks),
//! telling the campaign where it is so that it can be killed there. The same code runs in a
//! worker process ([`worker_main`]) and in a Tokio task ([`TaskPool`](super::TaskPool)).

use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};

use crate::ledger::{self, Ledger, Record};
use crate::pool::{Control, Event, Orders, Point, kind_name, run_opened};

/// How long an idle `reserve` of a worker waits.
const RESERVE_WAIT: Duration = Duration::from_millis(200);
/// What a task's work takes (and what producing a key takes).
const WORK: Duration = Duration::from_millis(1);
/// Pause after a failed operation before the next try.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Run this test process as a worker when the campaign started it so (the body of the test
/// named [`WORKER_TEST`](crate::WORKER_TEST)); alone it says so and returns.
///
/// `open` connects to the backend named by the orders' target (a URL through the proxy);
/// it is retried while it fails (the proxy may be cut), for up to 30 s.
///
/// # Panics
/// When the queue cannot be opened, or the ledger written.
pub fn worker_main<F, Fut>(open: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Arc<dyn TaskQueue>, String>>,
{
    let Some(orders) = Orders::from_env() else {
        eprintln!("a worker of this file's crash campaigns, started by them; nothing to do alone");
        return;
    };
    let control = Control::for_process();
    run_opened(
        open,
        &orders.target,
        "crash worker: cannot open the queue",
        |queue: Arc<dyn TaskQueue>| {
            let (orders, control) = (&orders, &control);
            async move { run(&*queue, orders, control).await }
        },
    );
}

/// Work as `orders` say, on `queue`, until stopped (or killed).
pub(super) async fn run(queue: &dyn TaskQueue, orders: &Orders, control: &Control) {
    let mut ledger = Ledger::create(&orders.ledger).expect("create the ledger");
    control.signal(Event::Ready);
    match orders.role.as_str() {
        "consume" => consume(queue, orders, control, &mut ledger).await,
        "produce" => produce(queue, orders, control, &mut ledger).await,
        other => panic!("unknown role {other}"),
    }
}

/// Reserve, record the task done (synced) *before* the ack, ack, and record how the ack
/// answered: the order the accounting relies on.
async fn consume(queue: &dyn TaskQueue, orders: &Orders, control: &Control, ledger: &mut Ledger) {
    while !control.stopped() {
        if control.reached(Point::Anywhere) {
            control.signal(Event::Armed);
        }
        if control.reached(Point::Call) {
            control.signal(Event::Calling);
        }
        let reservation = match queue.reserve(&orders.queue, RESERVE_WAIT).await {
            Ok(Some(reservation)) => reservation,
            Ok(None) => continue,
            Err(err) => {
                ledger.write(&Record::Error("reserve".into(), kind_name(err.kind())));
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
        };
        if control.reached(Point::Work) {
            control.park().await;
        }
        // The work. It also paces in-process workers, so the campaign keeps up with them.
        tokio::time::sleep(WORK).await;
        let id = reservation.task.id.clone();
        ledger.write(&Record::Done(id.clone()));
        control.signal(Event::Done(id.clone()));
        if control.reached(Point::Unacked) {
            control.park().await;
        }
        match queue.ack(&reservation).await {
            Ok(()) => ledger.write(&Record::Acked(id, ledger::now_micros())),
            Err(err) => ledger.write(&Record::AckFailed(id, kind_name(err.kind()))),
        }
    }
}

/// The idempotency key (and payload) of key number `n`.
pub(super) fn key(n: u64) -> String {
    format!("key-{n}")
}

/// Enqueue keys `from..to`, each its own idempotency key, retrying retryable failures (they
/// may have committed: the key is what makes the retry safe), then wait to be stopped.
async fn produce(queue: &dyn TaskQueue, orders: &Orders, control: &Control, ledger: &mut Ledger) {
    for n in orders.from..orders.to {
        if control.reached(Point::Anywhere) {
            control.signal(Event::Armed);
        }
        let key = key(n);
        tokio::time::sleep(WORK).await;
        loop {
            if control.reached(Point::Call) {
                control.signal(Event::Calling);
            }
            let once = EnqueueOptions::default().with_idempotency_key(key.clone());
            match queue
                .enqueue(&orders.queue, Bytes::from(key.clone()), once)
                .await
            {
                Ok(id) => {
                    ledger.write(&Record::Enqueued(key.clone(), id));
                    control.signal(Event::Enqueued(n));
                    break;
                }
                Err(err) if err.kind().is_retryable() => {
                    ledger.write(&Record::Error("enqueue".into(), kind_name(err.kind())));
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
                Err(err) => panic!("enqueue {key}: {err}"),
            }
        }
    }
    while !control.stopped() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
