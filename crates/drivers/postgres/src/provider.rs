//! `PostgresTaskQueue`: the `TaskQueue` operations, the driver lifecycle and the provider.

use std::fmt;
use std::pin::pin;
use std::time::Duration;

use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{
    DEAD_LETTER, DEDUPE, DELAY, EnqueueOptions, FIFO, NAME, Reservation, Task, TaskQueueOps,
    TaskQueueProvider,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version, error_chain};
use tokio::time::Instant;
use tokio_postgres::Row;

use crate::backend::Backend;
use crate::options::PostgresTaskQueueOptions;
use crate::schema::Statements;
use crate::wakers::Wakers;

/// Longest delay, `retry_after` or lease the driver stores: a hundred years, the contract's
/// least for "as long as possible" (longer ones, `Duration::MAX`, are held this long), and far
/// from the end of PostgreSQL's timestamp range (294276 AD).
const FAR_FUTURE_MS: i64 = 100 * 366 * 24 * 3600 * 1000;

/// Shortest sleep of a waiting `reserve` between two looks.
const MIN_NAP_MS: u64 = 5;

/// Longest queue name, in bytes: names are index keys.
const MAX_QUEUE_LEN: usize = 1024;

/// The `taskqueue.postgres` driver: durable queues in one PostgreSQL table, shared safely by any
/// number of workers in any number of processes and machines.
///
/// All state is in the table; instances keep none. `reserve` takes the oldest ready task of the
/// queue with one `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED)` statement that sets a
/// fresh receipt, counts the attempt and moves the task's `available_at` to the end of its
/// lease (the visibility timeout). A task whose lease ran out is simply ready again, for the
/// next `reserve` of any worker: no sweeper runs. `ack` and `nack` act only on a row that still
/// carries their receipt and whose lease still runs, so a worker whose lease expired can never
/// settle another worker's delivery (`Conflict`). After `max_attempts` deliveries a nack, or a
/// lease that runs out, dead-letters the task: it stays in the table, marked (`dead_at`, which
/// the last delivery sets to the end of its lease, so nothing needs to run when it ends), never
/// delivered again, and `dead_letters` lists it. Dead letters are kept until someone deletes
/// them (`DELETE FROM sandloom_tasks WHERE dead_at < now() - interval '30 days'`). Like any
/// queue table, this one churns: leave autovacuum on.
///
/// Features: `delay`, `dead_letter`, `fifo` (ready tasks of a queue are reserved in enqueue
/// order) and `dedupe`. A waiting `reserve` polls every `poll_interval_ms` for tasks other
/// processes enqueue, and sleeps no longer than until its queue's next task becomes ready (a
/// delay or `retry_after` ends, a lease runs out). An enqueue or a nack through the same
/// instance wakes one waiting `reserve` of its queue at once (not every waiter: one task can go
/// to one worker).
///
/// `dedupe`: an idempotency key is unique per namespace and queue under a unique index, and an
/// enqueue with a key is one `INSERT … ON CONFLICT … DO UPDATE … RETURNING id` statement, so any
/// number of enqueues with one key, from any number of processes, and a retry after an answer
/// that was lost after the commit, create one task and all return its id. The key is held for
/// as long as the task is in the table (dead letters included) and for `dedupe_window_ms`
/// (24 hours by default) after it is acked: acking a task with a key keeps its row, without the
/// payload, until then.
///
/// `start` connects (within `connect_timeout_ms`) and creates or migrates the table under a
/// PostgreSQL advisory lock, so many processes may start at once; the role needs the right to
/// create it (afterwards only `SELECT`, `INSERT`, `UPDATE`, `DELETE`). PostgreSQL 13 or later.
///
/// ```no_run
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
/// use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
///
/// #[tokio::main]
/// async fn main() {
///     let queue = PostgresTaskQueue::from_options(PostgresTaskQueueOptions {
///         url: "postgres://postgres@127.0.0.1:5432/test".into(),
///         ..Default::default()
///     })
///     .unwrap();
///     queue.start().await.unwrap(); // connects, creates the table
///     queue.enqueue("mail", "hello".into(), EnqueueOptions::default()).await.unwrap();
///     let reservation = queue.reserve("mail", Duration::from_secs(1)).await.unwrap().unwrap();
///     assert_eq!(reservation.task.payload, "hello");
///     queue.ack(&reservation).await.unwrap();
///     queue.stop().await.unwrap();
/// }
/// ```
pub struct PostgresTaskQueue {
    backend: Backend,
    namespace: String,
    visibility_ms: i64,
    max_attempts: i32,
    poll_interval: Duration,
    dedupe_window_ms: i64,
    sql: Statements,
    /// This instance's waiting `reserve`s: an enqueue or a nack wakes one of its queue, a
    /// stop every one.
    wakers: Wakers,
}

