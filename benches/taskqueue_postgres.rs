//! `taskqueue.postgres` through `infra.task_queue()` against what a Rust user takes instead of
//! Sandloom: the job-queue library `apalis` 1.0 with its PostgreSQL storage (`apalis-postgres`
//! 1.0, on `sqlx` 0.9), same server, same run. Behind the feature `peers-apalis` (off by
//! default: sqlx is a large tree that no other target of the workspace needs).
//!
//! Both sides are durable and at-least-once: a task is stored by a committed `INSERT` before
//! its enqueue returns, and counts as done when its acknowledgement is committed (the driver's
//! `ack` returned; apalis's row reads `Done`), each with the server's default
//! `synchronous_commit = on`. The payload is 64 bytes on both sides (the driver's bytes; apalis's
//! JSON codec turns a 62-character string into 64 bytes). Each side gets its own tables: the
//! driver a table of this run (`sandloom_bench_apalis_<pid>`, dropped at the end), apalis its
//! own schema `apalis` (created by its migrations, `PostgresStorage::setup`) with queues named
//! after this run, whose rows and workers are deleted at the end.
//!
//! Rows, each for both sides:
//! - `enqueue`: one task stored per call (`enqueue` on the driver; `push` on apalis's storage,
//!   which runs `BEGIN`, one `INSERT`, `COMMIT`), into a queue no worker consumes.
//! - `enqueue→ack, 1 worker` and `8 workers`: a batch of [`BATCH`] tasks enqueued one by one
//!   while the workers, already running, reserve and acknowledge them; timed from the first
//!   enqueue until every task of the batch is acknowledged. A Sandloom worker is a loop of
//!   `infra.task_queue()` → `reserve` → `ack`, all sharing the kernel's pool; an apalis worker is
//!   a `Worker` with `concurrency(1)` on a clone of one `PostgresStorage` (one `PgPool`), as its
//!   README writes it, so 8 workers are 8 `Worker`s.
//!
//! Waking: apalis polls, so its storage is built as its README's "pubsub" example does for
//! prompt delivery: `.with_pubsub()` (each worker `LISTEN`s; an insert trigger `NOTIFY`s), plus
//! the same example's fallback interval strategy (5 s; `SANDLOOM_BENCH_APALIS_INTERVAL_MS` sets
//! another). `batch_size` stays at its default (10).
//! The driver wakes its waiting `reserve`s itself on every enqueue through the same instance, as
//! here; its `poll_interval_ms` (only for tasks of other processes) is raised from 200 to 1000 so
//! that idle Sandloom workers poll the server less during apalis's rounds.
//!
//! Both tables are vacuumed before each batch, outside the timings (the test server runs no
//! autovacuum; see `crates/drivers/postgres/benches/postgres.rs`), and apalis's `Done` rows of
//! the queue are deleted then, so that counting them finds only the batch's.
//!
//! After criterion's measurements, a real run (`--bench`) also prints a paired comparison per
//! row (the two sides timed back to back in alternating rounds; median of the per-round ratios).
//!
//! Needs `SANDLOOM_TEST_POSTGRES_URL` (`eval "$(scripts/test-services up)"`); without it, prints
//! how to run and exits successfully.
//! `cargo bench -p sandloom-benches --features peers-apalis --bench taskqueue_postgres -- --measurement-time 3`.

mod peers;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use apalis::prelude::{
    BackendExt, BoxDynError, Data, Strategy, TaskSink, WorkerBuilder, WorkerBuilderExt,
    WorkerContext,
};
use apalis_postgres::{Config, PgPool, PostgresStorage};
use bytes::Bytes;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use sandloom::sdk::taskqueue::EnqueueOptions;
use sandloom::{InfraConfig, Kernel, Running};
use sqlx::AssertSqlSafe;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use peers::{Paired, timed};

/// Tasks per batch of the throughput rows.
const BATCH: u32 = 100;
/// The payload's size on both sides.
const PAYLOAD: usize = 64;
/// The driver's queues: one only enqueued to, one the workers drain.
const ENQUEUE_QUEUE: &str = "enqueue";
const WORK_QUEUE: &str = "work";
/// How long a Sandloom worker's `reserve` waits before it looks at the stop flag.
const RESERVE_WAIT: Duration = Duration::from_secs(1);

