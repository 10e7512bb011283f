//! `taskqueue.amqp` against `lapin` used directly, on the same broker in the same run.
//!
//! - `round_trip`: enqueue one small task, reserve it, ack it. Through the driver (as a module
//!   calls it, via `&dyn TaskQueue`) and through lapin: publish with a publisher confirm,
//!   `basic_get` with a manual ack, ack.
//! - `enqueue`: enqueue one small task (the driver) / publish it and await its confirm (lapin).
//! - `reserve_ack`: reserve and ack one task of a queue filled beforehand (untimed): the part
//!   of the round trip where the driver adds the most (a task per reserve, a visibility timer),
//!   without the broker's disk writes that dominate the publish confirms.
//!
//! Needs `SANDLOOM_TEST_AMQP_URL` (`eval "$(scripts/test-services up)"`); without it the bench
//! says so and exits successfully. `cargo bench -p sandloom-driver-amqp -- --measurement-time 3`.

use std::time::{Duration, Instant};

use criterion::Criterion;
use lapin::options::{
    BasicAckOptions, BasicGetOptions, BasicPublishOptions, ConfirmSelectOptions,
    QueueDeclareOptions, QueuePurgeOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
use tokio::runtime::Runtime;

const PAYLOAD: &[u8] = b"{\"order\":42,\"action\":\"ship\"}";

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_AMQP_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_AMQP_URL").map(str::to_owned))
}

/// Lapin with what the driver uses: a confirm channel to publish, another to get and ack.
struct Raw {
    _connection: Connection,
    publisher: Channel,
    consumer: Channel,
    queue: String,
}

impl Raw {
    async fn open(url: &str, queue: String) -> Raw {
        let connection = Connection::connect(url, ConnectionProperties::default())
            .await
            .expect("connect");
        let publisher = connection.create_channel().await.expect("channel");
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("confirm mode");
        let consumer = connection.create_channel().await.expect("channel");
        let mut arguments = FieldTable::default();
        arguments.insert(
            "x-queue-type".into(),
            AMQPValue::LongString(LongString::from("classic")),
        );
        arguments.insert("x-expires".into(), AMQPValue::LongLongInt(60_000));
        publisher
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions::durable(),
                arguments,
            )
            .await
            .expect("declare");
        Raw {
            _connection: connection,
            publisher,
            consumer,
            queue,
        }
    }

    async fn publish(&self) {
        let confirmation = self
            .publisher
            .basic_publish(
                "".into(),
                self.queue.as_str().into(),
                BasicPublishOptions::default(),
                PAYLOAD,
                BasicProperties::default().with_delivery_mode(2),
            )
            .await
            .expect("publish")
            .await
            .expect("confirm");
        assert!(confirmation.is_ack());
    }

    async fn round_trip(&self) {
        self.publish().await;
        let got = self
            .consumer
            .basic_get(
                self.queue.as_str().into(),
                BasicGetOptions { no_ack: false },
            )
            .await
            .expect("get")
            .expect("the message just published");
        got.delivery
            .ack(BasicAckOptions::default())
            .await
            .expect("ack");
    }

    /// Publish `count` tasks to `queue`, waiting for all their confirms at once.
    async fn fill(&self, queue: &str, count: u64) {
        for _ in 0..count {
            // Confirmed all together below.
            let confirm = self
                .publisher
                .basic_publish(
                    "".into(),
                    queue.into(),
                    BasicPublishOptions::default(),
                    PAYLOAD,
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await
                .expect("publish");
            drop(confirm);
        }
        self.publisher.wait_for_confirms().await.expect("confirms");
    }

    async fn get_ack(&self) {
        let got = self
            .consumer
            .basic_get(
                self.queue.as_str().into(),
                BasicGetOptions { no_ack: false },
            )
            .await
            .expect("get")
            .expect("a task of the filled queue");
        got.delivery
            .ack(BasicAckOptions::default())
            .await
            .expect("ack");
    }

    async fn purge(&self) {
        self.publisher
            .queue_purge(self.queue.as_str().into(), QueuePurgeOptions::default())
            .await
            .expect("purge");
    }
}

async fn driver_reserve_ack(queue: &dyn TaskQueue) {
    let reservation = queue
        .reserve("bench", Duration::ZERO)
        .await
        .expect("reserve")
        .expect("a task of the filled queue");
    queue.ack(&reservation).await.expect("ack");
}

async fn driver_round_trip(queue: &dyn TaskQueue) {
    queue
        .enqueue(
            "bench",
            Bytes::from_static(PAYLOAD),
            EnqueueOptions::default(),
        )
        .await
        .expect("enqueue");
    let reservation = queue
        .reserve("bench", Duration::ZERO)
        .await
        .expect("reserve")
        .expect("the task just enqueued");
    queue.ack(&reservation).await.expect("ack");
}

/// Run `op` `iters` times on `runtime`, after `prepare` (untimed).
fn timed<P, F>(runtime: &Runtime, iters: u64, prepare: P, op: impl Fn() -> F) -> Duration
where
    P: Future<Output = ()>,
    F: Future<Output = ()>,
{
    runtime.block_on(async {
        prepare.await;
        let start = Instant::now();
        for _ in 0..iters {
            op().await;
        }
        start.elapsed()
    })
}

fn round_trip(criterion: &mut Criterion, runtime: &Runtime, queue: &dyn TaskQueue, raw: &Raw) {
    let mut group = criterion.benchmark_group("round_trip");
    group.bench_function("driver", |b| {
        b.iter_custom(|iters| timed(runtime, iters, async {}, || driver_round_trip(queue)));
    });
    group.bench_function("lapin", |b| {
        b.iter_custom(|iters| timed(runtime, iters, async {}, || raw.round_trip()));
    });
    group.finish();
}

