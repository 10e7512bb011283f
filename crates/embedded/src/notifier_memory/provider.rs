//! The `notifier.memory` driver: messages kept in the process, for tests.

use crate::notifier_log::validate_message;
use crate::serving::Serving;
use sandloom_driverkit::notifier::{BATCH, Message, NAME, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::options::MemoryNotifierOptions;

type Kept = Mutex<VecDeque<Message>>;
type Messages = Arc<Kept>;
type Outboxes = HashMap<String, Weak<Kept>>;

// Named outboxes of live instances. Weak, so a dropped instance's messages go with it.
static OUTBOXES: Mutex<Option<Outboxes>> = Mutex::new(None);

/// The `notifier.memory` driver: "sends" by keeping the message, so tests can look at it.
///
/// Keeps the newest `capacity` messages, dropping the oldest. Receipt ids are `memory-1`,
/// `memory-2`, …, unique per driver instance. Feature: `batch`. [`sent`](Self::sent) and
/// [`clear`](Self::clear) keep working after `stop`, so a test can inspect what was sent.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::notifier::{Message, Notifier};
/// use sandloom_embedded::{MemoryNotifier, MemoryNotifierOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let notifier = MemoryNotifier::from_options(MemoryNotifierOptions::default()).unwrap();
///     notifier.send(&Message::new("ops@example.com", "disk full")).await.unwrap();
///     assert_eq!(notifier.sent()[0].body, "disk full");
/// }
/// ```
#[derive(Debug)]
pub struct MemoryNotifier {
    capacity: usize,
    messages: Messages,
    sent: AtomicU64,
    serving: Serving,
}

impl MemoryNotifier {
    /// The kept messages, oldest first.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// use sandloom_embedded::{MemoryNotifier, MemoryNotifierOptions};
    /// let notifier = MemoryNotifier::from_options(MemoryNotifierOptions::default()).unwrap();
    /// assert!(notifier.sent().is_empty());
    /// ```
    pub fn sent(&self) -> Vec<Message> {
        self.messages().iter().cloned().collect()
    }

    /// Forget every kept message. Receipt ids keep counting.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// use sandloom_driverkit::notifier::{Message, Notifier};
    /// use sandloom_embedded::{MemoryNotifier, MemoryNotifierOptions};
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() {
    ///     let notifier = MemoryNotifier::from_options(MemoryNotifierOptions::default()).unwrap();
    ///     notifier.send(&Message::new("#ops", "hello")).await.unwrap();
    ///     notifier.clear();
    ///     assert!(notifier.sent().is_empty());
    /// }
    /// ```
    pub fn clear(&self) {
        self.messages().clear();
    }

    /// The kept messages, oldest first, of the live instance configured with
    /// `outbox = "name"`; empty when there is none. When two live instances name the same
    /// outbox, the one built last is read.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// use sandloom_driverkit::notifier::{Message, Notifier};
    /// use sandloom_embedded::{MemoryNotifier, MemoryNotifierOptions};
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() {
    ///     let options = MemoryNotifierOptions { outbox: Some("doc".into()), ..Default::default() };
    ///     let notifier = MemoryNotifier::from_options(options).unwrap();
    ///     notifier.send(&Message::new("#ops", "hello")).await.unwrap();
    ///     assert_eq!(MemoryNotifier::outbox("doc")[0].body, "hello");
    ///     assert!(MemoryNotifier::outbox("nobody").is_empty());
    /// }
    /// ```
    pub fn outbox(name: &str) -> Vec<Message> {
        let live = OUTBOXES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(|outboxes| outboxes.get(name))
            .and_then(Weak::upgrade);
        live.map(|messages| {
            messages
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned()
                .collect()
        })
        .unwrap_or_default()
    }

    fn messages(&self) -> MutexGuard<'_, VecDeque<Message>> {
        // Nothing panics while holding the lock; recover anyway rather than propagate.
        self.messages.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn keep(&self, message: &Message) -> InfraResult<Receipt> {
        self.serving.check(NAME)?;
        validate_message(message)?;
        let receipt = {
            let mut messages = self.messages();
            while messages.len() >= self.capacity {
                messages.pop_front();
            }
            messages.push_back(message.clone());
            // Numbered under the lock, so ids follow the order of `sent()`.
            Receipt::new(format!(
                "memory-{}",
                self.sent.fetch_add(1, Ordering::Relaxed) + 1
            ))
        };
        Ok(receipt)
    }
}

impl NotifierOps for MemoryNotifier {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.keep(message)
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        self.serving.check(NAME)?;
        Ok(messages.iter().map(|message| self.keep(message)).collect())
    }
}

impl Driver for MemoryNotifier {
    type Options = MemoryNotifierOptions;

    fn supported_features() -> &'static [&'static str] {
        &[BATCH]
    }

    fn validate(options: &MemoryNotifierOptions) -> Result<(), DriverError> {
        if options.capacity == 0 {
            return Err(DriverError::new("must be at least 1").at_option("capacity"));
        }
        Ok(())
    }

    fn from_options(options: MemoryNotifierOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        // Grows as needed: a large capacity costs nothing until messages arrive.
        let messages: Messages = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(name) = options.outbox {
            OUTBOXES
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(HashMap::new)
                .insert(name, Arc::downgrade(&messages));
        }
        Ok(Self {
            capacity: options.capacity,
            messages,
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

impl NotifierProvider for MemoryNotifier {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use sandloom_driverkit::sdk::ErrorKind;
    use serde::de::value::{Error as DeError, MapDeserializer};

    use serde::Deserialize;

    use super::*;

    fn notifier(capacity: usize) -> MemoryNotifier {
        MemoryNotifier::from_options(MemoryNotifierOptions {
            capacity,
            outbox: None,
        })
        .unwrap()
    }

    #[tokio::test]
    async fn sent_messages_are_kept_in_order() {
        let notifier = notifier(10);
        let message = Message::new("a@b.c", "hi")
            .with_subject("s")
            .with_metadata("k", "v");
        let first = notifier.send(&message).await.unwrap();
        let second = notifier.send(&Message::new("x", "second")).await.unwrap();
        assert_eq!(
            (first.id.as_str(), second.id.as_str()),
            ("memory-1", "memory-2")
        );
        assert_eq!(notifier.sent(), vec![message, Message::new("x", "second")]);
        notifier.clear();
        assert!(notifier.sent().is_empty());
        let third = notifier.send(&Message::new("x", "third")).await.unwrap();
        assert_eq!(third.id, "memory-3", "ids stay unique after clear");
    }

    #[tokio::test]
    async fn the_oldest_messages_are_dropped_beyond_capacity() {
        let notifier = notifier(3);
        for i in 0..10 {
            notifier
                .send(&Message::new("r", format!("m{i}")))
                .await
                .unwrap();
        }
        let bodies: Vec<String> = notifier.sent().into_iter().map(|m| m.body).collect();
        assert_eq!(bodies, ["m7", "m8", "m9"]);
    }

    #[tokio::test]
    async fn empty_body_or_blank_recipient_is_invalid_input() {
        let notifier = notifier(10);
        for message in [
            Message::new("a", ""),
            Message::new("", "b"),
            Message::new("  ", "b"),
        ] {
            let err = notifier.send(&message).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{message:?}");
        }
        assert!(notifier.sent().is_empty());
    }

    #[tokio::test]
    async fn batch_answers_one_result_per_message() {
        let notifier = notifier(10);
        let batch = [
            Message::new("a", "1"),
            Message::new("", "2"),
            Message::new("c", "3"),
        ];
        let results = notifier.send_batch(&batch).await.unwrap();
        assert_eq!(results.len(), 3);
        assert!(results[0].is_ok() && results[2].is_ok());
        assert_eq!(
            results[1].as_ref().unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        let bodies: Vec<String> = notifier.sent().into_iter().map(|m| m.body).collect();
        assert_eq!(bodies, ["1", "3"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_senders_get_unique_receipts() {
        let notifier = Arc::new(notifier(10_000));
        let mut tasks = Vec::new();
        for t in 0..8 {
            let notifier = Arc::clone(&notifier);
            tasks.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..50 {
                    let message = Message::new("r", format!("{t}-{i}"));
                    ids.push(notifier.send(&message).await.unwrap().id);
                }
                ids
            }));
        }
        let mut ids = HashSet::new();
        for task in tasks {
            for id in task.await.unwrap() {
                assert!(ids.insert(id));
            }
        }
        assert_eq!(notifier.sent().len(), 400);
    }

    #[tokio::test]
    async fn stop_makes_every_operation_stopped_but_keeps_what_was_sent() {
        let notifier = notifier(10);
        notifier.send(&Message::new("a", "b")).await.unwrap();
        notifier.stop().await.unwrap();
        assert!(!notifier.health().await.is_healthy());
        let message = Message::new("a", "c");
        assert_eq!(
            notifier.send(&message).await.unwrap_err().kind(),
            ErrorKind::Stopped
        );
        let batch = notifier.send_batch(std::slice::from_ref(&message)).await;
        assert_eq!(batch.unwrap_err().kind(), ErrorKind::Stopped);
        assert_eq!(notifier.sent().len(), 1);
    }

    #[test]
    fn options_are_validated_and_refuse_unknown_fields() {
        let parse = |pairs: Vec<(&'static str, usize)>| {
            MemoryNotifierOptions::deserialize(MapDeserializer::<_, DeError>::new(
                pairs.into_iter(),
            ))
        };
        assert_eq!(parse(vec![]).unwrap().capacity, 1000);
        assert_eq!(parse(vec![("capacity", 3)]).unwrap().capacity, 3);
        let err = parse(vec![("capacty", 3)]).unwrap_err();
        assert!(err.to_string().contains("unknown field `capacty`"), "{err}");
        assert!(
            MemoryNotifier::from_options(MemoryNotifierOptions {
                capacity: 0,
                outbox: None
            })
            .is_err()
        );
        assert_eq!(MemoryNotifier::supported_features(), &[BATCH]);
    }
}
