//! The `notifier` capability: send a message to a recipient (an address, a channel, a URL).
//!
//! Required operation: [`send`](Notifier::send). Optional feature: [`BATCH`].

use std::collections::BTreeMap;
use std::time::SystemTime;

use async_trait::async_trait;

use crate::error::{InfraError, InfraResult};

/// Capability name of the notifier.
pub const NAME: &str = "notifier";

/// Feature: several messages in one call ([`Notifier::send_batch`]).
pub const BATCH: &str = "batch";
/// Every optional feature a notifier driver may declare.
pub const FEATURES: &[&str] = &[BATCH];
/// Every required operation: never a feature.
pub const REQUIRED_OPERATIONS: &[&str] = &["send"];

/// One message to one recipient.
///
/// ```
/// use sandloom_sdk_infra::notifier::Message;
///
/// let msg = Message::new("ops@example.com", "disk almost full")
///     .with_subject("alert")
///     .with_metadata("severity", "high");
/// assert_eq!(msg.recipient, "ops@example.com");
/// assert_eq!(msg.metadata["severity"], "high");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Message {
    /// Who receives it, in the driver's address syntax (an e-mail address, a URL, a channel).
    pub recipient: String,
    /// An optional subject or title.
    pub subject: Option<String>,
    /// The text. Must not be empty.
    pub body: String,
    /// Extra key-value pairs a driver may pass on (headers, tags).
    pub metadata: BTreeMap<String, String>,
}

impl Message {
    /// A message with a recipient and a body.
    ///
    /// ```
    /// let m = sandloom_sdk_infra::notifier::Message::new("#ops", "deployed");
    /// assert!(m.subject.is_none());
    /// ```
    pub fn new(recipient: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            recipient: recipient.into(),
            subject: None,
            body: body.into(),
            metadata: BTreeMap::new(),
        }
    }

    /// Set the subject.
    ///
    /// ```
    /// let m = sandloom_sdk_infra::notifier::Message::new("a@b.c", "x").with_subject("hi");
    /// assert_eq!(m.subject.as_deref(), Some("hi"));
    /// ```
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Add one metadata pair.
    ///
    /// ```
    /// let m = sandloom_sdk_infra::notifier::Message::new("a@b.c", "x").with_metadata("k", "v");
    /// assert_eq!(m.metadata.len(), 1);
    /// ```
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// Proof that a driver accepted a message for delivery.
///
/// ```
/// use sandloom_sdk_infra::notifier::Receipt;
/// let r = Receipt::new("msg-1");
/// assert_eq!(r.id, "msg-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Receipt {
    /// The driver's identifier of the accepted message, unique per driver instance.
    pub id: String,
    /// When the driver accepted it.
    pub accepted_at: SystemTime,
}

impl Receipt {
    /// A receipt with `id`, accepted now.
    ///
    /// ```
    /// let r = sandloom_sdk_infra::notifier::Receipt::new("7");
    /// assert!(r.accepted_at <= std::time::SystemTime::now());
    /// ```
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            accepted_at: SystemTime::now(),
        }
    }
}

/// Sends messages.
///
/// ```
/// use sandloom_sdk_infra::notifier::{Message, Notifier};
/// use sandloom_sdk_infra::InfraResult;
///
/// async fn alert(notifier: &dyn Notifier) -> InfraResult<String> {
///     let receipt = notifier.send(&Message::new("ops@example.com", "disk full")).await?;
///     Ok(receipt.id)
/// }
/// ```
#[async_trait]
pub trait Notifier: Send + Sync {
    /// Send one message; the receipt says the driver accepted it.
    ///
    /// # Errors
    /// `InvalidInput` for an empty body or a recipient the driver cannot address;
    /// `Unavailable`/`Timeout` when the backend fails; `Stopped` after the driver stopped.
    async fn send(&self, message: &Message) -> InfraResult<Receipt>;

    /// Send several messages; one result per message, in order. Feature [`BATCH`].
    ///
    /// # Errors
    /// `Unsupported` without the feature; a failure of the whole call as `send`.
    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        let _ = messages;
        Err(InfraError::unsupported(NAME, "send_batch", BATCH))
    }
}
