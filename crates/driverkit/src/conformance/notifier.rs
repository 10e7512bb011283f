//! The `notifier` kit: [`NotifierConformance`].
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`notifier_conformance!`](crate::notifier_conformance)
//! instead.
//!
//! ```
//! use sandloom_driverkit::conformance::notifier::NotifierConformance;
//! use sandloom_driverkit::NoOptions;
//! # use std::sync::Mutex;
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
//! # use sandloom_driverkit::sdk::{InfraError, InfraResult};
//! # /// Keeps what it sends: a stand-in for a driver under test.
//! # #[derive(Default)]
//! # pub struct Outbox(Mutex<Vec<Message>>);
//! # impl Outbox {
//! #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
//! # }
//! # #[async_trait]
//! # impl Notifier for Outbox {
//! #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
//! #         if message.body.is_empty() {
//! #             return Err(InfraError::invalid_input("notifier", "empty message body"));
//! #         }
//! #         let mut sent = self.0.lock().unwrap();
//! #         sent.push(message.clone());
//! #         Ok(Receipt::new(sent.len().to_string()))
//! #     }
//! # }
//! # impl Driver for Outbox {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
//! # }
//! # impl NotifierProvider for Outbox {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//!
//! // `Outbox` (hidden) keeps what it sends and refuses empty bodies, but not blank
//! // recipients.
//! let kit = NotifierConformance::<Outbox>::new(|_request| NoOptions {});
//! assert!(kit.check("send_returns_a_receipt_with_an_id").is_ok());
//! let failure = kit.check("blank_recipient_is_invalid_input").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::notifier::{BATCH, Message, Notifier, Receipt};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

use super::harness::{Instance, Kit, Tolerance};
use super::{KitRequest, call, ensure, expect_kind, expect_unsupported};
use crate::notifier::NotifierProvider;

/// Reads back what a driver delivered, oldest first (for drivers that can tell).
type DeliveredFn<T> = dyn Fn(&T) -> Vec<Message> + Send + Sync;

/// The recipients the kit uses unless told others with `valid_recipient`.
const DEFAULT_RECIPIENTS: [&str; 3] = [
    "ops@example.com",
    "oncall@example.com",
    "ops+kit@example.org",
];

/// What the `notifier` kit's obligations are given besides the instance: the recipients and
/// the reader set with the kit's builder methods.
///
/// ```
/// use sandloom_driverkit::conformance::notifier::NotifierSettings;
/// use sandloom_driverkit::conformance::Instance;
/// # use sandloom_driverkit::notifier::NotifierProvider;
/// // An obligation of the notifier kit receives them, set through the kit's builder methods
/// // (`valid_recipient`, `invalid_recipient`, `delivered`).
/// async fn obligation<T: NotifierProvider>(_: &Instance<T>, _: &NotifierSettings<T>) -> Result<(), String> {
///     Ok(())
/// }
/// ```
pub struct NotifierSettings<T> {
    /// The recipients the driver must accept; the first is the one most obligations use.
    valid: Vec<String>,
    /// Whether `valid` is still the default (the first `valid_recipient` replaces it).
    default_recipients: bool,
    invalid: Option<String>,
    delivered: Option<Arc<DeliveredFn<T>>>,
    tolerance: Tolerance,
}

impl<T> NotifierSettings<T> {
    /// A message to the valid recipient.
    fn message(&self, body: impl Into<String>) -> Message {
        Message::new(self.valid[0].clone(), body)
    }

    /// A message to the `n`th valid recipient (round the list).
    fn message_to(&self, n: usize, body: impl Into<String>) -> Message {
        Message::new(self.valid[n % self.valid.len()].clone(), body)
    }
}

/// The conformance kit of the `notifier` contract. See [`OBLIGATIONS`] for what it holds a
/// driver to; run it with [`notifier_conformance!`](crate::notifier_conformance).
///
/// What a valid recipient is depends on the driver, so the kit is told: one it must accept
/// ([`valid_recipient`](Self::valid_recipient)), optionally one it must refuse
/// ([`invalid_recipient`](Self::invalid_recipient)), and optionally how to read back what was
/// delivered ([`delivered`](Self::delivered)).
///
/// ```
/// # use sandloom_driverkit::conformance::notifier::NotifierConformance;
/// # fn kit<T: sandloom_driverkit::notifier::NotifierProvider>(options: T::Options)
/// # where T::Options: Clone + Send + Sync {
/// let kit = NotifierConformance::<T>::new(move |_request| options.clone())
///     .valid_recipient("#ops")
///     .invalid_recipient("no-such-channel");
/// for failure in kit.check_all() {
///     eprintln!("{failure}");
/// }
/// # }
/// ```
pub type NotifierConformance<T> = Kit<T, NotifierSettings<T>>;

