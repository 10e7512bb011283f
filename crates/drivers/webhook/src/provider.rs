//! The `notifier.webhook` driver: one signed JSON POST per message, retried when it may help.

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER, USER_AGENT};
use reqwest::{Client, Response};
use sandloom_driverkit::notifier::{Message, NAME, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use tokio::sync::Notify;

use crate::address::Endpoint;
use crate::errors::{self, Failure};
use crate::options::WebhookOptions;
use crate::payload;
use crate::retry::{Next, RetryPolicy, parse_retry_after};
use crate::signature::{
    IDEMPOTENCY_KEY_HEADER, MESSAGE_ID_HEADER, SIGNATURE_HEADER, Signer, TIMESTAMP_HEADER,
    unix_seconds,
};

/// How much of a response body is read so its connection can be reused; a receiver that
/// answers with more loses the connection, not the delivery.
const DRAIN_LIMIT: usize = 64 * 1024;

/// The `notifier.webhook` driver: POSTs each message as JSON to one URL, signed with
/// HMAC-SHA256 when `secret` is set, retrying transient failures. See the
/// [crate docs](crate) for the body schema, the headers and how receivers verify them.
///
/// No optional feature: `send_batch` answers `Unsupported` (an HTTP endpoint has no batch
/// operation; send one by one).
///
/// ```no_run
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::notifier::{Message, Notifier};
/// use sandloom_driver_webhook::{WebhookNotifier, WebhookOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let options = WebhookOptions {
///     secret: Some("shared-with-the-receiver".into()),
///     ..WebhookOptions::new("https://hooks.example.com/sandloom")
/// };
/// let webhook = WebhookNotifier::from_options(options)?;
/// webhook.start().await?;
/// let receipt = webhook.send(&Message::new("#ops", "deployed").with_subject("release")).await?;
/// println!("delivered as {}", receipt.id); // the `id` of the JSON body
/// webhook.stop().await?;
/// # Ok(())
/// # }
/// ```
pub struct WebhookNotifier {
    endpoint: Endpoint,
    signer: Option<Signer>,
    /// Sent with every request: content type, user agent and the `headers` option.
    headers: HeaderMap,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    verify_on_start: bool,
    /// Built by `start`, dropped by `stop` (with it the connection pool).
    client: RwLock<Option<Client>>,
    stopped: AtomicBool,
    /// Wakes sends waiting on a response or a backoff when `stop` is called.
    stop_signal: Notify,
    /// Deliveries that failed on the endpoint's side since the last success.
    failures: AtomicU64,
    last_failure: Mutex<Option<String>>,
}

impl WebhookNotifier {
    /// The endpoint as errors and logs name it: scheme, `***@` for user-info, host, port and
    /// `/***` for a path or query.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// use sandloom_driver_webhook::{WebhookNotifier, WebhookOptions};
    ///
    /// let options = WebhookOptions::new("https://bot:hunter2@hooks.example.com/T0/token");
    /// let webhook = WebhookNotifier::from_options(options).unwrap();
    /// assert_eq!(webhook.endpoint(), "https://***@hooks.example.com:443/***");
    /// ```
    pub fn endpoint(&self) -> &str {
        &self.endpoint.redacted
    }

    fn client(&self) -> InfraResult<Client> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        self.client
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| InfraError::unavailable(NAME, "the driver has not been started"))
    }

    /// `future`, unless `stop` is called first (then `Stopped`).
    async fn unless_stopped<F: Future>(&self, future: F) -> InfraResult<F::Output> {
        let mut stopping = pin!(self.stop_signal.notified());
        // Registered before the flag is read, so a `stop` in between still wakes us.
        stopping.as_mut().enable();
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        tokio::select! {
            biased;
            () = stopping => Err(InfraError::stopped(NAME)),
            output = future => Ok(output),
        }
    }

    async fn deliver(&self, message: &Message) -> InfraResult<Receipt> {
        let client = self.client()?;
        validate(message)?;
        let id = uuid::Uuid::new_v4().hyphenated().to_string();
        let body = payload::encode(&id, message)?;
        let id_header = HeaderValue::from_str(&id).map_err(|err| {
            InfraError::new(ErrorKind::Backend, NAME, "invalid message id").with_source(err)
        })?;
        let mut attempt = 1;
        loop {
            let failure = match self
                .unless_stopped(self.attempt(&client, &id_header, &body))
                .await?
            {
                Ok(()) => {
                    self.failures.store(0, Ordering::Relaxed);
                    return Ok(Receipt::new(id));
                }
                Err(failure) => failure,
            };
            if !failure.retryable {
                return Err(self.failed(failure, attempt, None));
            }
            let delay = match self.retry.next(attempt, failure.retry_after) {
                Next::RetryAfter(delay) => delay,
                Next::GiveUp => return Err(self.failed(failure, attempt, None)),
                Next::TooLong(asked) => {
                    let note = format!(
                        "it asks to retry after {} s, longer than `retry_max_delay_ms`",
                        asked.as_secs()
                    );
                    return Err(self.failed(failure, attempt, Some(note)));
                }
            };
            tracing::debug!(
                endpoint = %self.endpoint.redacted,
                message_id = %id,
                attempt,
                delay_ms = delay.as_millis(),
                error = %failure.message,
                "webhook delivery failed; retrying"
            );
            self.unless_stopped(tokio::time::sleep(delay)).await?;
            attempt += 1;
        }
    }

    /// One POST. The body and the message id are the same on every attempt; the timestamp and
    /// the signature are fresh, so a late retry is not taken for a replay.
    async fn attempt(
        &self,
        client: &Client,
        id: &HeaderValue,
        body: &Bytes,
    ) -> Result<(), Failure> {
        let timestamp = unix_seconds(SystemTime::now()).to_string();
        let mut request = client
            .post(self.endpoint.url.clone())
            .header(MESSAGE_ID_HEADER, id.clone())
            .header(IDEMPOTENCY_KEY_HEADER, id.clone());
        if let Some(signer) = &self.signer {
            request = request.header(SIGNATURE_HEADER, signer.sign(&timestamp, body));
        }
        if let Some(credentials) = &self.endpoint.credentials {
            request = request.basic_auth(&credentials.username, credentials.password.as_ref());
        }
        let response = request
            .header(TIMESTAMP_HEADER, timestamp)
            .body(body.clone())
            .send()
            .await
            .map_err(|err| errors::from_transport(err, &self.endpoint.redacted, self.timeout))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        drain(response).await;
        if status.is_success() {
            Ok(())
        } else {
            Err(errors::from_status(
                status,
                &self.endpoint.redacted,
                retry_after,
            ))
        }
    }

    fn failed(&self, failure: Failure, attempts: u32, note: Option<String>) -> InfraError {
        let error = failure.into_error(attempts, note);
        // A refused message is the caller's problem, not the endpoint's health.
        if matches!(
            error.kind(),
            ErrorKind::Unavailable | ErrorKind::Timeout | ErrorKind::Backend
        ) {
            self.failures.fetch_add(1, Ordering::Relaxed);
            *self
                .last_failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(error.message().to_owned());
        }
        tracing::debug!(
            endpoint = %self.endpoint.redacted,
            attempts,
            kind = %error.kind(),
            error = %error.message(),
            "webhook delivery failed"
        );
        error
    }

    /// A TCP connection to the endpoint's host and port within the connect timeout: whether
    /// it is reachable, without sending anything a receiver would take for a message.
    async fn reach(&self) -> Result<(), String> {
        let connect = tokio::net::TcpStream::connect(&self.endpoint.authority);
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(_stream)) => Ok(()),
            Ok(Err(err)) => Err(format!(
                "cannot reach the webhook endpoint {}: {err}",
                self.endpoint.redacted
            )),
            Err(_) => Err(format!(
                "cannot reach the webhook endpoint {} within {} ms (`connect_timeout_ms`)",
                self.endpoint.redacted,
                self.connect_timeout.as_millis()
            )),
        }
    }

    fn build_client(&self) -> Result<Client, DriverError> {
        let mut builder = Client::builder()
            .default_headers(self.headers.clone())
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::none());
        if self.endpoint.url.scheme() == "http" {
            // Plain HTTP needs no CA certificates: skip loading the system's.
            builder = builder.tls_certs_only(std::iter::empty::<reqwest::Certificate>());
        }
        builder.build().map_err(|err| {
            DriverError::new(
                "cannot set up the HTTP client (for https:// it needs the system's CA \
                 certificates)",
            )
            .with_source(err.without_url())
        })
    }
}