impl fmt::Debug for PostgresTaskQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresTaskQueue")
            .field("server", &self.backend.target().redacted())
            .field("table", &self.sql.table())
            .field("namespace", &self.namespace)
            .field("visibility_ms", &self.visibility_ms)
            .field("max_attempts", &self.max_attempts)
            .field("pool", &self.backend.status())
            .field("stopped", &self.backend.is_stopped())
            .finish_non_exhaustive()
    }
}

fn check_queue(queue: &str) -> InfraResult<()> {
    if queue.is_empty() {
        return Err(InfraError::invalid_input(
            NAME,
            "queue names must not be empty",
        ));
    }
    if queue.len() > MAX_QUEUE_LEN || queue.contains('\0') {
        return Err(InfraError::invalid_input(
            NAME,
            format!("queue names are at most {MAX_QUEUE_LEN} bytes, without NUL characters"),
        ));
    }
    Ok(())
}

/// Milliseconds for SQL: rounded up (a nonzero duration never becomes 0, a task never comes
/// early), capped at [`FAR_FUTURE_MS`].
pub(crate) fn millis(duration: Duration) -> i64 {
    let whole = duration.as_millis();
    let rounded = if duration.subsec_nanos().is_multiple_of(1_000_000) {
        whole
    } else {
        whole + 1
    };
    i64::try_from(rounded).map_or(FAR_FUTURE_MS, |ms| ms.min(FAR_FUTURE_MS))
}

/// `Conflict`: `reservation` no longer holds its task.
fn stale(reservation: &Reservation) -> InfraError {
    InfraError::conflict(
        NAME,
        format!(
            "the reservation of task {:?} is stale: it was acked, nacked, or its lease ran out",
            reservation.task.id
        ),
    )
}

/// A column of a row the driver's own statement returned.
fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
    what: &str,
) -> InfraResult<T> {
    row.try_get(index).map_err(|err| {
        InfraError::new(
            sandloom_driverkit::sdk::ErrorKind::Backend,
            NAME,
            format!(
                "{what}: unexpected result column {index}: {}",
                error_chain(&err)
            ),
        )
        .with_source(err)
    })
}

fn attempts(value: i32) -> u32 {
    u32::try_from(value).unwrap_or(0)
}

impl PostgresTaskQueue {
    fn running(&self) -> InfraResult<()> {
        self.backend.running()
    }

    /// Run `op` on a pooled connection within the operation timeout (see [`Backend::run`]).
    async fn run<T>(
        &self,
        what: &str,
        op: impl AsyncFnOnce(&deadpool_postgres::Object) -> Result<T, tokio_postgres::Error>,
    ) -> InfraResult<T> {
        self.backend.run(what, op).await
    }

    /// How long until the next task of `queue` becomes ready (`None`: no task will).
    async fn next_ready(&self, queue: &str) -> InfraResult<Option<Duration>> {
        let row = self
            .run("reserve", async |client| {
                let statement = client.prepare_cached(&self.sql.next_ready).await?;
                client
                    .query_one(&statement, &[&self.namespace, &queue])
                    .await
            })
            .await?;
        let ms: Option<i64> = column(&row, 0, "reserve")?;
        // Due already, yet not reserved: another consumer is taking it (or the clocks of
        // server and client disagree); look again soon, not at once.
        Ok(ms.map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0).max(MIN_NAP_MS))))
    }

    /// Reserve now, or `None` when no task is ready.
    async fn try_reserve(&self, queue: &str) -> InfraResult<Option<Reservation>> {
        let row = self
            .run("reserve", async |client| {
                let statement = client.prepare_cached(&self.sql.reserve).await?;
                client
                    .query_opt(
                        &statement,
                        &[
                            &self.namespace,
                            &queue,
                            &self.max_attempts,
                            &self.visibility_ms,
                        ],
                    )
                    .await
            })
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let id: i64 = column(&row, 0, "reserve")?;
        let attempts = attempts(column(&row, 1, "reserve")?);
        let receipt: String = column(&row, 2, "reserve")?;
        let payload: Vec<u8> = column(&row, 3, "reserve")?;
        let task = Task::new(id.to_string(), queue, Bytes::from(payload), attempts);
        Ok(Some(Reservation::new(task, receipt)))
    }
}

