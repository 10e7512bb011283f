//! The resource a fence campaign's lock protects: one Postgres row per campaign (its
//! namespace) that accepts a write only with a fence greater than the last one it accepted,
//! and an append-only log of every write's outcome, numbered by a `bigserial`.
//!
//! A write is one statement, so one transaction: the conditional `UPDATE` and the log entry
//! commit together or not at all. Accepted writes take the row lock and draw their log id
//! while they hold it, so the ids of accepted writes are in the order the row took them: the
//! log is the resource's own, linearizable history, whatever the workers' ledgers say.

use std::time::Duration;

use tokio_postgres::{Client, NoTls, Statement};

/// The table of the protected rows (one per campaign namespace).
pub const RESOURCE_TABLE: &str = "sandloom_test_fence_resource";
/// The append-only log of writes.
pub const LOG_TABLE: &str = "sandloom_test_fence_writes";

/// How long connecting to the resource may take (it is not behind the proxy: never cut).
const CONNECT_WITHIN: Duration = Duration::from_secs(10);

/// One write as the resource's log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    /// Its place in the log (`bigserial`): accepted writes are in the order they took effect.
    pub id: u64,
    /// The worker that wrote.
    pub worker: u64,
    /// The fence it wrote with.
    pub fence: u64,
    /// Whether the resource accepted it (its fence was greater than the last accepted one).
    pub accepted: bool,
}

/// A connection to the resource of one campaign.
pub struct Resource {
    client: Client,
    namespace: String,
    write: Statement,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

fn fail(what: &str, err: impl std::fmt::Display) -> String {
    format!("the fence campaign's resource: {what}: {err}")
}

fn to_u64(value: i64, what: &str) -> Result<u64, String> {
    u64::try_from(value).map_err(|_| fail(what, format!("negative value {value}")))
}

impl Resource {
    /// Connect to the resource of `namespace` on the server at `url` (tables made by
    /// [`Resource::create`]).
    ///
    /// # Errors
    /// When the server cannot be reached within 10 s or a statement cannot be prepared.
    pub async fn connect(url: &str, namespace: &str) -> Result<Resource, String> {
        let (client, connection) =
            tokio::time::timeout(CONNECT_WITHIN, tokio_postgres::connect(url, NoTls))
                .await
                .map_err(|_| {
                    fail(
                        "connect",
                        format!("no connection within {CONNECT_WITHIN:?}"),
                    )
                })?
                .map_err(|err| fail("connect", err))?;
        tokio::spawn(connection);
        // No statement may hang a worker or the campaign: a write that waits this long fails
        // (and the log says whether it committed).
        client
            .batch_execute("SET statement_timeout = '10s'")
            .await
            .map_err(|err| fail("set statement_timeout", err))?;
        let write = client
            .prepare(&format!(
                "WITH won AS (
                     UPDATE {RESOURCE_TABLE} SET fence = $2, worker = $3
                     WHERE namespace = $1 AND fence < $2
                     RETURNING fence)
                 INSERT INTO {LOG_TABLE} (namespace, worker, fence, accepted)
                 SELECT $1, $3, $2, EXISTS (SELECT 1 FROM won)
                 RETURNING id, accepted"
            ))
            .await
            .map_err(|err| fail("prepare the write", err))?;
        Ok(Resource {
            client,
            namespace: namespace.to_owned(),
            write,
        })
    }