impl<T: NotifierProvider> Kit<T, NotifierSettings<T>> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # #[async_trait]
    /// # impl Notifier for Outbox {
    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
    /// #         if message.body.is_empty() {
    /// #             return Err(InfraError::invalid_input("notifier", "empty message body"));
    /// #         }
    /// #         let mut sent = self.0.lock().unwrap();
    /// #         sent.push(message.clone());
    /// #         Ok(Receipt::new(sent.len().to_string()))
    /// #     }
    /// # }
    /// # impl Driver for Outbox {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
    /// # }
    /// # impl NotifierProvider for Outbox {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = NotifierConformance::<Outbox>::new(|request: &KitRequest| {
    ///     // Called once per obligation, for a fresh instance with its own scratch space.
    ///     assert!(request.scratch_dir.is_dir());
    ///     assert!(!request.namespace.is_empty());
    ///     NoOptions {}
    /// });
    /// assert!(kit.check("send_returns_a_receipt_with_an_id").is_ok());
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<crate::notifier::NotifierCapability>(
            obligations::<T>(),
            options,
            NotifierSettings {
                valid: DEFAULT_RECIPIENTS.iter().map(|r| (*r).to_owned()).collect(),
                default_recipients: true,
                invalid: None,
                delivered: None,
                tolerance: Tolerance::DEFAULT,
            },
        )
    }

    /// A recipient the driver must accept (default `ops@example.com`, `oncall@example.com` and
    /// `ops+kit@example.org`). The first call replaces the defaults, and each further call adds
    /// one: give two or more, so that the obligations about several recipients can tell them
    /// apart (with one, they send every message to it). Most obligations use the first.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # #[async_trait]
    /// # impl Notifier for Outbox {
    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
    /// #         if message.body.is_empty() {
    /// #             return Err(InfraError::invalid_input("notifier", "empty message body"));
    /// #         }
    /// #         let mut sent = self.0.lock().unwrap();
    /// #         sent.push(message.clone());
    /// #         Ok(Receipt::new(sent.len().to_string()))
    /// #     }
    /// # }
    /// # impl Driver for Outbox {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
    /// # }
    /// # impl NotifierProvider for Outbox {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = NotifierConformance::<Outbox>::new(|_request| NoOptions {}).valid_recipient("#ops");
    /// assert!(kit.check("subject_and_metadata_are_accepted").is_ok());
    /// ```
    #[must_use]
    pub fn valid_recipient(mut self, recipient: impl Into<String>) -> Self {
        let settings = self.settings_mut();
        if settings.default_recipients {
            settings.valid.clear();
            settings.default_recipients = false;
        }
        settings.valid.push(recipient.into());
        self
    }

    /// A non-blank recipient the driver must refuse with `InvalidInput` (by default none is
    /// checked: blank recipients are the only ones every driver refuses).
    ///
    /// ```
    /// use sandloom_driverkit::conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # #[async_trait]
    /// # impl Notifier for Outbox {
    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
    /// #         if message.body.is_empty() {
    /// #             return Err(InfraError::invalid_input("notifier", "empty message body"));
    /// #         }
    /// #         let mut sent = self.0.lock().unwrap();
    /// #         sent.push(message.clone());
    /// #         Ok(Receipt::new(sent.len().to_string()))
    /// #     }
    /// # }
    /// # impl Driver for Outbox {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
    /// # }
    /// # impl NotifierProvider for Outbox {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = NotifierConformance::<Outbox>::new(|_request| NoOptions {})
    ///     .invalid_recipient("#no-such-channel");
    /// // `Outbox` (hidden) accepts every recipient, so the kit reports it.
    /// let failure = kit.check("configured_invalid_recipient_is_invalid_input").unwrap_err();
    /// assert!(failure.message.contains("must answer invalid_input"));
    /// ```
    #[must_use]
    pub fn invalid_recipient(mut self, recipient: impl Into<String>) -> Self {
        self.settings_mut().invalid = Some(recipient.into());
        self
    }

    /// How to read back every message the instance delivered, oldest first, for drivers that
    /// can tell (an in-memory driver, a test double of a service). With it the kit also checks
    /// that accepted messages arrive unchanged and in order, and refused ones not at all.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # #[async_trait]
    /// # impl Notifier for Outbox {
    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
    /// #         if message.body.is_empty() {
    /// #             return Err(InfraError::invalid_input("notifier", "empty message body"));
    /// #         }
    /// #         let mut sent = self.0.lock().unwrap();
    /// #         sent.push(message.clone());
    /// #         Ok(Receipt::new(sent.len().to_string()))
    /// #     }
    /// # }
    /// # impl Driver for Outbox {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
    /// # }
    /// # impl NotifierProvider for Outbox {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// // `Outbox` (hidden) keeps every message it accepts; `sent` reads them back.
    /// let kit = NotifierConformance::<Outbox>::new(|_request| NoOptions {})
    ///     .delivered(|outbox: &Outbox| outbox.sent());
    /// assert!(kit.check("accepted_messages_are_delivered_as_sent").is_ok());
    /// ```
    #[must_use]
    pub fn delivered(
        mut self,
        delivered: impl Fn(&T) -> Vec<Message> + Send + Sync + 'static,
    ) -> Self {
        self.settings_mut().delivered = Some(Arc::new(delivered));
        self
    }

    /// Widen the timing tolerance (default [`Tolerance::DEFAULT`], at most [`Tolerance::MAX`]:
    /// above it, every obligation fails saying so): how far a receipt's `accepted_at` may be
    /// from the `send` that answered it, for a driver that takes it from a server's clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_driverkit::conformance::notifier::NotifierConformance;
    /// # fn kit<T: sandloom_driverkit::notifier::NotifierProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // For a provider whose receipts carry its own time, kept to the second:
    /// let kit = NotifierConformance::<T>::new(move |_request| options.clone())
    ///     .tolerance(Duration::from_millis(1500));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `notifier_conformance!(MyNotifier, |request| …, .tolerance(Duration::from_secs(1)));`.
    #[must_use]
    pub fn tolerance(self, late: Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }
}

