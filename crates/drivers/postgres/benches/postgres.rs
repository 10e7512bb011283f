//! `taskqueue.postgres`: one small task enqueued, reserved and acked through the driver (as
//! `&dyn TaskQueue`, pool and all), against the same three statements hand-written with
//! tokio-postgres on one connection, in the same run. Each side has a table of this run with
//! the driver's layout (the driver creates both), so neither meets the other's dead rows.
//!
//! Each round commits three times; with the server's default `synchronous_commit = on` the
//! disk's flush dominates, as it does for any durable queue. The `async_commit` group runs both
//! sides again on sessions with `synchronous_commit = off`, which leaves the round trips and
//! the client's own work to compare. On a server without autovacuum (the test server) that
//! group is erratic: in some runs one of the two tables, the driver's or the raw side's, keeps
//! index entries of finished tasks that every `reserve` then walks (likely because under
//! asynchronous commit they cannot be marked dead before the WAL writer has flushed), and that
//! side slows down two- to threefold for the rest of the run.
//!
//! After criterion's measurements, each group also runs blocks of driver rounds and blocks of
//! raw rounds in alternation and prints both medians: on a shared machine that comparison
//! drifts least. Both tables are vacuumed before each pair of blocks, outside the timings.
//!
//! ```sh
//! eval "$(scripts/test-services up)"
//! cargo bench -p sandloom-driver-postgres -- --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};

const QUEUE: &str = "bench";

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_POSTGRES_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_POSTGRES_URL").map(str::to_owned))
}

/// The same work by hand: the statements a person would write for a SKIP LOCKED queue.
struct Raw {
    client: tokio_postgres::Client,
    namespace: String,
    enqueue: tokio_postgres::Statement,
    reserve: tokio_postgres::Statement,
    ack: tokio_postgres::Statement,
}

