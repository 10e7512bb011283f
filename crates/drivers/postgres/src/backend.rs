//! The connection pool and lifecycle both drivers of the crate share (`taskqueue.postgres`,
//! `lock.postgres`): the pool built without I/O, `start`'s first connection, every operation on
//! a pooled connection within its budget, `Stopped` after `stop`, `health` by `SELECT 1`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime, Status};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{DriverError, Health, error_chain};
use tokio_postgres::NoTls;

use crate::address::Target;
use crate::errors;
use crate::schema::{Layout, migrate};

/// One driver's pool of connections to its server, through its lifecycle.
pub(crate) struct Backend {
    /// The capability's name, as operation errors say it.
    capability: &'static str,
    target: Target,
    pool: Pool,
    connect_timeout: Duration,
    operation_timeout: Duration,
    stopped: AtomicBool,
}

impl Backend {
    /// The pool for `target`, built without I/O: connections open on first use, in `start`.
    pub(crate) fn new(
        capability: &'static str,
        target: Target,
        pool_size: usize,
        connect_timeout: Duration,
        operation_timeout: Duration,
    ) -> Result<Self, DriverError> {
        let manager = Manager::from_config(
            target.config(connect_timeout),
            NoTls,
            ManagerConfig {
                // A broken connection is taken out of the pool by `run` on its first error, so
                // a test query on every checkout would only cost a round trip.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(operation_timeout))
            .create_timeout(Some(connect_timeout))
            .recycle_timeout(Some(connect_timeout))
            .build()
            .map_err(|err| {
                DriverError::new(format!(
                    "cannot build the connection pool: {}",
                    error_chain(&err)
                ))
            })?;
        Ok(Self {
            capability,
            target,
            pool,
            connect_timeout,
            operation_timeout,
            stopped: AtomicBool::new(false),
        })
    }

    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    pub(crate) fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    pub(crate) fn operation_timeout(&self) -> Duration {
        self.operation_timeout
    }

    pub(crate) fn status(&self) -> Status {
        self.pool.status()
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// `Ok` until `stop`, then `Stopped`.
    pub(crate) fn running(&self) -> InfraResult<()> {
        if self.is_stopped() {
            Err(InfraError::stopped(self.capability))
        } else {
            Ok(())
        }
    }

    /// Run `op` on a pooled connection within the operation timeout. A connection that broke or
    /// timed out leaves the pool instead of going back to it: after a server restart or a cut
    /// network, the next operation opens a fresh one.
    pub(crate) async fn run<T>(
        &self,
        what: &str,
        op: impl AsyncFnOnce(&Object) -> Result<T, tokio_postgres::Error>,
    ) -> InfraResult<T> {
        self.running()?;
        let target = self.target.redacted();
        let capability = self.capability;
        let client = self.pool.get().await.map_err(|err| {
            errors::pool(
                capability,
                what,
                target,
                err,
                self.connect_timeout,
                self.operation_timeout,
            )
        })?;
        match tokio::time::timeout(self.operation_timeout, op(&client)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => {
                if errors::is_broken(&err) {
                    drop(Object::take(client));
                }
                Err(errors::client(capability, what, target, err))
            }
            Err(_) => {
                drop(Object::take(client));
                Err(errors::timeout(
                    capability,
                    what,
                    target,
                    self.operation_timeout,
                ))
            }
        }
    }

    /// `start`'s work: the first connection, within the connect timeout, and `layout`'s table
    /// created or migrated under the crate's migration lock within the operation timeout.
    pub(crate) async fn start(&self, layout: &Layout<'_>) -> Result<(), DriverError> {
        let target = self.target.redacted();
        let mut client = self.first_connection().await?;
        let found = tokio::time::timeout(
            self.operation_timeout,
            migrate(&mut client, target, layout),
        )
        .await
        .map_err(|_| {
            DriverError::new(format!(
                "creating or migrating {} at {target} took longer than {} ms (`operation_timeout_ms`); another process may hold the migration lock",
                layout.table,
                self.operation_timeout.as_millis()
            ))
        })??;
        let latest = layout.migrations.len();
        if usize::try_from(found).is_ok_and(|found| found < latest) {
            tracing::info!(
                server = target,
                table = layout.table,
                from = found,
                to = latest,
                "{} created or migrated its table",
                layout.driver
            );
        }
        tracing::debug!(
            server = target,
            table = layout.table,
            "{} started",
            layout.driver
        );
        Ok(())
    }

    async fn first_connection(&self) -> Result<Object, DriverError> {
        let target = self.target.redacted();
        if self.is_stopped() {
            return Err(DriverError::new("the driver has been stopped"));
        }
        match tokio::time::timeout(self.connect_timeout, self.pool.get()).await {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(err)) => Err(errors::connect(target, err, self.connect_timeout)),
            Err(_) => Err(errors::connect(
                target,
                deadpool_postgres::PoolError::Timeout(deadpool_postgres::TimeoutType::Create),
                self.connect_timeout,
            )),
        }
    }

    /// Stop for good: later operations answer `Stopped`, pooled connections close.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.pool.close();
    }

    pub(crate) async fn health(&self) -> Health {
        let probe = self
            .run("health check", async |client| {
                client.simple_query("SELECT 1").await.map(drop)
            })
            .await;
        match probe {
            Ok(()) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }
}