/// What every notifier refuses: a blank recipient or an empty body. Any other recipient is
/// passed on: the receiver decides what it addresses.
fn validate(message: &Message) -> InfraResult<()> {
    if message.recipient.trim().is_empty() {
        return Err(InfraError::invalid_input(
            NAME,
            "the recipient must not be empty or blank",
        ));
    }
    if message.body.is_empty() {
        return Err(InfraError::invalid_input(
            NAME,
            "the message body must not be empty",
        ));
    }
    Ok(())
}

/// Read what remains of the response, up to [`DRAIN_LIMIT`], so the connection goes back to
/// the pool. The status already decided the outcome: errors here are ignored.
async fn drain(mut response: Response) {
    let mut left = DRAIN_LIMIT;
    while let Ok(Some(chunk)) = response.chunk().await {
        if chunk.len() >= left {
            break;
        }
        left -= chunk.len();
    }
}

impl fmt::Debug for WebhookNotifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookNotifier")
            .field("endpoint", &self.endpoint.redacted)
            .field("signed", &self.signer.is_some())
            .field(
                "headers",
                &self
                    .headers
                    .keys()
                    .map(reqwest::header::HeaderName::as_str)
                    .collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry", &self.retry)
            .field("stopped", &self.stopped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl NotifierOps for WebhookNotifier {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.deliver(message).await
    }
}

impl Driver for WebhookNotifier {
    type Options = WebhookOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn validate(options: &WebhookOptions) -> Result<(), DriverError> {
        options
            .check()
            .map(drop)
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: WebhookOptions) -> Result<Self, DriverError> {
        let checked = options.check()?;
        let mut headers = HeaderMap::with_capacity(checked.headers.len() + 2);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!(
                "sandloom-driver-webhook/",
                env!("CARGO_PKG_VERSION")
            )),
        );
        // After the defaults, so `headers` may replace the user agent.
        headers.extend(checked.headers);
        Ok(Self {
            endpoint: checked.endpoint,
            signer: checked.signer,
            headers,
            timeout: checked.timeout,
            connect_timeout: checked.connect_timeout,
            retry: checked.retry,
            verify_on_start: checked.verify_on_start,
            client: RwLock::new(None),
            stopped: AtomicBool::new(false),
            stop_signal: Notify::new(),
            failures: AtomicU64::new(0),
            last_failure: Mutex::new(None),
        })
    }

    /// Builds the HTTP client; with `verify_on_start`, first checks that the endpoint accepts
    /// TCP connections. Sends nothing: a webhook has no standard health URL, and a probe POST
    /// would reach receivers as a message.
    async fn start(&self) -> Result<(), DriverError> {
        if self.verify_on_start {
            self.reach().await.map_err(DriverError::new)?;
        }
        let client = self.build_client()?;
        if self.stopped.load(Ordering::Acquire) {
            return Err(DriverError::new("the driver has been stopped"));
        }
        *self.client.write().unwrap_or_else(PoisonError::into_inner) = Some(client);
        tracing::debug!(endpoint = %self.endpoint.redacted, "webhook notifier started");
        Ok(())
    }

    /// Drops the HTTP client and its idle connections, and ends sends in flight or waiting to
    /// retry with `Stopped`.
    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        self.stop_signal.notify_waiters();
        self.client
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        Ok(())
    }

    /// Unhealthy when stopped, not started, or when the endpoint's host does not accept a TCP
    /// connection within `connect_timeout_ms`; degraded while the latest deliveries failed on
    /// the endpoint's side (unreachable, timed out, 5xx, 401, …); healthy otherwise.
    async fn health(&self) -> Health {
        if let Err(err) = self.client() {
            return Health::Unhealthy(err.to_string());
        }
        if let Err(unreachable) = self.reach().await {
            return Health::Unhealthy(unreachable);
        }
        match self.failures.load(Ordering::Relaxed) {
            0 => Health::Healthy,
            failures => {
                let last = self
                    .last_failure
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
                    .unwrap_or_default();
                Health::Degraded(format!(
                    "the last {failures} deliveries failed; the latest: {last}"
                ))
            }
        }
    }
}

impl NotifierProvider for WebhookNotifier {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
