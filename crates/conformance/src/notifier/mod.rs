//! The `notifier` kit: [`NotifierConformance`].
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`notifier_conformance!`](crate::notifier_conformance)
//! instead.
//!
//! ```
//! use sandloom_conformance::notifier::NotifierConformance;
//! use sandloom_driverkit::NoOptions;
//! # use std::sync::Mutex;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
//! # use sandloom_driverkit::sdk::{InfraError, InfraResult};
//! # /// Keeps what it sends: a stand-in for a driver under test.
//! # #[derive(Default)]
//! # pub struct Outbox(Mutex<Vec<Message>>);
//! # impl Outbox {
//! #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
//! # }
//! # impl NotifierOps for Outbox {
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

use std::sync::Arc;
use std::time::Duration;

use sandloom_sdk_infra::notifier::Message;

use crate::KitRequest;
use crate::harness::{Kit, Tolerance};
use sandloom_driverkit::notifier::NotifierProvider;

mod batch;
mod delivery;
mod input;
mod lifecycle;
mod limits;
mod receipts;

use batch::{
    batch_answers_one_result_per_message_in_order, large_and_concurrent_batches_keep_order_and_ids,
};
use delivery::{
    accepted_messages_are_delivered_as_sent, extreme_messages_are_delivered_whole,
    line_breaks_cannot_add_recipients, several_recipients_get_only_their_own,
};
use input::{
    a_refused_message_does_not_break_the_driver, blank_recipient_is_invalid_input,
    configured_invalid_recipient_is_invalid_input, empty_body_is_invalid_input,
    subject_and_metadata_are_accepted, unicode_and_multiline_text_is_accepted,
};
use lifecycle::{operations_after_stop_fail_with_stopped, secrets_never_show};
use limits::messages_past_the_guarantees_arrive_whole_or_are_refused;
use receipts::{
    concurrent_sends_get_distinct_receipts, receipt_ids_are_distinct,
    send_returns_a_receipt_with_an_id,
};

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
/// use sandloom_conformance::notifier::NotifierSettings;
/// use sandloom_conformance::Instance;
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
/// # use sandloom_conformance::notifier::NotifierConformance;
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
    /// use sandloom_conformance::notifier::NotifierConformance;
    /// use sandloom_conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # impl NotifierOps for Outbox {
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
        Kit::build::<sandloom_driverkit::notifier::NotifierCapability>(
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
    /// use sandloom_conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # impl NotifierOps for Outbox {
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
    /// use sandloom_conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # impl NotifierOps for Outbox {
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
    /// use sandloom_conformance::notifier::NotifierConformance;
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # impl NotifierOps for Outbox {
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
    /// # use sandloom_conformance::notifier::NotifierConformance;
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
    /// [`NotifierConformance`](crate::notifier::NotifierConformance) may follow the
    /// options.
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] name
    /// // sandloom-conformance.
    /// use sandloom_driverkit::NoOptions;
    /// # use std::sync::Mutex;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, NotifierOps, NotifierProvider, Receipt};
    /// # use sandloom_driverkit::sdk::{InfraError, InfraResult};
    /// # /// Keeps what it sends: a stand-in for a driver under test.
    /// # #[derive(Default)]
    /// # pub struct Outbox(Mutex<Vec<Message>>);
    /// # impl Outbox {
    /// #     pub fn sent(&self) -> Vec<Message> { self.0.lock().unwrap().clone() }
    /// # }
    /// # impl NotifierOps for Outbox {
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
    /// sandloom_conformance::notifier_conformance!(MyNotifier, |_request| NoOptions {});
    ///
    /// // The same kit, told more about the driver, in a module `configured`:
    /// sandloom_conformance::notifier_conformance!(
    ///     configured: MyNotifier,
    ///     |_request| NoOptions {},
    ///     .valid_recipient("#ops")
    ///     .delivered(|notifier: &MyNotifier| notifier.sent())
    /// );
    /// # fn main() {}
    /// ```
    macro notifier_conformance;
    kit crate::notifier::NotifierConformance::new;
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
    /// - `messages_past_the_guarantees_arrive_whole_or_are_refused`: a body of one character is
    ///   sent; 65 metadata pairs, metadata keys that differ only in letter case (`kit-case`,
    ///   `Kit-Case`, `KIT-CASE`) and an empty metadata key are each accepted or refused with
    ///   `InvalidInput`; with a reader, exactly the accepted ones arrive, whole and in order:
    ///   nothing cut, no key merged with another or dropped.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `send` answers `Stopped`, and so
    ///   does `send_batch` as a whole call when `batch` is declared (`Unsupported` or `Stopped`
    ///   when it is not).
    /// - `secrets_never_show`: the secrets the kit plants itself in every `writeOnly` option
    ///   of the options' JSON Schema (every `Secret` and `SecretUrl`, with no declaration), on
    ///   an instance it builds from them, and the values declared with
    ///   [`Kit::secrets`](crate::Kit::secrets): none shows in the options' `Debug`, the
    ///   driver's `Debug`, or the `Display` or `Debug` of the errors of `validate`,
    ///   `from_options`, `start`, `stop` and of the contract's operations given an empty key or
    ///   name (`InvalidInput`); the declared ones also after `stop` (`Stopped`) and on an
    ///   instance pointed at an unreachable address. Nothing to check for options with no
    ///   `writeOnly` option and no declared secret.
    ///
    /// ```
    /// use sandloom_conformance::notifier::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 18);
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
        messages_past_the_guarantees_arrive_whole_or_are_refused,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}