    /// Create the tables when missing and this campaign's row (fence 0), then connect.
    ///
    /// # Errors
    /// As [`Resource::connect`], or when a statement fails.
    pub async fn create(url: &str, namespace: &str) -> Result<Resource, String> {
        // `CREATE TABLE IF NOT EXISTS` run by two campaigns at once can still collide on the
        // catalog: a transaction-scoped advisory lock makes them take turns.
        let (mut client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(|err| fail("connect", err))?;
        tokio::spawn(connection);
        let transaction = client
            .transaction()
            .await
            .map_err(|err| fail("begin", err))?;
        transaction
            .batch_execute(&format!(
                "SELECT pg_advisory_xact_lock(hashtext('{LOG_TABLE}'));
                 CREATE TABLE IF NOT EXISTS {RESOURCE_TABLE} (
                     namespace text PRIMARY KEY, fence bigint NOT NULL, worker bigint);
                 CREATE TABLE IF NOT EXISTS {LOG_TABLE} (
                     id bigserial PRIMARY KEY, namespace text NOT NULL, worker bigint NOT NULL,
                     fence bigint NOT NULL, accepted boolean NOT NULL,
                     at timestamptz NOT NULL DEFAULT clock_timestamp());
                 CREATE INDEX IF NOT EXISTS {LOG_TABLE}_namespace ON {LOG_TABLE} (namespace, id);"
            ))
            .await
            .map_err(|err| fail("create the tables", err))?;
        transaction
            .execute(
                &format!("INSERT INTO {RESOURCE_TABLE} (namespace, fence) VALUES ($1, 0)"),
                &[&namespace],
            )
            .await
            .map_err(|err| fail("create the row", err))?;
        transaction
            .commit()
            .await
            .map_err(|err| fail("commit", err))?;
        Resource::connect(url, namespace).await
    }

    /// Write with `fence`, as `worker`: the log entry's id, and whether the resource accepted
    /// it.
    ///
    /// # Errors
    /// When the statement fails (it may have committed: the log says).
    pub async fn write(&self, fence: u64, worker: u64) -> Result<(u64, bool), String> {
        let fence = i64::try_from(fence).map_err(|_| fail("write", "fence beyond i64"))?;
        let worker = i64::try_from(worker).map_err(|_| fail("write", "worker beyond i64"))?;
        let row = self
            .client
            .query_one(&self.write, &[&self.namespace, &fence, &worker])
            .await
            .map_err(|err| fail("write", err))?;
        Ok((to_u64(row.get(0), "log id")?, row.get(1)))
    }

    /// The whole log of this campaign, in id order.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn log(&self) -> Result<Vec<LogEntry>, String> {
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT id, worker, fence, accepted FROM {LOG_TABLE}
                     WHERE namespace = $1 ORDER BY id"
                ),
                &[&self.namespace],
            )
            .await
            .map_err(|err| fail("read the log", err))?;
        rows.iter()
            .map(|row| {
                Ok(LogEntry {
                    id: to_u64(row.get(0), "log id")?,
                    worker: to_u64(row.get(1), "worker")?,
                    fence: to_u64(row.get(2), "fence")?,
                    accepted: row.get(3),
                })
            })
            .collect()
    }

    /// The fence the row holds now.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn fence(&self) -> Result<u64, String> {
        let row = self
            .client
            .query_one(
                &format!("SELECT fence FROM {RESOURCE_TABLE} WHERE namespace = $1"),
                &[&self.namespace],
            )
            .await
            .map_err(|err| fail("read the row", err))?;
        to_u64(row.get(0), "fence")
    }

    /// Delete this campaign's row and log (kept with `SANDLOOM_CRASH_KEEP`).
    ///
    /// # Errors
    /// When a statement fails.
    pub async fn clean(&self) -> Result<(), String> {
        if std::env::var_os("SANDLOOM_CRASH_KEEP").is_some() {
            eprintln!(
                "fence campaign: rows of namespace {:?} kept in {RESOURCE_TABLE} and {LOG_TABLE}",
                self.namespace
            );
            return Ok(());
        }
        for table in [RESOURCE_TABLE, LOG_TABLE] {
            self.client
                .execute(
                    &format!("DELETE FROM {table} WHERE namespace = $1"),
                    &[&self.namespace],
                )
                .await
                .map_err(|err| fail("clean up", err))?;
        }
        Ok(())
    }
}
