//! The `notifier.smtp` driver: [`SmtpNotifier`].

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use sandloom_driverkit::notifier::{BATCH, Message, NAME, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use tokio::sync::Semaphore;

use crate::address::server_name;
use crate::compose::{Composed, Composer};
use crate::errors::{self, Undelivered};
use crate::options::{Security, SmtpOptions};

type Transport = AsyncSmtpTransport<Tokio1Executor>;

/// Sends each message as a plain-text e-mail through an SMTP server, with lettre.
///
/// - **Recipient**: one mailbox, `ada@example.com` or `Ada <ada@example.com>`; anything else
///   (a list, a bare name, a line break) is `InvalidInput`.
/// - **Subject**: the message's, else `default_subject`, else none. One line.
/// - **Body**: sent as `text/plain; charset=utf-8`, any Unicode, any number of lines; line
///   breaks travel as CRLF, as MIME requires of text.
/// - **Metadata**: header fields `X-Sandloom-<key>: <value>` (prefix configurable, or
///   turned off with `metadata_headers = false`); keys that cannot be header names and
///   multi-line values are `InvalidInput`, so no input can add or split a header field.
/// - **Receipt id**: the Message-ID the driver gave the mail (`<uuid@sender-domain>`), the
///   handle to find it in the server's logs or the recipient's mailbox.
/// - **Batch**: messages are checked and sent one after another over pooled sessions, in
///   order; once the server is unreachable, the rest of the batch is not attempted and
///   answers the same kind of error.
///
/// Sessions are opened on demand, reused (up to `max_connections`) and checked with `NOOP`
/// before reuse.
///
/// # Errors of `send`
///
/// | what happened | kind |
/// | --- | --- |
/// | 4xx reply (greylisting, mailbox busy, server busy) | `Unavailable` |
/// | 501, 550, 551, 552, 553 reply (bad or unknown address, mailbox refused, too large) | `InvalidInput` |
/// | other 5xx reply (554 policy refusal, 530/535 authentication, 500/502/503 protocol) | `Backend` |
/// | connection refused, reset or closed (also mid-reply), DNS failure | `Unavailable` |
/// | no answer in time (connect or whole send) | `Timeout` |
/// | TLS refused (untrusted certificate, no TLS on that port), `STARTTLS` not offered, no usable AUTH mechanism | `Backend` |
/// | an address the server cannot take (non-ASCII without `SMTPUTF8`) | `InvalidInput` |
/// | the transport was shut down by `stop` | `Stopped` |
///
/// After `stop`, `send` and `send_batch` answer `Stopped`; before a successful `start`,
/// `Unavailable`. A send cut off by `send_timeout_ms` closes the pooled sessions (one of them
/// stopped mid-command and cannot be reused).
///
/// # Latency
///
/// lettre 0.11.23 does not set `TCP_NODELAY`, so after writing a message it holds back the
/// five-byte end-of-data marker until the server acknowledges the message, which a Linux
/// server does after its delayed-ACK time (40 ms): a send takes about 40 ms more than the
/// exchange needs, through this driver as through lettre directly. Upstream has fixed it
/// (lettre pull request 1159), unreleased as of 0.11.23; until then the throughput of one
/// instance is about `max_connections` messages per 45 ms.
///
/// ```no_run
/// use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::notifier::{Message, Notifier};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let notifier = SmtpNotifier::from_options(SmtpOptions {
///     port: Some(2526),
///     security: Security::Plain,
///     ..SmtpOptions::new("127.0.0.1", "Orders <orders@example.com>")
/// })?;
/// notifier.start().await?;
/// let message = Message::new("ada@example.com", "Your order shipped.\nThank you!")
///     .with_subject("Order 42")
///     .with_metadata("order", "42");
/// let receipt = notifier.send(&message).await?;
/// println!("sent as {}", receipt.id); // <…@example.com>
/// notifier.stop().await?;
/// # Ok(())
/// # }
/// ```
pub struct SmtpNotifier {
    options: SmtpOptions,
    server: String,
    composer: Composer,
    connect_timeout: Duration,
    send_timeout: Duration,
    idle_timeout: Duration,
    /// Built by `start` (lettre's pool spawns a task, so it needs the runtime), emptied by
    /// `stop`, replaced after a send timed out mid-session.
    transport: RwLock<Option<Arc<Transport>>>,
    /// One permit per session that may be open at once: lettre's pool bounds only how many
    /// idle sessions it keeps, not how many it opens.
    sessions: Semaphore,
    stopped: AtomicBool,
    /// The runtime `start` ran on: lettre's pool spawns a task when it is dropped, which
    /// panics outside a runtime, so a driver dropped there drops its transport inside this.
    runtime: RwLock<Option<tokio::runtime::Handle>>,
}

impl Drop for SmtpNotifier {
    fn drop(&mut self) {
        let transport = self
            .transport
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let runtime = self
            .runtime
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let (Some(transport), Some(runtime)) = (transport, runtime)
            && tokio::runtime::Handle::try_current().is_err()
        {
            // Spawning onto a runtime that has shut down drops the task; it does not panic.
            let _entered = runtime.enter();
            drop(transport);
        }
    }
}

impl fmt::Debug for SmtpNotifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpNotifier")
            .field("server", &self.server)
            .field("options", &self.options)
            .field("started", &self.current_transport().is_some())
            .field("stopped", &self.stopped.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

impl SmtpNotifier {
    /// The server this instance sends through, as `host:port`.
    ///
    /// ```
    /// use sandloom_driver_smtp::{SmtpNotifier, SmtpOptions};
    /// use sandloom_driverkit::Driver;
    ///
    /// let notifier =
    ///     SmtpNotifier::from_options(SmtpOptions::new("smtp.example.com", "a@example.com")).unwrap();
    /// assert_eq!(notifier.server(), "smtp.example.com:587");
    /// ```
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The address every message is sent from (`from` without its display name).
    ///
    /// ```
    /// use sandloom_driver_smtp::{SmtpNotifier, SmtpOptions};
    /// use sandloom_driverkit::Driver;
    ///
    /// let options = SmtpOptions::new("smtp.example.com", "Orders <orders@example.com>");
    /// let notifier = SmtpNotifier::from_options(options).unwrap();
    /// assert_eq!(notifier.sender_address(), "orders@example.com");
    /// ```
    pub fn sender_address(&self) -> String {
        self.composer.sender_address()
    }

    fn current_transport(&self) -> Option<Arc<Transport>> {
        self.transport
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn running_transport(&self) -> InfraResult<Arc<Transport>> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        self.current_transport().ok_or_else(|| {
            InfraError::unavailable(
                NAME,
                format!(
                    "the driver for the SMTP server at {} has not been started",
                    self.server
                ),
            )
        })
    }

    fn build_transport(&self) -> Result<Transport, lettre::transport::smtp::Error> {
        let options = &self.options;
        let tls = match options.security {
            Security::Plain => Tls::None,
            Security::Starttls => Tls::Required(self.tls_parameters()?),
            Security::Tls => Tls::Wrapper(self.tls_parameters()?),
        };
        let pool = PoolConfig::new()
            .max_size(options.max_connections)
            .idle_timeout(self.idle_timeout);
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&options.host)
            .port(options.effective_port())
            .tls(tls)
            .timeout(Some(self.connect_timeout))
            .pool_config(pool);
        if let Some(name) = &options.hello_name {
            builder = builder.hello_name(ClientId::Domain(name.clone()));
        }
        if let (Some(username), Some(password)) = (&options.username, &options.password) {
            builder = builder.credentials(Credentials::new(
                username.clone(),
                password.expose().clone(),
            ));
        }
        Ok(builder.build())
    }

    fn tls_parameters(&self) -> Result<TlsParameters, lettre::transport::smtp::Error> {
        TlsParameters::builder(self.options.host.clone())
            .dangerous_accept_invalid_certs(self.options.accept_invalid_certs)
            .build_rustls()
    }

    /// Send one composed e-mail within the send budget.
    async fn deliver(&self, composed: Composed, ascii_recipient: bool) -> Result<(), Undelivered> {
        let transport = self.running_transport().map_err(Undelivered::message)?;
        let mut in_session = false;
        let outcome = tokio::time::timeout(self.send_timeout, async {
            let _permit = self
                .sessions
                .acquire()
                .await
                .map_err(|_| Undelivered::message(InfraError::stopped(NAME)))?;
            in_session = true;
            transport
                .send(composed.email)
                .await
                .map(drop)
                .map_err(|err| errors::send_error(err, &self.server, ascii_recipient))
        })
        .await;
        match outcome {
            Ok(result) => result,
            Err(_elapsed) => {
                if in_session {
                    self.discard_sessions(&transport).await;
                }
                Err(errors::send_timeout(
                    &self.server,
                    self.options.send_timeout_ms,
                ))
            }
        }
    }

    /// Replace the transport whose send was cut off mid-session. lettre parks the abandoned
    /// session for reuse without knowing it stopped halfway through a command, and the next
    /// send on it would read the old command's reply (or, cut inside `DATA`, write into the
    /// previous mail); shutting the pool down closes it instead.
    async fn discard_sessions(&self, stale: &Arc<Transport>) {
        match self.build_transport() {
            Ok(fresh) => {
                let mut slot = self
                    .transport
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                if slot
                    .as_ref()
                    .is_some_and(|current| Arc::ptr_eq(current, stale))
                    && !self.stopped.load(Ordering::Acquire)
                {
                    *slot = Some(Arc::new(fresh));
                }
            }
            Err(err) => {
                tracing::warn!(server = %self.server, error = %err, "smtp: cannot rebuild the transport after a timeout");
                return;
            }
        }
        tracing::warn!(server = %self.server, "smtp: a send timed out mid-session; its sessions are closed");
        stale.shutdown().await;
    }

    async fn send_one(&self, message: &Message) -> Result<Receipt, Undelivered> {
        let composed = self
            .composer
            .compose(message)
            .map_err(Undelivered::message)?;
        let message_id = composed.message_id.clone();
        let ascii_recipient = message.recipient.is_ascii();
        self.deliver(composed, ascii_recipient).await?;
        tracing::debug!(server = %self.server, message_id = %message_id, "smtp: message accepted");
        Ok(Receipt::new(message_id))
    }
}

impl NotifierOps for SmtpNotifier {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.running_transport()?;
        self.send_one(message).await.map_err(|failed| failed.error)
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        self.running_transport()?;
        let mut results = Vec::with_capacity(messages.len());
        let mut unreachable: Option<(ErrorKind, String)> = None;
        for message in messages {
            let result = match &unreachable {
                // Still checked, so an invalid message answers `InvalidInput` whatever the server.
                Some((kind, reason)) => self.composer.compose(message).and_then(|_| {
                    Err(InfraError::new(
                        *kind,
                        NAME,
                        format!("not attempted, an earlier message of the batch failed: {reason}"),
                    ))
                }),
                None => self.send_one(message).await.map_err(|failed| {
                    if failed.server_unreachable {
                        unreachable =
                            Some((failed.error.kind(), failed.error.message().to_owned()));
                    }
                    failed.error
                }),
            };
            results.push(result);
        }
        Ok(results)
    }
}