crate::define_kit! {
    /// Run the whole `notifier` kit from a driver crate's tests: one `#[test]` per obligation, in a
    /// module `notifier_conformance`.
    ///
    /// A leading `name:` puts that module inside a module `name`, so one file can run the kit for
    /// several drivers or configurations. Builder calls of
    /// [`NotifierConformance`](crate::conformance::notifier::NotifierConformance) may follow the
    /// options.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] turn on the
    /// // `conformance` feature of sandloom-driverkit.
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # #[async_trait]
    /// # impl Notifier for Outbox {
    /// #     async fn send(&self, message: &Message) -> InfraResult<Receipt> {
    /// #         if message.body.is_empty() {
    /// #             return Err(InfraError::invalid_input("notifier", "empty message body"));
    /// #         }
    /// #         let mut sent = self.0.lock().unwrap();
    /// #         sent.push(message.clone());
    /// #         Ok(Receipt::new(sent.len().to_string()))
    /// #     }
    /// # }
    /// # impl Driver for Outbox {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(Outbox::default()) }
    /// # }
    /// # impl NotifierProvider for Outbox {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    /// # pub type MyNotifier = Outbox;
    ///
    /// sandloom_driverkit::notifier_conformance!(MyNotifier, |_request| NoOptions {});
    ///
    /// // The same kit, told more about the driver, in a module `configured`:
    /// sandloom_driverkit::notifier_conformance!(
    ///     configured: MyNotifier,
    ///     |_request| NoOptions {},
    ///     .valid_recipient("#ops")
    ///     .delivered(|notifier: &MyNotifier| notifier.sent())
    /// );
    /// # fn main() {}
    /// ```
    macro notifier_conformance;
    kit crate::conformance::notifier::NotifierConformance::new;
    provider NotifierProvider;
    settings NotifierSettings<T>;
    /// Every obligation of the notifier contract, in the order the kit runs them.
    ///
    /// "The valid recipient" is the first one set with
    /// [`valid_recipient`](NotifierConformance::valid_recipient) (default `ops@example.com`);
    /// "every valid recipient" all those set (by default three).
    ///
    /// - `send_returns_a_receipt_with_an_id`: `send` answers a receipt with a non-blank id, accepted
    ///   during the `send` (give or take the declared tolerance).
    /// - `receipt_ids_are_distinct`: 20 sends, half of them of the same message, give 20 ids.
    /// - `concurrent_sends_get_distinct_receipts`: 16 tasks on several threads, each with 8 sends
    ///   in flight at once, all succeed with 128 distinct ids.
    /// - `empty_body_is_invalid_input`: a message with an empty body (with or without a subject) is
    ///   `InvalidInput`.
    /// - `blank_recipient_is_invalid_input`: recipients `""`, `"   "` and `"\t\n"` are
    ///   `InvalidInput`.
    /// - `configured_invalid_recipient_is_invalid_input`: the recipient set with
    ///   [`invalid_recipient`](NotifierConformance::invalid_recipient) is `InvalidInput` (nothing to
    ///   check when none is set).
    /// - `subject_and_metadata_are_accepted`: a message with a subject and several metadata pairs
    ///   is sent.
    /// - `unicode_and_multiline_text_is_accepted`: non-ASCII subjects and multi-line, non-ASCII
    ///   bodies are sent.
    /// - `a_refused_message_does_not_break_the_driver`: after refusals, a valid message is sent.
    /// - `accepted_messages_are_delivered_as_sent`: with a
    ///   [`delivered`](NotifierConformance::delivered) reader, exactly the accepted messages are
    ///   delivered, unchanged and in order, and no refused one (nothing to check without a reader).
    /// - `batch_answers_one_result_per_message_in_order`: declared `batch`: an empty batch answers
    ///   no results; a batch answers one result per message at its index, invalid ones fail alone
    ///   with `InvalidInput`, receipt ids are distinct from each other and from `send`'s;
    ///   undeclared: `send_batch` answers `Unsupported`.
    /// - `several_recipients_get_only_their_own`: messages to every valid recipient, interleaved
    ///   one after another, 32 at once from 8 tasks, and (declared `batch`) in one batch, are all
    ///   accepted with distinct receipt ids; with a [`delivered`](NotifierConformance::delivered)
    ///   reader, each arrives once, to its own recipient, with its own subject, metadata and body
    ///   (the sequential ones and the batch in order).
    /// - `extreme_messages_are_delivered_whole`: a body of 256 KiB (a 4,000-character line, a
    ///   line that is a lone dot, lines starting with dots, trailing spaces, non-ASCII text), 64
    ///   metadata pairs, a subject of over 300 characters and an empty subject are accepted and,
    ///   with a reader, delivered exactly (an empty subject may arrive as none).
    /// - `large_and_concurrent_batches_keep_order_and_ids`: declared `batch`: a batch of 100
    ///   answers 100 results in order, its empty bodies and blank recipients (`""`, `"   "`,
    ///   `"\t\n"`) failing alone with `InvalidInput`, each receipt accepted during the call
    ///   (give or take the declared tolerance); 4 batches of 25 and 16 sends at once all succeed,
    ///   and every receipt id differs from every other; with a reader, the batch of 100 arrives
    ///   in order and the concurrent messages each once; undeclared: `send_batch` answers
    ///   `Unsupported`.
    /// - `line_breaks_cannot_add_recipients`: a subject and a metadata value holding CR LF and
    ///   header-like lines (`Bcc:` another valid recipient, `X-Kit-Injected: 1`) are either
    ///   refused with `InvalidInput` (nothing is delivered) or accepted and, with a reader,
    ///   delivered exactly, once, to the message's own recipient; either way a plain message
    ///   still goes afterwards.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `send` answers `Stopped`, and so
    ///   does `send_batch` as a whole call when `batch` is declared (`Unsupported` or `Stopped`
    ///   when it is not).
    /// - `secrets_never_show`: with secrets declared
    ///   ([`Kit::secrets`](crate::conformance::Kit::secrets)), none shows in the options' `Debug`,
    ///   the driver's `Debug`, or the `Display` or `Debug` of the errors of the contract's
    ///   operations given an empty key or name (`InvalidInput`), after `stop` (`Stopped`), and of
    ///   an instance pointed at an unreachable address (its `start`, or its operations); nothing to
    ///   check without declared secrets.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::notifier::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 17);
    /// assert_eq!(OBLIGATIONS[0], "send_returns_a_receipt_with_an_id");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
    /// ```
    obligations [
        send_returns_a_receipt_with_an_id,
        receipt_ids_are_distinct,
        concurrent_sends_get_distinct_receipts,
        empty_body_is_invalid_input,
        blank_recipient_is_invalid_input,
        configured_invalid_recipient_is_invalid_input,
        subject_and_metadata_are_accepted,
        unicode_and_multiline_text_is_accepted,
        a_refused_message_does_not_break_the_driver,
        accepted_messages_are_delivered_as_sent,
        batch_answers_one_result_per_message_in_order,
        several_recipients_get_only_their_own,
        extreme_messages_are_delivered_whole,
        large_and_concurrent_batches_keep_order_and_ids,
        line_breaks_cannot_add_recipients,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}

/// Send `message`, which must be accepted with a usable receipt.
async fn send_ok(notifier: &dyn Notifier, message: &Message) -> Result<Receipt, String> {
    let receipt = call!(
        format!("send({})", describe(message)),
        notifier.send(message)
    );
    ensure!(
        !receipt.id.trim().is_empty(),
        "send({}) answered a receipt with the blank id {:?}",
        describe(message),
        receipt.id
    );
    Ok(receipt)
}

/// Send `message`, which must be refused with `InvalidInput`.
async fn send_invalid(notifier: &dyn Notifier, message: &Message) -> Result<(), String> {
    expect_kind(
        &format!("send({})", describe(message)),
        ErrorKind::InvalidInput,
        &notifier.send(message).await,
    )
}

/// A message for failure messages: the recipient and the start of the body.
fn describe(message: &Message) -> String {
    let body: String = message.body.chars().take(24).collect();
    let more = if body.len() < message.body.len() {
        "…"
    } else {
        ""
    };
    format!("to {:?}: {body:?}{more}", message.recipient)
}

/// Record `id`; fail when it was seen before.
fn distinct(seen: &mut HashSet<String>, id: String, what: &str) -> Result<(), String> {
    let message = format!("{what} answered the receipt id {id:?} a second time");
    ensure!(seen.insert(id), "{message}");
    Ok(())
}

async fn send_returns_a_receipt_with_an_id<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let skew = s.tolerance.get();
    let before = SystemTime::now();
    let receipt = send_ok(&*i.driver, &s.message("kit: disk almost full")).await?;
    let after = SystemTime::now();
    ensure!(
        receipt.accepted_at >= before - skew && receipt.accepted_at <= after + skew,
        "the receipt was accepted at {:?}, not during the `send` that answered it (between \
         {before:?} and {after:?}, give or take the declared tolerance of {skew:?})",
        receipt.accepted_at
    );
    Ok(())
}

