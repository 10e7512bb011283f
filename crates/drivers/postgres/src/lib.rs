//! Sandloom drivers `taskqueue.postgres`, a durable
//! [`TaskQueue`](sandloom_driverkit::taskqueue::TaskQueue) on PostgreSQL (tokio-postgres with a
//! deadpool connection pool, `FOR UPDATE SKIP LOCKED`), and `lock.postgres`, a fenced
//! [`Lock`](sandloom_driverkit::lock::Lock) on a lease table ([`PostgresLock`]). Both share the crate's pool, lifecycle and migration lock.
//!
//! Link it in the application with `sandloom::link_drivers!(sandloom_driver_postgres)` and
//! select it in `INFRA`:
//!
//! ```toml
//! [taskqueue.default]
//! driver = "postgres"
//! url = "postgres://app@db.internal:5432/app"
//! visibility_timeout_ms = 30000
//! max_attempts = 5
//! ```
//!
//! Every option is described on [`PostgresTaskQueueOptions`]; how the queue works (one table,
//! leases, dead letters, polling, idempotency keys) on [`PostgresTaskQueue`]. Features: `delay`,
//! `dead_letter`, `fifo`, `dedupe`.
//!
//! Errors: a lost or refused connection is `Unavailable`, a statement or connection past its
//! budget `Timeout` (the connection is then dropped from the pool), a stale receipt
//! `Conflict`, an empty queue name `InvalidInput`, any other server error `Backend`, and
//! everything after `stop` `Stopped`. Messages name the server as
//! `postgres://***@host:port/database`: the user name and password never appear in an error, a log
//! line or `Debug` output. An `enqueue` that answered `Timeout` or `Unavailable` may still have
//! committed: a retry can enqueue the task twice, which at-least-once handlers tolerate anyway,
//! unless the enqueue carries an idempotency key (feature `dedupe`): then every retry returns
//! the id of the one task.
//!
//! ```
//! use sandloom_driverkit::Driver;
//! use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
//!
//! let options = PostgresTaskQueueOptions { table: "Bad Name".into(), ..Default::default() };
//! let err = PostgresTaskQueue::validate(&options).unwrap_err();
//! assert_eq!(err.option(), ["table"]);
//! assert!(err.to_string().starts_with("option `table`: must be a lowercase identifier"));
//! ```

mod address;
mod backend;
mod errors;
mod lock;
mod options;
mod provider;
mod schema;
mod wakers;

pub use lock::{PostgresLock, PostgresLockOptions};
pub use options::PostgresTaskQueueOptions;
pub use provider::PostgresTaskQueue;

sandloom_driverkit::register_driver!(taskqueue, "postgres", PostgresTaskQueue);
sandloom_driverkit::register_driver!(lock, "postgres", PostgresLock);
