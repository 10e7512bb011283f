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
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::notifier::{BATCH, Message, Notifier, Receipt};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

use super::harness::{Instance, Kit, Tolerance};
use super::{KitRequest, call, ensure, expect_kind, expect_unsupported};
use crate::notifier::NotifierProvider;

/// Reads back what a driver delivered, oldest first (for drivers that can tell).
type DeliveredFn<T> = dyn Fn(&T) -> Vec<Message> + Send + Sync;

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
    valid: String,
    invalid: Option<String>,
    delivered: Option<Arc<DeliveredFn<T>>>,
    tolerance: Tolerance,
}

impl<T> NotifierSettings<T> {
    /// A message to the valid recipient.
    fn message(&self, body: impl Into<String>) -> Message {
        Message::new(self.valid.clone(), body)
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
                valid: "ops@example.com".to_owned(),
                invalid: None,
                delivered: None,
                tolerance: Tolerance::DEFAULT,
            },
        )
    }

    /// A recipient the driver must accept (default `ops@example.com`).
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
        self.settings_mut().valid = recipient.into();
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
    /// "The valid recipient" is the one set with
    /// [`valid_recipient`](NotifierConformance::valid_recipient) (default `ops@example.com`).
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
    /// assert_eq!(OBLIGATIONS.len(), 13);
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
    let valid = s.valid.clone();
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