impl Raw {
    async fn connect(url: &str, table: &str, namespace: String) -> Raw {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        let enqueue = client
            .prepare(&format!(
                "INSERT INTO {table} (namespace, queue, payload, available_at)
                 VALUES ($1, $2, $3, now()) RETURNING id"
            ))
            .await
            .expect("prepare enqueue");
        let reserve = client
            .prepare(&format!(
                "UPDATE {table} SET attempts = attempts + 1, receipt = gen_random_uuid()::text,
                     available_at = now() + interval '30 seconds'
                 WHERE id = (
                     SELECT id FROM {table}
                     WHERE namespace = $1 AND queue = $2 AND dead_at IS NULL
                       AND available_at <= now()
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                 RETURNING id, payload, attempts, receipt"
            ))
            .await
            .expect("prepare reserve");
        let ack = client
            .prepare(&format!(
                "DELETE FROM {table} WHERE id = $1 AND receipt = $2 AND available_at > now()"
            ))
            .await
            .expect("prepare ack");
        Raw {
            client,
            namespace,
            enqueue,
            reserve,
            ack,
        }
    }

    async fn round(&self, payload: &[u8]) {
        let row = self
            .client
            .query_one(&self.enqueue, &[&self.namespace, &QUEUE, &payload])
            .await
            .expect("enqueue");
        let id: i64 = row.get(0);
        let row = self
            .client
            .query_opt(&self.reserve, &[&self.namespace, &QUEUE])
            .await
            .expect("reserve")
            .expect("a task");
        assert_eq!(row.get::<_, i64>(0), id);
        let receipt: String = row.get(3);
        let deleted = self
            .client
            .execute(&self.ack, &[&id, &receipt])
            .await
            .expect("ack");
        assert_eq!(deleted, 1);
    }
}

async fn driver_round(queue: &dyn TaskQueue, payload: &Bytes) {
    let id = queue
        .enqueue(QUEUE, payload.clone(), EnqueueOptions::default())
        .await
        .expect("enqueue");
    let reservation = queue
        .reserve(QUEUE, Duration::ZERO)
        .await
        .expect("reserve")
        .expect("a task");
    assert_eq!(reservation.task.id, id);
    queue.ack(&reservation).await.expect("ack");
}

/// The same server, with `synchronous_commit = off` for the sessions of this URL.
fn async_commit(url: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-c%20synchronous_commit%3Doff")
}

/// The interleaved comparison: this many blocks of `BLOCK` rounds per side.
const BLOCKS: usize = 40;
const BLOCK: usize = 20;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// Blocks of driver rounds and of raw rounds alternating, so a load change on the (shared)
/// machine hits both alike; prints the median round of each and their throughput ratio.
fn interleaved(
    runtime: &tokio::runtime::Runtime,
    group: &str,
    queue: &dyn TaskQueue,
    raw: &Raw,
    payload: &Bytes,
    tables: [&str; 2],
) {
    let (mut driver_times, mut raw_times) = (Vec::new(), Vec::new());
    let vacuum = format!("VACUUM {}, {}", tables[0], tables[1]);
    for _ in 0..BLOCKS {
        // Both tables lose their dead rows before every pair of blocks, outside the timings: the
        // test server runs no autovacuum, and dead index entries left on one side alone (see the
        // module docs) made either side two to three times slower for the rest of a run.
        runtime
            .block_on(raw.client.batch_execute(&vacuum))
            .expect("vacuum the bench tables");
        for _ in 0..BLOCK {
            let begun = Instant::now();
            runtime.block_on(driver_round(queue, payload));
            driver_times.push(begun.elapsed());
        }
        for _ in 0..BLOCK {
            let begun = Instant::now();
            runtime.block_on(raw.round(payload));
            raw_times.push(begun.elapsed());
        }
    }
    let (driver, raw) = (median(driver_times), median(raw_times));
    println!(
        "{group} interleaved ({} rounds each): median driver {driver:?}, raw {raw:?}, driver throughput = {:.2}x raw",
        BLOCKS * BLOCK,
        raw.as_secs_f64() / driver.as_secs_f64(),
    );
}

fn bench_group(
    criterion: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    group: &str,
    url: &str,
    table: &str,
    namespace: &str,
) {
    let driver_on = |table: String| {
        PostgresTaskQueue::from_options(PostgresTaskQueueOptions {
            url: url.into(),
            table,
            namespace: namespace.to_owned(),
            ..Default::default()
        })
        .expect("options")
    };
    let driver = driver_on(format!("{table}_driver"));
    runtime
        .block_on(driver.start())
        .expect("start (creates the table)");
    let layout = driver_on(format!("{table}_raw"));
    runtime
        .block_on(layout.start())
        .expect("start (creates the raw side's table)");
    runtime.block_on(layout.stop()).expect("stop");
    let raw_table = format!("{table}_raw");
    let raw = runtime.block_on(Raw::connect(url, &raw_table, namespace.to_owned()));
    let payload = Bytes::from_static(b"{\"to\":\"ada@example.com\",\"template\":\"welcome\"}");
    let queue: &dyn TaskQueue = &driver;
    let group_name = group;
    let mut group = criterion.benchmark_group(group);
    group.bench_function("driver", |b| {
        b.iter(|| runtime.block_on(driver_round(black_box(queue), &payload)));
    });
    group.bench_function("raw_tokio_postgres", |b| {
        b.iter(|| runtime.block_on(raw.round(black_box(&payload))));
    });
    group.finish();
    // Only in a real run (`cargo bench` passes `--bench`), not in test mode.
    if std::env::args().any(|arg| arg == "--bench") {
        interleaved(
            runtime,
            group_name,
            queue,
            &raw,
            &payload,
            [&format!("{table}_driver"), &raw_table],
        );
    }
    runtime.block_on(driver.stop()).expect("stop");
}

fn main() {
    let Some(url) = server_url() else {
        println!(
            "taskqueue.postgres bench skipped: needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Tables of this run only: dead rows of earlier runs would slow whichever side met them.
    let table = format!("sandloom_bench_{}", std::process::id());
    let namespace = "bench";
    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench_group(
        &mut criterion,
        &runtime,
        "taskqueue_postgres/enqueue_reserve_ack",
        &url,
        &table,
        namespace,
    );
    bench_group(
        &mut criterion,
        &runtime,
        "taskqueue_postgres/enqueue_reserve_ack_async_commit",
        &async_commit(&url),
        &table,
        namespace,
    );
    criterion.final_summary();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        client
            .batch_execute(&format!(
                "DROP TABLE {table}_driver, {table}_driver_schema, {table}_raw, {table}_raw_schema"
            ))
            .await
            .expect("drop the bench tables");
    });
}