/// The fallback interval of apalis's workers: its README's 5 s, unless
/// `SANDLOOM_BENCH_APALIS_INTERVAL_MS` says otherwise. A worker that takes a notification in
/// the same poll as a fetch that finds nothing waits for the next notification or this interval
/// (BENCHMARKS.md), so a shorter one shows apalis without those waits.
fn apalis_interval() -> Duration {
    std::env::var("SANDLOOM_BENCH_APALIS_INTERVAL_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(5), Duration::from_millis)
}

fn server_url() -> Option<String> {
    std::env::var("SANDLOOM_TEST_POSTGRES_URL").ok()
}

/// Counts acknowledged tasks, and lets the timing side wait for a count.
#[derive(Clone)]
struct Progress(Arc<watch::Sender<u64>>);

impl Progress {
    fn new() -> Self {
        Self(Arc::new(watch::Sender::new(0)))
    }

    fn add(&self) {
        self.0.send_modify(|done| *done += 1);
    }

    fn count(&self) -> u64 {
        *self.0.borrow()
    }

    async fn reach(&self, target: u64) {
        let mut done = self.0.subscribe();
        done.wait_for(|done| *done >= target)
            .await
            .expect("the progress counter lives as long as the fixture");
    }
}

/// One side's running workers.
struct Workers {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
    /// apalis's workers' contexts, to stop them.
    contexts: Vec<WorkerContext>,
}

struct Fixture {
    runtime: Runtime,
    running: Option<Running>,
    /// The driver's table (this run's).
    table: String,
    payload: Bytes,
    sandloom_done: Progress,
    /// apalis's side, and a pool of the same server for the vacuums and counts of both sides.
    pool: PgPool,
    apalis_enqueue: PostgresStorage<String>,
    apalis_work: PostgresStorage<String>,
    apalis_queue: String,
    apalis_args: String,
    apalis_done: Progress,
    /// Worker names of this run (apalis keeps a row per worker).
    worker_prefix: String,
}

/// apalis's task handler: counts the task (the acknowledgement follows, by apalis).
async fn apalis_handler(task: String, done: Data<Progress>) -> Result<(), BoxDynError> {
    assert_eq!(task.len() + 2, PAYLOAD, "the payload's JSON is 64 bytes");
    done.add();
    Ok(())
}

impl Fixture {
    fn new(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let run = std::process::id();
        let table = format!("sandloom_bench_apalis_{run}");
        let infra = format!(
            "[taskqueue.default]\ndriver = \"postgres\"\nurl = \"{url}\"\ntable = \"{table}\"\n\
             poll_interval_ms = 1000\n"
        );
        let config =
            InfraConfig::from_toml_str(&infra, "benches/taskqueue_postgres.rs").expect("INFRA");
        let apalis_queue = format!("sandloom-bench-{run}");
        let (running, pool) = runtime.block_on(async {
            let running = Kernel::new(config, sandloom::link_drivers!(sandloom_driver_postgres))
                .start()
                .await
                .unwrap_or_else(|err| panic!("{err}"));
            let pool = PgPool::connect(url).await.expect("apalis's pool connects");
            PostgresStorage::setup(&pool)
                .await
                .expect("apalis's migrations");
            (running, pool)
        });
        let storage = |queue: &str| {
            PostgresStorage::<String>::new(&pool).with_config(Config::default().queue(queue))
        };
        Self {
            runtime,
            running: Some(running),
            table,
            payload: Bytes::from(vec![b'v'; PAYLOAD]),
            sandloom_done: Progress::new(),
            apalis_enqueue: storage(&format!("{apalis_queue}-{ENQUEUE_QUEUE}")),
            apalis_work: storage(&format!("{apalis_queue}-{WORK_QUEUE}")),
            apalis_args: "v".repeat(PAYLOAD - 2),
            apalis_done: Progress::new(),
            worker_prefix: format!("{apalis_queue}-worker"),
            apalis_queue,
            pool,
        }
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("started")
    }

    async fn sandloom_enqueue(&self, queue: &str) {
        let tasks = self
            .running()
            .infra()
            .task_queue()
            .expect("taskqueue.default");
        tasks
            .enqueue(queue, self.payload.clone(), EnqueueOptions::default())
            .await
            .expect("enqueue");
    }

    async fn apalis_enqueue(&self) {
        let mut storage = self.apalis_enqueue.clone();
        storage.push(self.apalis_args.clone()).await.expect("push");
    }

    /// Start `count` Sandloom workers on the work queue.
    fn sandloom_workers(&self, count: usize) -> Workers {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = (0..count)
            .map(|_| {
                let infra = Arc::clone(self.running().infra());
                let stop = Arc::clone(&stop);
                let done = self.sandloom_done.clone();
                self.runtime.spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let tasks = infra.task_queue().expect("taskqueue.default");
                        let Some(reservation) = tasks
                            .reserve(WORK_QUEUE, RESERVE_WAIT)
                            .await
                            .expect("reserve")
                        else {
                            continue;
                        };
                        assert_eq!(reservation.task.payload.len(), PAYLOAD);
                        let tasks = infra.task_queue().expect("taskqueue.default");
                        tasks.ack(&reservation).await.expect("ack");
                        done.add();
                    }
                })
            })
            .collect();
        Workers {
            stop,
            tasks,
            contexts: Vec::new(),
        }
    }

    /// Start `count` apalis workers on the work queue, each processing one task at a time.
    fn apalis_workers(&self, count: usize) -> Workers {
        let mut contexts = Vec::new();
        let tasks = (0..count)
            .map(|index| {
                let context =
                    WorkerContext::new(&format!("{}-{count}-{index}", self.worker_prefix));
                contexts.push(context.clone());
                // apalis's README, "Pubsub listener example": LISTEN/NOTIFY, with a lazy
                // fallback interval (5 s there; `SANDLOOM_BENCH_APALIS_INTERVAL_MS` sets another).
                let backend = self
                    .apalis_work
                    .clone()
                    .with_pubsub()
                    .poll_with_strategy(Strategy::new().interval(apalis_interval()));
                let worker = WorkerBuilder::new(&context)
                    .backend(backend)
                    .concurrency(1)
                    .data(self.apalis_done.clone())
                    .build(apalis_handler);
                self.runtime.spawn(async move {
                    worker.run().await.expect("an apalis worker");
                })
            })
            .collect();
        Workers {
            stop: Arc::new(AtomicBool::new(true)),
            tasks,
            contexts,
        }
    }

    fn stop(&self, workers: Workers) {
        workers.stop.store(true, Ordering::Relaxed);
        for context in &workers.contexts {
            context.stop().expect("the apalis worker stops");
        }
        self.runtime.block_on(async {
            for task in workers.tasks {
                task.await.expect("a worker");
            }
        });
    }

    async fn vacuum(&self, table: &str) {
        // The table names are this benchmark's own, not input.
        sqlx::raw_sql(AssertSqlSafe(format!("VACUUM {table}")))
            .execute(&self.pool)
            .await
            .expect("vacuum");
    }

    /// One batch through the driver: its time, from the first enqueue to the last ack.
    fn sandloom_batch(&self) -> Duration {
        self.runtime.block_on(async {
            self.vacuum(&self.table).await;
            let target = self.sandloom_done.count() + u64::from(BATCH);
            let begin = Instant::now();
            for _ in 0..BATCH {
                self.sandloom_enqueue(WORK_QUEUE).await;
            }
            self.sandloom_done.reach(target).await;
            begin.elapsed()
        })
    }

    /// One batch through apalis: its time, from the first push until every task's row is
    /// committed `Done`.
    fn apalis_batch(&self) -> Duration {
        let queue = format!("{}-{WORK_QUEUE}", self.apalis_queue);
        self.runtime.block_on(async {
            sqlx::query("DELETE FROM apalis.jobs WHERE job_type = $1 AND status = 'Done'")
                .bind(&queue)
                .execute(&self.pool)
                .await
                .expect("forget the last batch");
            self.vacuum("apalis.jobs").await;
            let target = self.apalis_done.count() + u64::from(BATCH);
            let mut producer = self.apalis_work.clone();
            let begin = Instant::now();
            for _ in 0..BATCH {
                producer.push(self.apalis_args.clone()).await.expect("push");
            }
            // Every handler ran; their acknowledgements follow in apalis's next transaction.
            self.apalis_done.reach(target).await;
            loop {
                let done: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM apalis.jobs WHERE job_type = $1 AND status = 'Done'",
                )
                .bind(&queue)
                .fetch_one(&self.pool)
                .await
                .expect("count the acknowledged tasks");
                if done >= i64::from(BATCH) {
                    break;
                }
            }
            begin.elapsed()
        })
    }

    /// Between rows: both sides' enqueue-only queues emptied, and both tables vacuumed.
    fn forget_enqueued(&self) {
        self.runtime.block_on(async {
            sqlx::query(AssertSqlSafe(format!(
                "DELETE FROM {} WHERE queue = $1",
                self.table
            )))
            .bind(ENQUEUE_QUEUE)
            .execute(&self.pool)
            .await
            .expect("empty the driver's enqueue queue");
            sqlx::query("DELETE FROM apalis.jobs WHERE job_type = $1")
                .bind(format!("{}-{ENQUEUE_QUEUE}", self.apalis_queue))
                .execute(&self.pool)
                .await
                .expect("empty apalis's enqueue queue");
            self.vacuum(&self.table).await;
            self.vacuum("apalis.jobs").await;
        });
    }

    /// Drop the driver's tables, delete apalis's rows and workers of this run, stop the kernel.
    /// apalis's schema stays: its migrations are shared by every user of the server.
    fn clean_up(mut self) {
        let running = self.running.take().expect("started");
        self.runtime.block_on(async {
            running.shutdown().await.expect("the kernel stops");
            sqlx::raw_sql(AssertSqlSafe(format!(
                "DROP TABLE {table}, {table}_schema",
                table = self.table
            )))
            .execute(&self.pool)
            .await
            .expect("drop the driver's tables");
            sqlx::query("DELETE FROM apalis.jobs WHERE job_type LIKE $1")
                .bind(format!("{}-%", self.apalis_queue))
                .execute(&self.pool)
                .await
                .expect("delete apalis's tasks of this run");
            sqlx::query("DELETE FROM apalis.workers WHERE id LIKE $1")
                .bind(format!("{}-%", self.worker_prefix))
                .execute(&self.pool)
                .await
                .expect("delete apalis's workers of this run");
            self.pool.close().await;
        });
    }
}

