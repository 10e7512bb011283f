//! The connection to the broker: its two channels, and reconnection with backoff.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lapin::options::{BasicQosOptions, ConfirmSelectOptions};
use lapin::types::ShortString;
use lapin::{Channel, Connection, ConnectionProperties};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::taskqueue::NAME;
use tokio::time::Instant;

use crate::address::Address;
use crate::errors::Scrubbed;

/// The first wait after a failed connection attempt; it doubles up to the configured maximum.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; recover anyway rather than propagate.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One open connection and its channels.
pub(crate) struct Link {
    connection: Arc<Connection>,
    /// In confirm mode: every publish awaits the broker's confirm. Declarations go here too, so
    /// that a refused declaration closes this channel and not the one holding reservations.
    pub(crate) publisher: Channel,
    /// Gets, consumers and acks: every reserved task is an unacked delivery of this channel.
    /// Prefetch 1 per consumer, so a waiting `reserve` never has more than one task in flight.
    pub(crate) consumer: Channel,
    /// Queues declared on this connection, and when.
    declared: Arc<Mutex<HashMap<ShortString, Instant>>>,
}

impl Link {
    fn usable(&self) -> bool {
        self.connection.status().connected()
            && self.publisher.status().connected()
            && self.consumer.status().connected()
    }

    /// A channel of its own, for work that may close it (listing dead letters).
    pub(crate) async fn scratch_channel(&self) -> lapin::Result<Channel> {
        self.connection.create_channel().await
    }

    /// Whether `queue` was declared on this connection less than `fresh_for` ago.
    pub(crate) fn declared_within(&self, queue: &ShortString, fresh_for: Option<Duration>) -> bool {
        lock(&self.declared)
            .get(queue)
            .is_some_and(|at| fresh_for.is_none_or(|fresh| at.elapsed() < fresh))
    }

    pub(crate) fn mark_declared(&self, queue: &ShortString) {
        lock(&self.declared).insert(queue.clone(), Instant::now());
    }

    pub(crate) fn forget_declared(&self, queue: &ShortString) {
        lock(&self.declared).remove(queue);
    }
}

/// When to try connecting again, and why the last attempt failed.
#[derive(Default)]
struct Backoff {
    failures: u32,
    next_attempt: Option<Instant>,
    last_failure: String,
}

/// Hands out the current [`Link`], reconnecting when it was lost.
pub(crate) struct Connector {
    address: Address,
    connect_timeout: Duration,
    backoff_max: Duration,
    current: Mutex<Option<Arc<Link>>>,
    /// Held while (re)connecting, so concurrent operations wait for one attempt.
    repair: tokio::sync::Mutex<Backoff>,
    closed: std::sync::atomic::AtomicBool,
}