impl Driver for SmtpNotifier {
    type Options = SmtpOptions;

    fn supported_features() -> &'static [&'static str] {
        &[BATCH]
    }

    fn validate(options: &SmtpOptions) -> Result<(), DriverError> {
        options
            .validate()
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: SmtpOptions) -> Result<Self, DriverError> {
        let checked = options.check()?;
        let composer = Composer {
            from: checked.from,
            reply_to: checked.reply_to,
            default_subject: options.default_subject.clone(),
            metadata_prefix: options
                .metadata_headers
                .then(|| options.metadata_header_prefix.clone()),
        };
        Ok(Self {
            server: server_name(&options.host, checked.port),
            composer,
            connect_timeout: checked.connect_timeout,
            send_timeout: checked.send_timeout,
            idle_timeout: checked.idle_timeout,
            transport: RwLock::new(None),
            sessions: Semaphore::new(options.max_connections as usize),
            stopped: AtomicBool::new(false),
            runtime: RwLock::new(None),
            options,
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(DriverError::new("the driver has been stopped"));
        }
        let security = self.options.security;
        let transport = self
            .build_transport()
            .map_err(|err| errors::start_error(err, &self.server, security))?;
        let checked = tokio::time::timeout(self.connect_timeout, transport.test_connection()).await;
        let failure = match checked {
            Ok(Ok(true)) => None,
            Ok(Ok(false)) => Some(DriverError::new(format!(
                "the SMTP server at {} opened a session but did not answer NOOP",
                self.server
            ))),
            Ok(Err(err)) => Some(errors::start_error(err, &self.server, security)),
            Err(_elapsed) => Some(errors::start_timeout(
                &self.server,
                self.options.connect_timeout_ms,
            )),
        };
        if let Some(error) = failure {
            tracing::debug!(server = %self.server, error = %error, "smtp: start failed");
            transport.shutdown().await;
            return Err(error);
        }
        *self.runtime.write().unwrap_or_else(PoisonError::into_inner) =
            Some(tokio::runtime::Handle::current());
        let previous = self
            .transport
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(Arc::new(transport));
        if let Some(previous) = previous {
            previous.shutdown().await;
        }
        tracing::info!(server = %self.server, security = %security, "smtp: session checked, ready to send");
        Ok(())
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        self.sessions.close();
        let transport = self
            .transport
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(transport) = transport {
            transport.shutdown().await;
        }
        Ok(())
    }

    async fn health(&self) -> Health {
        let transport = match self.running_transport() {
            Ok(transport) => transport,
            Err(err) => return Health::Unhealthy(err.message().to_owned()),
        };
        match tokio::time::timeout(self.connect_timeout, transport.test_connection()).await {
            Ok(Ok(true)) => Health::Healthy,
            Ok(Ok(false)) => Health::Unhealthy(format!(
                "the SMTP server at {} did not answer NOOP",
                self.server
            )),
            Ok(Err(err)) => Health::Unhealthy(format!(
                "cannot open an SMTP session with {}: {err}",
                self.server
            )),
            Err(_elapsed) => Health::Unhealthy(format!(
                "the SMTP server at {} did not answer within {} ms",
                self.server, self.options.connect_timeout_ms
            )),
        }
    }
}

impl NotifierProvider for SmtpNotifier {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
