//! The connection lifecycle both drivers of the crate share (`cache.redis`, `lock.redis`): the
//! server they reach ([`Endpoint`]), connecting and `PING`ing in `start`, one multiplexed
//! connection for every caller while running, `Stopped` after `stop`, `health` by `PING`.

use std::path::PathBuf;
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::{Client, ConnectionAddr, ConnectionInfo};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{DriverError, Health, SecretUrl};

use crate::{address, client};

/// The server options every driver of the crate has, with their checks.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) url: SecretUrl,
    pub(crate) connect_timeout_ms: u64,
    pub(crate) response_timeout_ms: u64,
    pub(crate) tls_ca_file: Option<PathBuf>,
}

impl Endpoint {
    /// Every check of the server options; the connection info of `url` when they pass.
    pub(crate) fn check(&self) -> Result<ConnectionInfo, DriverError> {
        if self.connect_timeout_ms == 0 {
            return Err(DriverError::new("`connect_timeout_ms` must be at least 1"));
        }
        if self.response_timeout_ms == 0 {
            return Err(DriverError::new("`response_timeout_ms` must be at least 1"));
        }
        let info = address::connection_info(&self.url)?;
        let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
        if self.tls_ca_file.is_some() && !tls {
            return Err(DriverError::new(format!(
                "`tls_ca_file` needs a `rediss://` url, not {}",
                self.url
            )));
        }
        if self
            .tls_ca_file
            .as_ref()
            .is_some_and(|path| path.as_os_str().is_empty())
        {
            return Err(DriverError::new("`tls_ca_file` must not be empty when set"));
        }
        Ok(info)
    }

    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    pub(crate) fn response_timeout(&self) -> Duration {
        Duration::from_millis(self.response_timeout_ms)
    }
}

/// Where a driver is in its lifecycle.
enum State {
    /// Built, not started: operations answer `Unavailable`.
    Idle,
    /// Started: operations share the manager's multiplexed connection; the client opens
    /// dedicated connections (`lock.redis`'s pub/sub).
    Running(ConnectionManager, Box<Client>),
    /// Stopped for good: operations answer `Stopped`.
    Stopped,
}

/// One driver's connection to its server, through its lifecycle.
pub(crate) struct Connection {
    /// The driver's name, as logs and `start` errors say it (`cache.redis`).
    driver: &'static str,
    /// The capability's name, as operation errors say it (`cache`).
    capability: &'static str,
    endpoint: Endpoint,
    /// The parsed `url`: holds the password, so it is never shown.
    info: ConnectionInfo,
    /// `url` with its secrets redacted: what errors and logs name.
    address: String,
    state: RwLock<State>,
}

impl Connection {
    /// A connection to `endpoint` (already checked into `info`), not yet made.
    pub(crate) fn new(
        driver: &'static str,
        capability: &'static str,
        endpoint: Endpoint,
        info: ConnectionInfo,
    ) -> Self {
        Self {
            driver,
            capability,
            address: endpoint.url.redacted(),
            endpoint,
            info,
            state: RwLock::new(State::Idle),
        }
    }

    /// The server's address, its secrets redacted.
    pub(crate) fn address(&self) -> &str {
        &self.address
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `idle`, `running` or `stopped`, for `Debug`.
    pub(crate) fn state_name(&self) -> &'static str {
        match *self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Idle => "idle",
            State::Running(..) => "running",
            State::Stopped => "stopped",
        }
    }

    /// The shared connection, or why there is none.
    pub(crate) fn manager(&self) -> InfraResult<ConnectionManager> {
        self.running().map(|(manager, _)| manager)
    }

    /// The client, for a dedicated connection, or why there is none.
    pub(crate) fn client(&self) -> InfraResult<Client> {
        self.running().map(|(_, client)| client)
    }

    fn running(&self) -> InfraResult<(ConnectionManager, Client)> {
        match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Running(manager, client) => Ok((manager.clone(), Client::clone(client))),
            State::Stopped => Err(InfraError::stopped(self.capability)),
            State::Idle => Err(InfraError::unavailable(
                self.capability,
                "the driver has not been started",
            )),
        }
    }

    fn start_error(&self, err: redis::RedisError) -> DriverError {
        DriverError::new(format!(
            "cannot connect to Redis at {}: {err}",
            self.address
        ))
        .with_source(err)
    }

    /// Connect and check the server answers.
    async fn connect(&self) -> Result<(ConnectionManager, Client), DriverError> {
        let client = client::client(&self.endpoint, self.info.clone()).await?;
        let mut manager = client::connect(client.clone(), client::manager_config(&self.endpoint))
            .await
            .map_err(|err| self.start_error(err))?;
        redis::cmd("PING")
            .query_async::<()>(&mut manager)
            .await
            .map_err(|err| self.start_error(err))?;
        Ok((manager, client))
    }

    /// Connect and `PING` within `connect_timeout_ms`; a second `start` does nothing, a
    /// `start` after `stop` fails.
    pub(crate) async fn start(&self) -> Result<(), DriverError> {
        match *self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Idle => {}
            State::Running(..) => return Ok(()),
            State::Stopped => {
                return Err(DriverError::new(format!(
                    "{} was stopped; a stopped driver does not start again",
                    self.driver
                )));
            }
        }
        let limit = self.endpoint.connect_timeout();
        let (manager, client) =
            tokio::time::timeout(limit, self.connect())
                .await
                .map_err(|_| {
                    DriverError::new(format!(
                        "Redis at {} did not answer PING within {} ms (`connect_timeout_ms`)",
                        self.address, self.endpoint.connect_timeout_ms
                    ))
                })??;
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        match *state {
            State::Idle => *state = State::Running(manager, Box::new(client)),
            State::Running(..) => {} // a concurrent start won; this connection closes on drop
            State::Stopped => {
                return Err(DriverError::new(format!(
                    "{} was stopped while it was starting",
                    self.driver
                )));
            }
        }
        drop(state);
        tracing::info!(address = %self.address, "{} connected", self.driver);
        Ok(())
    }

    /// Stop for good. Dropping the last handle closes the connection; calls still in flight
    /// hold their own handle and finish first.
    pub(crate) fn stop(&self) {
        let previous = std::mem::replace(
            &mut *self.state.write().unwrap_or_else(PoisonError::into_inner),
            State::Stopped,
        );
        if let State::Running(manager, client) = previous {
            drop((manager, client));
            tracing::info!(address = %self.address, "{} stopped", self.driver);
        }
    }

    /// `PING` on the shared connection.
    pub(crate) async fn health(&self) -> Health {
        let mut connection = match self.manager() {
            Ok(connection) => connection,
            Err(err) => return Health::Unhealthy(err.to_string()),
        };
        match redis::cmd("PING").query_async::<()>(&mut connection).await {
            Ok(()) => Health::Healthy,
            Err(err) => Health::Unhealthy(format!("PING to {} failed: {err}", self.address)),
        }
    }
}