async fn receipt_ids_are_distinct<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let same = s.message("kit: the same message");
    let mut seen = HashSet::new();
    for n in 0..10 {
        let receipt = send_ok(&*i.driver, &same).await?;
        distinct(&mut seen, receipt.id, "sending the same message again")?;
        let receipt = send_ok(&*i.driver, &s.message(format!("kit: message {n}"))).await?;
        distinct(&mut seen, receipt.id, "sending another message")?;
    }
    Ok(())
}

async fn concurrent_sends_get_distinct_receipts<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    const TASKS: usize = 16;
    const IN_FLIGHT: usize = 8;
    let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let notifier = i.shared();
        let barrier = Arc::clone(&barrier);
        let messages: Vec<Message> = (0..IN_FLIGHT)
            .map(|n| s.message(format!("kit: task {task} message {n}")))
            .collect();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            // Several sends in flight within one task too: a driver that reads, then writes
            // back a counter answers the same id to all of them.
            let sends = messages.iter().map(|message| send_ok(&*notifier, message));
            futures_util::future::try_join_all(sends).await
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        let receipts = task.await.map_err(|e| format!("a task panicked: {e}"))??;
        for receipt in receipts {
            distinct(&mut seen, receipt.id, "a concurrent send")?;
        }
    }
    ensure!(
        seen.len() == TASKS * IN_FLIGHT,
        "{} concurrent sends gave {} receipts",
        TASKS * IN_FLIGHT,
        seen.len()
    );
    Ok(())
}

