//! The `notifier` capability: send a message to a recipient (an address, a channel, a URL).
//!
//! Required operation: [`send`](Notifier::send). Optional feature: [`BATCH`].
//!
//! What every driver guarantees, beyond the signatures:
//!
//! - **Each message to its own recipient.** A message goes to its recipient only, with its own
//!   subject, metadata and body, whether messages to several recipients are sent one after
//!   another, at once from many tasks, or in one batch. Nothing of one message (its recipient
//!   included) carries over to another.
//! - **Exact content, at any size a user sends.** The body, subject and metadata arrive as
//!   given: a body of at least 256 KiB (long lines, lines that are a lone `.` or start with one,
//!   trailing spaces, any Unicode), at least 64 metadata pairs and a subject of at least 300
//!   characters are accepted and delivered whole, never truncated or trimmed. A driver whose
//!   service takes less refuses the message with `InvalidInput` saying why, and documents its
//!   limits. Past those sizes a message likewise arrives whole or is refused: it is never cut.
//!   Metadata keys are distinct when their bytes differ: keys that differ only in letter case
//!   (which e-mail and HTTP header names ignore), and the empty key, each arrive exactly or the
//!   message is refused with `InvalidInput`; no key is merged with another or dropped.
//! - **An empty subject is no subject.** `Some("")` is accepted like `None`, and may arrive as
//!   either (an e-mail has no way to tell them apart); it is never `InvalidInput`.
//! - **Receipts.** A receipt's id differs from every other id the instance answered, across
//!   concurrent sends and batches; its `accepted_at` is a time during the call that answered it
//!   (for a batch, during the `send_batch` call).
//!
//! The constants are the names drivers declare and modules require:
//!
//! ```
//! use sandloom_sdk_infra::notifier::{BATCH, FEATURES, NAME, REQUIRED_OPERATIONS};
//! use sandloom_sdk_infra::{requires, NOTIFIER};
//!
//! // Startup refuses a `notifier.digest` whose driver does not declare `batch`.
//! requires!(NOTIFIER, "digest", features = [BATCH]);
//!
//! # fn main() {
//! assert_eq!(NAME, NOTIFIER.name());
//! assert_eq!(BATCH, "batch");
//! assert_eq!(FEATURES, [BATCH]);
//! assert_eq!(REQUIRED_OPERATIONS, ["send"]);
//! # }
//! ```

use std::collections::BTreeMap;
use std::time::SystemTime;

/// Capability name of the notifier, as written in `INFRA` (`[notifier.default]`); see the
/// [module example](self).
pub const NAME: &str = "notifier";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`Notifier`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::notifier::FUTURE_BYTES, 256);
/// ```
pub const FUTURE_BYTES: usize = 256;

/// Feature: several messages in one call ([`Notifier::send_batch`]).
pub const BATCH: &str = "batch";

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

/// The `notifier` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __notifier_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "notifier",
            stability: Stable,
            version: (1, 0, 0),
            features: ["batch"],
            ops: NotifierOps,
            future_bytes: $crate::notifier::FUTURE_BYTES,
            trait: {
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
                pub trait Notifier: Send + Sync {
                    /// Send one message; the receipt says the driver accepted it.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::notifier::{Message, Notifier};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// /// The receipt id, or `None` when the driver refused this recipient.
                    /// async fn welcome(notifier: &dyn Notifier, email: &str) -> InfraResult<Option<String>> {
                    ///     let message = Message::new(email, "Welcome aboard!").with_subject("Welcome");
                    ///     match notifier.send(&message).await {
                    ///         Ok(receipt) => Ok(Some(receipt.id)),
                    ///         Err(err) if err.kind() == ErrorKind::InvalidInput => Ok(None),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for an empty body or a recipient the driver cannot address;
                    /// `Unavailable`/`Timeout` when the backend fails; `Stopped` after the driver stopped.
                    async fn send(&self, message: &$crate::notifier::Message) -> $crate::InfraResult<$crate::notifier::Receipt>;

                    /// Send several messages; one result per message, in order. Feature [`BATCH`].
                    ///
                    /// A batch of any length (100 messages and more) answers exactly one result per message, at
                    /// the message's index. A message that is invalid (an empty body, a blank recipient) fails
                    /// alone with `InvalidInput`, and the others are sent; the messages of one batch may go to
                    /// different recipients, each to its own. The messages a batch sends are delivered in the
                    /// batch's order.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::notifier::{Message, Notifier, NotifierOps, Receipt};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// /// One call where the driver batches, one `send` per message where it does not.
                    /// async fn send_all(
                    ///     notifier: &dyn Notifier,
                    ///     messages: &[Message],
                    /// ) -> InfraResult<Vec<InfraResult<Receipt>>> {
                    ///     match notifier.send_batch(messages).await {
                    ///         Err(err) if err.kind() == ErrorKind::Unsupported => {
                    ///             let mut results = Vec::with_capacity(messages.len());
                    ///             for message in messages {
                    ///                 results.push(notifier.send(message).await);
                    ///             }
                    ///             Ok(results)
                    ///         }
                    ///         result => result,
                    ///     }
                    /// }
                    /// # struct OneByOne;
                    /// # impl NotifierOps for OneByOne {
                    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
                    /// #         Ok(Receipt::new(format!("to {}", message.recipient)))
                    /// #     }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `OneByOne` implements only `send`: it does not declare `batch`.
                    /// let messages = [Message::new("ada@example.com", "hi"), Message::new("bob@example.com", "hi")];
                    /// let err = block_on(Notifier::send_batch(&OneByOne, &messages)).unwrap_err();
                    /// assert_eq!(err.kind(), ErrorKind::Unsupported);
                    /// let results = block_on(send_all(&OneByOne, &messages)).unwrap();
                    /// assert_eq!(results[1].as_ref().unwrap().id, "to bob@example.com");
                    /// ```
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; a failure of the whole call as `send`.
                    #[feature = "batch"]
                    async fn send_batch(&self, messages: &[$crate::notifier::Message]) -> $crate::InfraResult<Vec<$crate::InfraResult<$crate::notifier::Receipt>>>;
                }
            }
        }
    };
}

crate::__notifier_contract!([crate::__operation_trait] []);
crate::__notifier_contract!([crate::__capability_constants] []);