impl TaskQueueOps for PostgresTaskQueue {
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String> {
        self.running()?;
        check_queue(queue)?;
        let key = options.checked_idempotency_key()?;
        let delay = options.delay.map_or(0, millis);
        let payload: &[u8] = &payload;
        let row = self
            .run("enqueue", async |client| {
                if let Some(key) = key {
                    let statement = client.prepare_cached(&self.sql.enqueue_once).await?;
                    let window = &self.dedupe_window_ms;
                    let parameters: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
                        [&self.namespace, &queue, &payload, &delay, &key, window];
                    return client.query_one(&statement, &parameters).await;
                }
                let statement = client.prepare_cached(&self.sql.enqueue).await?;
                client
                    .query_one(&statement, &[&self.namespace, &queue, &payload, &delay])
                    .await
            })
            .await?;
        let id: i64 = column(&row, 0, "enqueue")?;
        self.wakers.wake_one(queue);
        Ok(id.to_string())
    }

    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>> {
        self.running()?;
        check_queue(queue)?;
        let deadline = Instant::now().checked_add(wait);
        let waiting = self.wakers.waiting(queue);
        loop {
            // Registered before looking, so an enqueue right after the look still wakes us.
            let mut woken = pin!(waiting.notify().notified());
            woken.as_mut().enable();
            if let Some(reservation) = self.try_reserve(queue).await? {
                return Ok(Some(reservation));
            }
            let left = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    left
                }
                None => Duration::MAX,
            };
            // Wake when the next task becomes ready (its delay or `retry_after` ends, or a
            // lease runs out), not a poll interval later.
            let next_ready = self.next_ready(queue).await?.unwrap_or(Duration::MAX);
            let nap = left.min(self.poll_interval).min(next_ready);
            // Another process's enqueue is seen on the next poll.
            let _ = tokio::time::timeout(nap, woken).await;
            self.running()?;
        }
    }

    async fn ack(&self, reservation: &Reservation) -> InfraResult<()> {
        self.running()?;
        check_queue(&reservation.task.queue)?;
        let Ok(id) = reservation.task.id.parse::<i64>() else {
            return Err(stale(reservation));
        };
        let queue = &reservation.task.queue;
        let receipt = &reservation.receipt;
        let settled = self
            .run("ack", async |client| {
                // Without a key first, on the same connection; a task with a key (or a stale
                // receipt) then takes the full statement, which also leaves the tombstone.
                let unkeyed = client.prepare_cached(&self.sql.ack_unkeyed).await?;
                let deleted = client
                    .execute(&unkeyed, &[&id, &self.namespace, queue, receipt])
                    .await?;
                if deleted == 1 {
                    return Ok(1);
                }
                let statement = client.prepare_cached(&self.sql.ack).await?;
                let row = client
                    .query_one(
                        &statement,
                        &[&id, &self.namespace, queue, receipt, &self.dedupe_window_ms],
                    )
                    .await?;
                row.try_get::<_, i64>(0)
            })
            .await?;
        if settled == 0 {
            return Err(stale(reservation));
        }
        Ok(())
    }

    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.running()?;
        check_queue(&reservation.task.queue)?;
        let Ok(id) = reservation.task.id.parse::<i64>() else {
            return Err(stale(reservation));
        };
        let retry = retry_after.map_or(0, millis);
        let row = self
            .run("nack", async |client| {
                let statement = client.prepare_cached(&self.sql.nack).await?;
                client
                    .query_opt(
                        &statement,
                        &[
                            &id,
                            &self.namespace,
                            &reservation.task.queue,
                            &reservation.receipt,
                            &self.max_attempts,
                            &retry,
                        ],
                    )
                    .await
            })
            .await?;
        let Some(row) = row else {
            return Err(stale(reservation));
        };
        let dead: bool = column(&row, 0, "nack")?;
        if dead {
            tracing::debug!(
                queue = reservation.task.queue,
                task = id,
                "taskqueue.postgres dead-lettered a task nacked on its last delivery"
            );
        } else {
            self.wakers.wake_one(&reservation.task.queue);
        }
        Ok(())
    }

    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        self.running()?;
        check_queue(queue)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .run("dead_letters", async |client| {
                let statement = client.prepare_cached(&self.sql.dead_letters).await?;
                client
                    .query(&statement, &[&self.namespace, &queue, &limit])
                    .await
            })
            .await?;
        rows.iter()
            .map(|row| {
                let id: i64 = column(row, 0, "dead_letters")?;
                let payload: Vec<u8> = column(row, 1, "dead_letters")?;
                let attempts = attempts(column(row, 2, "dead_letters")?);
                Ok(Task::new(
                    id.to_string(),
                    queue,
                    Bytes::from(payload),
                    attempts,
                ))
            })
            .collect()
    }
}