async fn empty_body_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    send_invalid(&*i.driver, &s.message("")).await?;
    send_invalid(&*i.driver, &s.message("").with_subject("kit: subject only")).await
}

async fn blank_recipient_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    _: &NotifierSettings<T>,
) -> Result<(), String> {
    for recipient in ["", "   ", "\t\n"] {
        send_invalid(&*i.driver, &Message::new(recipient, "kit: to nobody")).await?;
    }
    Ok(())
}

async fn configured_invalid_recipient_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let Some(invalid) = &s.invalid else {
        return Ok(());
    };
    send_invalid(&*i.driver, &Message::new(invalid.clone(), "kit: to nobody")).await
}

async fn subject_and_metadata_are_accepted<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let message = s
        .message("kit: disk almost full")
        .with_subject("kit: alert")
        .with_metadata("severity", "high")
        .with_metadata("host", "db-1")
        .with_metadata("x-kit", "");
    send_ok(&*i.driver, &message).await?;
    send_ok(
        &*i.driver,
        &s.message("kit: subject only").with_subject("kit: s"),
    )
    .await?;
    send_ok(
        &*i.driver,
        &s.message("kit: metadata only").with_metadata("k", "v"),
    )
    .await
    .map(drop)
}

async fn unicode_and_multiline_text_is_accepted<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let messages = [
        s.message("kit: Größe überschritten ✓ — 日本語 🚀"),
        s.message("kit: line one\nline two\r\n\tindented\n"),
        s.message("kit: ok").with_subject("Ünïcødé ✓ 🚀 主题"),
    ];
    for message in &messages {
        send_ok(&*i.driver, message).await?;
    }
    Ok(())
}

async fn a_refused_message_does_not_break_the_driver<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    send_invalid(&*i.driver, &s.message("")).await?;
    send_invalid(&*i.driver, &Message::new("  ", "kit: to nobody")).await?;
    if let Some(invalid) = &s.invalid {
        send_invalid(&*i.driver, &Message::new(invalid.clone(), "kit: to nobody")).await?;
    }
    for n in 0..3 {
        send_ok(&*i.driver, &s.message(format!("kit: after refusals {n}"))).await?;
    }
    Ok(())
}

async fn accepted_messages_are_delivered_as_sent<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    let notifier = &*i.driver;
    let first = s
        .message("kit: first")
        .with_subject("kit: alert ✓")
        .with_metadata("severity", "high");
    let second = s.message("kit: Größe 日本語\nline two\n\n");
    send_ok(notifier, &first).await?;
    send_invalid(notifier, &s.message("")).await?;
    send_ok(notifier, &second).await?;
    let mut expected = vec![first, second];
    if i.declares(BATCH) {
        let batch = [
            s.message("kit: batch 1").with_metadata("n", "1"),
            s.message(""),
            s.message("  kit: batch 2 keeps its spaces  "),
        ];
        call!("send_batch", notifier.send_batch(&batch));
        expected.extend([batch[0].clone(), batch[2].clone()]);
    }
    let got = delivered(notifier);
    if let Some(n) = (0..got.len().max(expected.len())).find(|&n| got.get(n) != expected.get(n)) {
        return Err(format!(
            "delivered message {n} is {:?}, expected {:?} (exactly the accepted messages, \
             unchanged, in order; {} delivered, {} accepted)",
            got.get(n),
            expected.get(n),
            got.len(),
            expected.len()
        ));
    }
    Ok(())
}

async fn batch_answers_one_result_per_message_in_order<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    if !i.declares(BATCH) {
        return expect_unsupported(
            "send_batch",
            &notifier.send_batch(&[s.message("kit: batch")]).await,
        );
    }
    let empty = call!("send_batch of no messages", notifier.send_batch(&[]));
    ensure!(
        empty.is_empty(),
        "send_batch of no messages answered {} results",
        empty.len()
    );
    let mut seen = HashSet::new();
    let single = send_ok(notifier, &s.message("kit: before the batch")).await?;
    distinct(&mut seen, single.id, "send")?;
    // (message, whether it is valid): invalid ones in the middle, each must fail alone.
    let mut batch = vec![
        (s.message("kit: batch 0"), true),
        (s.message("kit: batch 1").with_subject("kit: s"), true),
        (s.message(""), false),
        (s.message("kit: batch 3"), true),
        (Message::new("   ", "kit: batch 4"), false),
    ];
    if let Some(invalid) = &s.invalid {
        batch.push((Message::new(invalid.clone(), "kit: batch 5"), false));
    }
    batch.push((s.message("kit: batch last"), true));
    let messages: Vec<Message> = batch.iter().map(|(m, _)| m.clone()).collect();
    let results = call!("send_batch", notifier.send_batch(&messages));
    ensure!(
        results.len() == messages.len(),
        "send_batch of {} messages answered {} results (one per message, in order)",
        messages.len(),
        results.len()
    );
    for (index, ((message, valid), result)) in batch.iter().zip(&results).enumerate() {
        let what = format!("result {index} of send_batch ({})", describe(message));
        if *valid {
            match result {
                Ok(receipt) => {
                    ensure!(
                        !receipt.id.trim().is_empty(),
                        "{what} has the blank receipt id {:?}",
                        receipt.id
                    );
                    distinct(&mut seen, receipt.id.clone(), &what)?;
                }
                Err(error) => {
                    return Err(format!(
                        "{what} failed: {error} (an invalid message must fail alone, at its own index)"
                    ));
                }
            }
        } else {
            expect_kind(&what, ErrorKind::InvalidInput, result)?;
        }
    }
    Ok(())
}