fn enqueue(criterion: &mut Criterion, runtime: &Runtime, queue: &dyn TaskQueue, raw: &Raw) {
    let mut group = criterion.benchmark_group("enqueue");
    group.bench_function("driver", |b| {
        b.iter_custom(|iters| {
            timed(runtime, iters, async {}, || async {
                queue
                    .enqueue(
                        "bench",
                        Bytes::from_static(PAYLOAD),
                        EnqueueOptions::default(),
                    )
                    .await
                    .expect("enqueue");
            })
        });
    });
    group.bench_function("lapin", |b| {
        b.iter_custom(|iters| timed(runtime, iters, async {}, || raw.publish()));
    });
    group.finish();
}

/// `driver_queue` is lapin on the driver's ready queue, to fill it.
fn reserve_ack(
    criterion: &mut Criterion,
    runtime: &Runtime,
    queue: &dyn TaskQueue,
    raw: &Raw,
    driver_queue: &Raw,
) {
    let mut group = criterion.benchmark_group("reserve_ack");
    group.bench_function("driver", |b| {
        b.iter_custom(|iters| {
            let fill = driver_queue.fill(&driver_queue.queue, iters);
            timed(runtime, iters, fill, || driver_reserve_ack(queue))
        });
    });
    group.bench_function("lapin", |b| {
        b.iter_custom(|iters| {
            timed(runtime, iters, raw.fill(&raw.queue, iters), || {
                raw.get_ack()
            })
        });
    });
    group.finish();
}

/// Criterion measures one side after the other; the broker's confirm latency (disk syncs on a
/// shared machine) drifts between them. This measures both sides in alternating blocks, each
/// going first in turn, and prints the median time per operation of each and their ratio.
fn paired<'a, D, L, P>(
    name: &str,
    runtime: &Runtime,
    driver_op: impl Fn() -> D,
    lapin_op: impl Fn() -> L,
    prepare: impl Fn(bool) -> P,
) where
    D: Future<Output = ()> + 'a,
    L: Future<Output = ()> + 'a,
    P: Future<Output = ()>,
{
    const ROUNDS: usize = 21;
    const BLOCK: u64 = 40;
    let mut driver = Vec::new();
    let mut lapin = Vec::new();
    let mut ratios = Vec::new();
    for round in 0..ROUNDS {
        let time_driver = || timed(runtime, BLOCK, prepare(true), &driver_op);
        let time_lapin = || timed(runtime, BLOCK, prepare(false), &lapin_op);
        let (d, l) = if round % 2 == 0 {
            let d = time_driver();
            (d, time_lapin())
        } else {
            let l = time_lapin();
            (time_driver(), l)
        };
        driver.push(d / BLOCK as u32);
        lapin.push(l / BLOCK as u32);
        ratios.push(l.as_secs_f64() / d.as_secs_f64());
    }
    let median = |values: &mut Vec<Duration>| {
        values.sort();
        values[values.len() / 2]
    };
    ratios.sort_by(f64::total_cmp);
    let (d, l) = (median(&mut driver), median(&mut lapin));
    println!(
        "{name} paired ({ROUNDS} alternating blocks of {BLOCK}): driver {d:?}/op, lapin {l:?}/op, \
         driver throughput = {:.2}x lapin (median of block ratios {:.2}x)",
        l.as_secs_f64() / d.as_secs_f64(),
        ratios[ratios.len() / 2]
    );
}

fn main() {
    let Some(url) = server_url() else {
        println!(
            "bench amqp: skipped: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") to run it"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let run = std::process::id();
    let prefix = format!("sandloom-bench.{run}.");
    let driver = runtime.block_on(async {
        let driver = AmqpTaskQueue::from_options(AmqpTaskQueueOptions {
            url: url.clone().into(),
            queue_prefix: prefix.clone(),
            queue_ttl_ms: Some(60_000),
            ..AmqpTaskQueueOptions::default()
        })
        .expect("options");
        driver.start().await.expect("start");
        driver
    });
    let raw = runtime.block_on(Raw::open(&url, format!("sandloom-bench-raw.{run}")));
    // The driver's ready queue, declared with the driver's arguments, to fill and purge it.
    let driver_queue = runtime.block_on(Raw::open(&url, format!("{prefix}q.bench")));
    let queue: &dyn TaskQueue = &driver;

    let mut criterion = Criterion::default().configure_from_args();
    round_trip(&mut criterion, &runtime, queue, &raw);
    enqueue(&mut criterion, &runtime, queue, &raw);
    runtime.block_on(async {
        driver_queue.purge().await;
        raw.purge().await;
    });
    reserve_ack(&mut criterion, &runtime, queue, &raw, &driver_queue);
    // Only in a real run (`cargo bench` passes `--bench`), not in test mode.
    if std::env::args().any(|arg| arg == "--bench") {
        paired(
            "round_trip",
            &runtime,
            || driver_round_trip(queue),
            || raw.round_trip(),
            |_| async {},
        );
        paired(
            "reserve_ack",
            &runtime,
            || driver_reserve_ack(queue),
            || raw.get_ack(),
            |driver| {
                let target = if driver { &driver_queue } else { &raw };
                target.fill(&target.queue, 40)
            },
        );
    }
    runtime.block_on(async {
        driver_queue.purge().await;
        raw.purge().await;
        driver.stop().await.expect("stop");
    });
    criterion.final_summary();
}