impl Driver for PostgresTaskQueue {
    type Options = PostgresTaskQueueOptions;

    fn supported_features() -> &'static [&'static str] {
        &[DELAY, DEAD_LETTER, FIFO, DEDUPE]
    }

    fn validate(options: &PostgresTaskQueueOptions) -> Result<(), DriverError> {
        options
            .check()
            .map(drop)
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: PostgresTaskQueueOptions) -> Result<Self, DriverError> {
        let target = options.check()?;
        let backend = Backend::new(
            NAME,
            target,
            options.pool_size,
            options.connect_timeout(),
            options.operation_timeout(),
        )?;
        Ok(Self {
            sql: Statements::new(options.schema.as_deref(), &options.table),
            namespace: options.namespace.clone(),
            visibility_ms: millis(options.visibility_timeout()),
            max_attempts: i32::try_from(options.max_attempts).unwrap_or(i32::MAX),
            poll_interval: options.poll_interval(),
            dedupe_window_ms: millis(options.dedupe_window()),
            backend,
            wakers: Wakers::default(),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        let migrations = self.sql.migrations();
        self.backend.start(&self.sql.layout(&migrations)).await
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.backend.stop();
        // Waiting `reserve`s wake, see the driver stopped, and answer `Stopped`.
        self.wakers.wake_all();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.backend.health().await
    }
}

impl TaskQueueProvider for PostgresTaskQueue {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names_are_checked() {
        assert!(check_queue("mail").is_ok());
        for bad in ["", "a\0b", &"q".repeat(MAX_QUEUE_LEN + 1)] {
            let err = check_queue(bad).unwrap_err();
            assert_eq!(err.kind(), sandloom_driverkit::sdk::ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn durations_are_capped() {
        assert_eq!(millis(Duration::from_millis(1500)), 1500);
        assert_eq!(millis(Duration::from_micros(1)), 1);
        assert_eq!(millis(Duration::from_micros(1001)), 2);
        assert_eq!(millis(Duration::ZERO), 0);
        assert_eq!(millis(Duration::from_hours(400 * 24)), 400 * 86_400 * 1000);
        assert_eq!(millis(Duration::MAX), FAR_FUTURE_MS);
        const { assert!(FAR_FUTURE_MS >= 100 * 365 * 86_400 * 1000) };
    }

    #[tokio::test]
    async fn construction_does_no_io_and_stop_makes_operations_stopped() {
        // Port 1 refuses: nothing here may try it.
        let queue = PostgresTaskQueue::from_options(PostgresTaskQueueOptions {
            url: "postgres://app:hunter2@127.0.0.1:1/db".into(),
            ..Default::default()
        })
        .unwrap();
        assert!(!format!("{queue:?}").contains("hunter2"));
        queue.stop().await.unwrap();
        queue.stop().await.unwrap();
        let err = queue
            .enqueue("q", Bytes::from_static(b"x"), EnqueueOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), sandloom_driverkit::sdk::ErrorKind::Stopped);
        assert!(!queue.health().await.is_healthy());
    }
}