async fn operations_after_stop_fail_with_stopped<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    send_ok(notifier, &s.message("kit: before stop")).await?;
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    let message = s.message("kit: after stop");
    expect_kind(
        "send after stop",
        ErrorKind::Stopped,
        &notifier.send(&message).await,
    )?;
    let batch: InfraResult<_> = notifier.send_batch(std::slice::from_ref(&message)).await;
    if i.declares(BATCH) {
        return expect_kind(
            "send_batch after stop (as a whole call)",
            ErrorKind::Stopped,
            &batch,
        );
    }
    match &batch {
        Err(error) if matches!(error.kind(), ErrorKind::Stopped | ErrorKind::Unsupported) => Ok(()),
        _ => expect_unsupported("send_batch after stop", &batch),
    }
}

async fn secrets_never_show<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let valid = s.valid[0].clone();
    i.secrets_never_show(move |notifier| {
        let valid = valid.clone();
        Box::pin(async move {
            vec![
                notifier.send(&Message::new("", "kit: body")).await.err(),
                notifier.send(&Message::new(valid.clone(), "")).await.err(),
                notifier.send_batch(&[Message::new("", "")]).await.err(),
                // An error only where the server cannot be reached, or after `stop`.
                notifier
                    .send(&Message::new(valid, "kit: a message to check for secrets"))
                    .await
                    .err(),
            ]
        })
    })
    .await
}

/// Whether `got` is `sent` as the contract lets it arrive: recipient, body and metadata exact,
/// the subject exact except that an empty subject may arrive as none.
fn same_message(got: &Message, sent: &Message) -> bool {
    let subject = |m: &Message| m.subject.clone().filter(|subject| !subject.is_empty());
    got.recipient == sent.recipient
        && got.body == sent.body
        && got.metadata == sent.metadata
        && subject(got) == subject(sent)
}

/// A message for failure messages, with its subject and metadata.
fn describe_fully(message: &Message) -> String {
    let subject: Option<String> = message
        .subject
        .as_ref()
        .map(|subject| subject.chars().take(32).collect());
    format!(
        "{} ({} bytes) subject {subject:?} ({} chars), {} metadata pairs",
        describe(message),
        message.body.len(),
        message.subject.as_ref().map_or(0, |s| s.chars().count()),
        message.metadata.len()
    )
}

/// Fail unless `got` holds the `sent` messages in order, each as [`same_message`] allows.
fn delivered_in_order(what: &str, got: &[Message], sent: &[Message]) -> Result<(), String> {
    for n in 0..got.len().max(sent.len()) {
        match (got.get(n), sent.get(n)) {
            (Some(one), Some(other)) if same_message(one, other) => {}
            (one, other) => {
                return Err(format!(
                    "{what}: delivered message {n} is {}, where {} was sent ({} delivered, {} \
                     accepted: each exactly once, to its own recipient, with its subject, \
                     metadata and body unchanged)",
                    one.map_or("nothing".to_owned(), describe_fully),
                    other.map_or("nothing".to_owned(), describe_fully),
                    got.len(),
                    sent.len(),
                ));
            }
        }
    }
    Ok(())
}

/// Fail unless `got` holds the `sent` messages in any order (each body is unique).
fn delivered_in_any_order(what: &str, got: &[Message], sent: &[Message]) -> Result<(), String> {
    let mut got = got.to_vec();
    let mut sent = sent.to_vec();
    got.sort_by(|a, b| a.body.cmp(&b.body));
    sent.sort_by(|a, b| a.body.cmp(&b.body));
    delivered_in_order(what, &got, &sent)
}

/// Send `messages` at once from `TASKS` tasks on several threads (each its share, all of a
/// task's in flight together): their receipts, or the first failure.
async fn send_concurrently<T: NotifierProvider>(
    i: &Instance<T>,
    messages: &[Message],
    tasks: usize,
) -> Result<Vec<Receipt>, String> {
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
    let mut handles = Vec::new();
    for task in 0..tasks {
        let notifier = i.shared();
        let barrier = Arc::clone(&barrier);
        let mine: Vec<Message> = messages.iter().skip(task).step_by(tasks).cloned().collect();
        handles.push(tokio::spawn(async move {
            barrier.wait().await;
            let sends = mine.iter().map(|message| send_ok(&*notifier, message));
            futures_util::future::try_join_all(sends).await
        }));
    }
    let mut receipts = Vec::new();
    for handle in handles {
        receipts.extend(
            handle
                .await
                .map_err(|e| format!("a task panicked: {e}"))??,
        );
    }
    Ok(receipts)
}

