//! The `notifier.log` driver: each message as a `tracing` event.

use crate::serving::Serving;
use sandloom_driverkit::notifier::{BATCH, Message, NAME, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use super::options::{LogLevel, LogNotifierOptions};

/// The `tracing` target every `notifier.log` event uses.
const TARGET: &str = "sandloom::notifier";

/// Metadata whose key contains one of these (ignoring ASCII case) is logged as `[redacted]`.
const SECRET_MARKERS: &[&str] = &[
    "secret",
    "token",
    "password",
    "passwd",
    "authorization",
    "credential",
    "api_key",
    "apikey",
];

/// The `notifier.log` driver: every message becomes one `tracing` event.
///
/// Events have target `sandloom::notifier` and fields `receipt`, `recipient`, `subject`,
/// `body_len`, `body` and `metadata`. Metadata values whose key suggests a secret (it contains
/// `secret`, `token`, `password`, `passwd`, `authorization`, `credential`, `api_key` or
/// `apikey`, in any case) are written as `[redacted]`. Receipt ids are `log-1`, `log-2`, …,
/// unique per driver instance. Feature: `batch`.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::notifier::{Message, Notifier};
/// use sandloom_embedded::{LogNotifier, LogNotifierOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let notifier = LogNotifier::from_options(LogNotifierOptions::default()).unwrap();
///     let receipt = notifier.send(&Message::new("#ops", "deployed")).await.unwrap();
///     assert_eq!(receipt.id, "log-1");
/// }
/// ```
#[derive(Debug)]
pub struct LogNotifier {
    level: LogLevel,
    sent: AtomicU64,
    serving: Serving,
}

/// Check what every embedded notifier requires of a message.
pub(crate) fn validate_message(message: &Message) -> InfraResult<()> {
    if message.recipient.trim().is_empty() {
        Err(InfraError::invalid_input(
            NAME,
            "the recipient must not be empty or blank",
        ))
    } else if message.body.is_empty() {
        Err(InfraError::invalid_input(
            NAME,
            "the message body must not be empty",
        ))
    } else {
        Ok(())
    }
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_MARKERS.iter().any(|marker| key.contains(marker))
}

/// The metadata as `{key: value, …}`, with secret-looking values redacted.
fn loggable_metadata(metadata: &BTreeMap<String, String>) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in metadata.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let shown = if is_secret_key(key) {
            "[redacted]"
        } else {
            value.as_str()
        };
        // Writing to a String cannot fail.
        let _ = write!(out, "{key:?}: {shown:?}");
    }
    out.push('}');
    out
}

impl LogNotifier {
    fn emit(&self, message: &Message) -> InfraResult<Receipt> {
        self.serving.check(NAME)?;
        validate_message(message)?;
        let id = format!("log-{}", self.sent.fetch_add(1, Ordering::Relaxed) + 1);
        let subject = message.subject.as_deref().unwrap_or("");
        let metadata = loggable_metadata(&message.metadata);
        let body_len = message.body.len();
        let body = message.body.as_str();
        let recipient = message.recipient.as_str();
        macro_rules! event {
            ($level:expr) => {
                tracing::event!(
                    target: TARGET,
                    $level,
                    receipt = %id,
                    recipient,
                    subject,
                    body_len,
                    body,
                    metadata = %metadata,
                    "notification"
                )
            };
        }
        match self.level {
            LogLevel::Debug => event!(tracing::Level::DEBUG),
            LogLevel::Info => event!(tracing::Level::INFO),
            LogLevel::Warn => event!(tracing::Level::WARN),
        }
        Ok(Receipt::new(id))
    }
}

impl NotifierOps for LogNotifier {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.emit(message)
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        self.serving.check(NAME)?;
        Ok(messages.iter().map(|message| self.emit(message)).collect())
    }
}

impl Driver for LogNotifier {
    type Options = LogNotifierOptions;

    fn supported_features() -> &'static [&'static str] {
        &[BATCH]
    }

    fn from_options(options: LogNotifierOptions) -> Result<Self, DriverError> {
        Ok(Self {
            level: options.level,
            sent: AtomicU64::new(0),
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl NotifierProvider for LogNotifier {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests;