fn main() {
    let Some(url) = server_url() else {
        eprintln!(
            "benches/taskqueue_postgres.rs: skipped, needs a real server: set \
             SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rerun"
        );
        return;
    };
    let real_run = std::env::args().any(|arg| arg == "--bench");
    let fixture = Fixture::new(&url);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("taskqueue.postgres");
    enqueue_rows(&fixture, &mut group);
    // A batch takes tens of milliseconds: fewer samples, each of a few batches.
    group.sample_size(10);
    for workers in [1, 8] {
        worker_rows(&fixture, &mut group, workers, real_run);
    }
    group.finish();
    fixture.clean_up();
    criterion.final_summary();
}

/// `enqueue`, both sides, then the paired comparison in a real run.
fn enqueue_rows(f: &Fixture, group: &mut BenchmarkGroup<'_, WallTime>) {
    let rt = &f.runtime;
    group.bench_function("enqueue/infra.task_queue()", |b| {
        b.iter_custom(|n| timed(rt, n, || f.sandloom_enqueue(ENQUEUE_QUEUE)));
    });
    group.bench_function("enqueue/apalis-postgres", |b| {
        b.iter_custom(|n| timed(rt, n, || f.apalis_enqueue()));
    });
    f.forget_enqueued();
    if std::env::args().any(|arg| arg == "--bench") {
        Paired::new(rt, 40, 100).named("sandloom", "apalis").print(
            "enqueue",
            || f.sandloom_enqueue(ENQUEUE_QUEUE),
            || f.apalis_enqueue(),
        );
        f.forget_enqueued();
    }
}

/// The throughput rows with `workers` workers per side, both sides' workers running throughout.
fn worker_rows(
    f: &Fixture,
    group: &mut BenchmarkGroup<'_, WallTime>,
    workers: usize,
    real_run: bool,
) {
    let ours = f.sandloom_workers(workers);
    let theirs = f.apalis_workers(workers);
    // Untimed: every worker registered and listening before the first timed batch.
    f.sandloom_batch();
    f.apalis_batch();
    let batches = |n: u64, batch: &dyn Fn() -> Duration| (0..n).map(|_| batch()).sum();
    let row = format!("enqueue→ack {BATCH} tasks, {workers} worker(s)");
    group.bench_function(format!("{row}/infra.task_queue()"), |b| {
        b.iter_custom(|n| batches(n, &|| f.sandloom_batch()));
    });
    group.bench_function(format!("{row}/apalis-postgres"), |b| {
        b.iter_custom(|n| batches(n, &|| f.apalis_batch()));
    });
    if real_run {
        Paired::new(&f.runtime, 20, 1)
            .named("sandloom", "apalis")
            .print_measured(&row, || f.sandloom_batch(), || f.apalis_batch());
    }
    f.stop(ours);
    f.stop(theirs);
}