async fn several_recipients_get_only_their_own<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    let recipients = s.valid.len();
    // Subject, metadata and body all name the recipient and the message: a driver that mixes
    // up any of them between messages shows it.
    let message = |n: usize, part: &str| {
        let to = n % recipients;
        s.message_to(n, format!("kit: {part} {n} for recipient {to}"))
            .with_subject(format!("kit: {part} {n} subject"))
            .with_metadata("kit-message", format!("{part}-{n}"))
            .with_metadata("kit-recipient", to.to_string())
    };
    let mut seen = HashSet::new();
    // One after another, the recipients interleaved.
    let one_by_one: Vec<Message> = (0..3 * recipients.max(2))
        .map(|n| message(n, "single"))
        .collect();
    for message in &one_by_one {
        let receipt = send_ok(notifier, message).await?;
        distinct(&mut seen, receipt.id, "a send to one of several recipients")?;
    }
    // At once, every recipient from several tasks.
    let concurrent: Vec<Message> = (0..32).map(|n| message(n, "concurrent")).collect();
    for receipt in send_concurrently(i, &concurrent, 8).await? {
        distinct(
            &mut seen,
            receipt.id,
            "a concurrent send to one of several recipients",
        )?;
    }
    // In one batch.
    let batch: Vec<Message> = (0..2 * recipients.max(2))
        .map(|n| message(n, "batch"))
        .collect();
    if i.declares(BATCH) {
        let results = call!(
            "send_batch to several recipients",
            notifier.send_batch(&batch)
        );
        ensure!(
            results.len() == batch.len(),
            "send_batch of {} messages to several recipients answered {} results",
            batch.len(),
            results.len()
        );
        for (index, result) in results.into_iter().enumerate() {
            let receipt = result.map_err(|error| {
                format!("result {index} of send_batch to several recipients failed: {error}")
            })?;
            distinct(&mut seen, receipt.id, "send_batch to several recipients")?;
        }
    }
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    let got = delivered(notifier);
    let (singles, rest) = got.split_at(one_by_one.len().min(got.len()));
    delivered_in_order("sends one after another", singles, &one_by_one)?;
    let (during, rest) = rest.split_at(concurrent.len().min(rest.len()));
    delivered_in_any_order("concurrent sends", during, &concurrent)?;
    let batch = if i.declares(BATCH) {
        &batch[..]
    } else {
        &batch[..0]
    };
    delivered_in_order("a batch to several recipients", rest, batch)
}

/// A body of 256 KiB: short and long lines, a line that is a lone dot, lines that start with a
/// dot or `From `, trailing spaces and non-ASCII text; it ends without a line break.
fn long_body() -> String {
    let mut body = String::from("kit: a long body\n.\n..leading dots\nFrom the kit\n");
    body.push_str(&"x".repeat(4000));
    body.push('\n');
    let mut n = 0;
    while body.len() < 256 * 1024 {
        // Writing to a `String` cannot fail.
        let _ = writeln!(
            body,
            "line {n:05}: Größe ✓ {} trailing ",
            "-".repeat(n % 90)
        );
        n += 1;
    }
    body.push_str("the end");
    body
}

async fn extreme_messages_are_delivered_whole<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    let mut many = s.message("kit: 64 metadata pairs");
    for n in 0..64 {
        many = many.with_metadata(format!("kit-{n:02}"), format!("value {n}"));
    }
    let long_subject = format!(
        "kit: {}✓ the end",
        "a long subject that goes on and on ".repeat(9)
    );
    let messages = [
        s.message(long_body()).with_subject("kit: 256 KiB"),
        many,
        s.message("kit: a long subject").with_subject(long_subject),
        // An empty subject is no subject: accepted, and it may arrive as none.
        s.message("kit: an empty subject").with_subject(""),
        s.message("kit: after the extremes"),
    ];
    let mut seen = HashSet::new();
    for message in &messages {
        let receipt = send_ok(notifier, message).await?;
        distinct(&mut seen, receipt.id, "a send")?;
    }
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    delivered_in_order("messages at the extremes", &delivered(notifier), &messages)
}

/// Header injection: a driver that writes a subject or metadata into a text protocol
/// unescaped lets a line break add headers, recipients among them.
async fn line_breaks_cannot_add_recipients<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    let other = &s.valid[1 % s.valid.len()];
    let injected = format!("\r\nBcc: {other}\r\nX-Kit-Injected: 1");
    let message = s
        .message("kit: line breaks in the subject and metadata")
        .with_subject(format!("kit: subject{injected}"))
        .with_metadata("kit-note", format!("value{injected}"));
    let mut sent = Vec::new();
    match notifier.send(&message).await {
        Err(error) if error.kind() == ErrorKind::InvalidInput => {}
        Err(error) => {
            return Err(format!(
                "send({}) with line breaks in its subject and metadata must be delivered \
                 exactly or refused with InvalidInput; it answered {}: {error}",
                describe(&message),
                error.kind()
            ));
        }
        Ok(_) => sent.push(message),
    }
    let plain = s
        .message("kit: after line breaks")
        .with_subject("kit: plain");
    send_ok(notifier, &plain).await?;
    sent.push(plain);
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    delivered_in_order(
        "after a message with line breaks in its subject and metadata (accepted or refused)",
        &delivered(notifier),
        &sent,
    )
}