impl Connector {
    pub(crate) fn new(address: Address, connect_timeout: Duration, backoff_max: Duration) -> Self {
        Self {
            address,
            connect_timeout,
            backoff_max,
            current: Mutex::new(None),
            repair: tokio::sync::Mutex::new(Backoff::default()),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn address(&self) -> &Address {
        &self.address
    }

    fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    fn usable_current(&self) -> Option<Arc<Link>> {
        lock(&self.current)
            .as_ref()
            .filter(|link| link.usable())
            .cloned()
    }

    /// The usable link, reconnecting (or reopening a closed channel) when needed. While the
    /// backoff after a failed attempt runs, answers `Unavailable` at once.
    pub(crate) async fn link(&self) -> InfraResult<Arc<Link>> {
        if let Some(link) = self.usable_current() {
            return Ok(link);
        }
        let mut backoff = self.repair.lock().await;
        if self.is_closed() {
            return Err(InfraError::stopped(NAME));
        }
        if let Some(link) = self.usable_current() {
            return Ok(link);
        }
        if let Some(at) = backoff.next_attempt
            && Instant::now() < at
        {
            return Err(InfraError::unavailable(
                NAME,
                format!(
                    "not connected to {}: {}; next attempt in {} ms",
                    self.address.shown(),
                    backoff.last_failure,
                    at.saturating_duration_since(Instant::now()).as_millis()
                ),
            ));
        }
        let previous = lock(&self.current).take();
        match self.open(previous).await {
            Ok(link) => {
                *backoff = Backoff::default();
                let link = Arc::new(link);
                *lock(&self.current) = Some(Arc::clone(&link));
                Ok(link)
            }
            Err(err) => {
                backoff.failures = backoff.failures.saturating_add(1);
                let wait = FIRST_BACKOFF
                    .saturating_mul(1 << backoff.failures.min(16).saturating_sub(1))
                    .min(self.backoff_max);
                backoff.next_attempt = Some(Instant::now() + wait);
                err.message().clone_into(&mut backoff.last_failure);
                tracing::warn!(
                    address = self.address.shown(),
                    retry_in_ms = wait.as_millis() as u64,
                    "taskqueue.amqp: {}",
                    err.message()
                );
                Err(err)
            }
        }
    }

    /// Connect now, whatever the backoff says (for `start`).
    pub(crate) async fn connect(&self) -> InfraResult<()> {
        let mut backoff = self.repair.lock().await;
        let link = Arc::new(self.open(None).await?);
        *backoff = Backoff::default();
        *lock(&self.current) = Some(link);
        Ok(())
    }

    /// A link reusing what still works of `previous`: its connection when that is alive (only
    /// closed channels are reopened), else a new connection.
    async fn open(&self, previous: Option<Arc<Link>>) -> InfraResult<Link> {
        let work = async {
            if let Some(previous) = previous.filter(|p| p.connection.status().connected()) {
                let publisher = if previous.publisher.status().connected() {
                    previous.publisher.clone()
                } else {
                    publisher_channel(&previous.connection).await?
                };
                let consumer = if previous.consumer.status().connected() {
                    previous.consumer.clone()
                } else {
                    consumer_channel(&previous.connection).await?
                };
                return Ok(Link {
                    connection: Arc::clone(&previous.connection),
                    publisher,
                    consumer,
                    declared: Arc::clone(&previous.declared),
                });
            }
            let properties = ConnectionProperties::default()
                .with_connection_name("sandloom taskqueue.amqp".into());
            let connection =
                Connection::connect_uri(self.address.uri().clone(), properties).await?;
            let publisher = publisher_channel(&connection).await?;
            let consumer = consumer_channel(&connection).await?;
            Ok(Link {
                connection: Arc::new(connection),
                publisher,
                consumer,
                declared: Arc::default(),
            })
        };
        match tokio::time::timeout(self.connect_timeout, work).await {
            Ok(Ok(link)) => Ok(link),
            Ok(Err(err)) => {
                let source = Scrubbed::new(&self.address, &err);
                let kind = match crate::errors::kind_of(&err) {
                    // Refused credentials or vhost: retrying will not help, but to the caller the
                    // broker is unusable either way.
                    ErrorKind::Backend | ErrorKind::NotFound => ErrorKind::Unavailable,
                    kind => kind,
                };
                Err(InfraError::new(
                    kind,
                    NAME,
                    format!(
                        "cannot connect to RabbitMQ at {}: {source}",
                        self.address.shown()
                    ),
                )
                .with_source(source))
            }
            Err(_) => Err(InfraError::new(
                ErrorKind::Timeout,
                NAME,
                format!(
                    "cannot connect to RabbitMQ at {}: no connection within {} ms (`connect_timeout_ms`)",
                    self.address.shown(),
                    self.connect_timeout.as_millis()
                ),
            )),
        }
    }

    /// Whether a connection is open and usable now (no I/O).
    pub(crate) fn connected(&self) -> bool {
        self.usable_current().is_some()
    }

    /// Close the connection for good: later calls to [`Connector::link`] answer `Stopped`.
    pub(crate) async fn close(&self) -> Result<(), String> {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        let _backoff = self.repair.lock().await;
        let Some(link) = lock(&self.current).take() else {
            return Ok(());
        };
        if !link.connection.status().connected() {
            return Ok(());
        }
        // The broker puts every unacked delivery of the connection back in its queue.
        match tokio::time::timeout(
            self.connect_timeout,
            link.connection.close(200, "stopped".into()),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!(
                "closing the connection to {} failed: {}",
                self.address.shown(),
                Scrubbed::new(&self.address, &err)
            )),
            Err(_) => Err(format!(
                "closing the connection to {} did not finish within {} ms",
                self.address.shown(),
                self.connect_timeout.as_millis()
            )),
        }
    }
}

async fn publisher_channel(connection: &Connection) -> lapin::Result<Channel> {
    let channel = connection.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    Ok(channel)
}

async fn consumer_channel(connection: &Connection) -> lapin::Result<Channel> {
    let channel = connection.create_channel().await?;
    channel
        .basic_qos(1, BasicQosOptions { global: false })
        .await?;
    Ok(channel)
}