/// Whether `receipt` was accepted between `before` and `after`, give or take `skew`.
fn accepted_during(
    what: &str,
    receipt: &Receipt,
    (before, after): (SystemTime, SystemTime),
    skew: Duration,
) -> Result<(), String> {
    ensure!(
        receipt.accepted_at >= before - skew && receipt.accepted_at <= after + skew,
        "{what}: the receipt was accepted at {:?}, not during the call that answered it \
         (between {before:?} and {after:?}, give or take the declared tolerance of {skew:?})",
        receipt.accepted_at
    );
    Ok(())
}

async fn large_and_concurrent_batches_keep_order_and_ids<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    const SIZE: usize = 100;
    let notifier = &*i.driver;
    if !i.declares(BATCH) {
        return expect_unsupported(
            "send_batch",
            &notifier.send_batch(&[s.message("kit: batch")]).await,
        );
    }
    let skew = s.tolerance.get();
    // Every tenth message from the third has an empty body, and from the seventh a blank
    // recipient: each fails alone, at its index.
    let blanks = ["", "   ", "\t\n"];
    let batch: Vec<(Message, bool)> = (0..SIZE)
        .map(|n| match n % 10 {
            3 => (s.message_to(n, "").with_subject("kit: empty body"), false),
            7 => (
                Message::new(blanks[n / 10 % 3], format!("kit: big batch {n}")),
                false,
            ),
            _ => (
                s.message_to(n, format!("kit: big batch {n}"))
                    .with_metadata("kit-index", n.to_string()),
                true,
            ),
        })
        .collect();
    let messages: Vec<Message> = batch.iter().map(|(m, _)| m.clone()).collect();
    let before = SystemTime::now();
    let results = call!("send_batch of 100 messages", notifier.send_batch(&messages));
    let window = (before, SystemTime::now());
    ensure!(
        results.len() == SIZE,
        "send_batch of {SIZE} messages answered {} results (one per message, in order)",
        results.len()
    );
    let mut seen = HashSet::new();
    for (index, ((message, valid), result)) in batch.iter().zip(&results).enumerate() {
        let what = format!(
            "result {index} of send_batch of {SIZE} ({})",
            describe(message)
        );
        if !valid {
            expect_kind(&what, ErrorKind::InvalidInput, result)?;
            continue;
        }
        let receipt = result
            .as_ref()
            .map_err(|error| format!("{what} failed: {error}"))?;
        ensure!(
            !receipt.id.trim().is_empty(),
            "{what} has the blank receipt id {:?}",
            receipt.id
        );
        accepted_during(&what, receipt, window, skew)?;
        distinct(&mut seen, receipt.id.clone(), &what)?;
    }
    let concurrent = concurrent_batches_and_sends(i, s, &mut seen).await?;
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    let got = delivered(notifier);
    let valid: Vec<Message> = batch
        .into_iter()
        .filter_map(|(message, valid)| valid.then_some(message))
        .collect();
    let (first, rest) = got.split_at(valid.len().min(got.len()));
    delivered_in_order("a batch of 100", first, &valid)?;
    delivered_in_any_order("concurrent batches and sends", rest, &concurrent)
}

/// 4 batches of 25 and 16 sends at once (every receipt id differs from every other, those in
/// `seen` included, and each receipt is timely): the messages sent.
async fn concurrent_batches_and_sends<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
    seen: &mut HashSet<String>,
) -> Result<Vec<Message>, String> {
    let skew = s.tolerance.get();
    let batches: Vec<Vec<Message>> = (0..4)
        .map(|b| {
            (0..25)
                .map(|n| s.message_to(n, format!("kit: concurrent batch {b} message {n}")))
                .collect()
        })
        .collect();
    let mut handles = Vec::new();
    for batch in batches.clone() {
        let notifier = i.shared();
        handles.push(tokio::spawn(async move {
            let before = SystemTime::now();
            let results = notifier.send_batch(&batch).await;
            (results, (before, SystemTime::now()))
        }));
    }
    let singles: Vec<Message> = (0..16)
        .map(|n| s.message_to(n, format!("kit: beside the batches {n}")))
        .collect();
    for receipt in send_concurrently(i, &singles, 4).await? {
        distinct(seen, receipt.id, "a send beside concurrent batches")?;
    }
    for handle in handles {
        let (results, window) = handle.await.map_err(|e| format!("a task panicked: {e}"))?;
        let results =
            results.map_err(|error| format!("a concurrent send_batch failed: {error}"))?;
        ensure!(
            results.len() == 25,
            "a concurrent send_batch of 25 messages answered {} results",
            results.len()
        );
        for (index, result) in results.into_iter().enumerate() {
            let what = format!("result {index} of a concurrent send_batch");
            let receipt = result.map_err(|error| format!("{what} failed: {error}"))?;
            accepted_during(&what, &receipt, window, skew)?;
            distinct(seen, receipt.id, &what)?;
        }
    }
    let mut sent: Vec<Message> = batches.concat();
    sent.extend(singles);
    Ok(sent)
}
