//! The notifier kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

use sandloom_conformance::Kit;
use sandloom_conformance::notifier::NotifierConformance;
use sandloom_driverkit::notifier::{BATCH, Message, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};

/// One way to be wrong, each named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    EmptyReceiptId,
    ReceiptFromTheEpoch,
    IdsFromContent,
    RacyIdCounter,
    AcceptsEmptyBody,
    AcceptsBlankRecipient,
    AcceptsAnyRecipient,
    RefusesMetadata,
    PanicsOnNonAsciiSubject,
    BrokenAfterRefusal,
    TrimsBody,
    DeliversRefused,
    BatchStopsAtFirstFailure,
    BatchErrorsLast,
    BatchFailsWhole,
    BatchWithoutDeclaring,
    DeclaresBatchWithoutImplementing,
    WorksAfterStop,
    BatchWorksAfterStop,
    /// Reports every receipt as accepted 10 s after its `send`.
    ReceiptFromTheFuture,
    /// Shows its webhook secret in the error of an empty body.
    SecretInErrors,
    /// Keeps the recipient of the message under way in one slot shared by every send, so
    /// concurrent sends deliver to each other's recipients.
    SharedRecipientSlot,
    /// Sends a whole batch to the recipient of its first message.
    BatchToFirstRecipient,
    /// Delivers at most 64 KiB of a body.
    TruncatesLongBodies,
    /// Passes on at most 32 metadata pairs.
    DropsMetadataBeyond32,
    /// Refuses an empty subject as `InvalidInput`.
    RefusesEmptySubject,
    /// Answers at most 64 results for a batch, and sends no more.
    BatchCapsAt64,
    /// Numbers a batch's receipts from 1 in each call.
    BatchIdsRestartPerCall,
    /// Reports a batch's receipts as accepted at the epoch.
    BatchReceiptsFromTheEpoch,
    /// Writes the subject into a header unescaped: a line `Bcc: x` in it also sends the message
    /// to `x`.
    HeaderInjection,
    /// Keeps only the 64 metadata pairs every driver guarantees.
    DropsMetadataPast64,
    /// Lower-cases metadata keys (as a case-insensitive header map does): the last of keys that
    /// differ only in case wins.
    FoldsMetadataKeyCase,
}

/// The secret the broken driver leaks; the kit is told it is secret.
const SECRET: &str = "hunter2";

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reference")
            .field("flaw", &self.flaw)
            .finish_non_exhaustive()
    }
}

/// The reference notifier: recipients ending in `.invalid` do not exist; it keeps what it
/// delivers, so the kit can read it back.
struct Reference {
    flaw: Flaw,
    next_id: AtomicU64,
    delivered: Mutex<Vec<Message>>,
    broken: AtomicBool,
    stopped: AtomicBool,
    /// `SharedRecipientSlot`: the recipient of the message under way.
    slot: Mutex<String>,
}

const NAME: &str = "notifier";
/// What the reference refuses as an unknown recipient.
const UNKNOWN: &str = "ops@example.invalid";

impl Reference {
    fn delivered(&self) -> Vec<Message> {
        self.delivered.lock().unwrap().clone()
    }

    fn validate(&self, message: &Message) -> InfraResult<()> {
        let blank = if self.flaw == Flaw::AcceptsBlankRecipient {
            message.recipient.is_empty()
        } else {
            message.recipient.trim().is_empty()
        };
        if blank {
            return Err(InfraError::invalid_input(NAME, "blank recipient"));
        }
        if message.recipient.ends_with(".invalid") && self.flaw != Flaw::AcceptsAnyRecipient {
            return Err(InfraError::invalid_input(NAME, "no such recipient"));
        }
        if message.body.is_empty() && self.flaw != Flaw::AcceptsEmptyBody {
            if self.flaw == Flaw::SecretInErrors {
                return Err(InfraError::invalid_input(
                    NAME,
                    format!("empty body (signed with {SECRET})"),
                ));
            }
            return Err(InfraError::invalid_input(NAME, "empty body"));
        }
        if message.subject.as_deref() == Some("") && self.flaw == Flaw::RefusesEmptySubject {
            return Err(InfraError::invalid_input(NAME, "empty subject"));
        }
        if !message.metadata.is_empty() && self.flaw == Flaw::RefusesMetadata {
            return Err(InfraError::invalid_input(NAME, "metadata not supported"));
        }
        Ok(())
    }

    async fn new_id(&self, message: &Message) -> String {
        match self.flaw {
            Flaw::EmptyReceiptId => String::new(),
            Flaw::IdsFromContent => {
                let mut hasher = DefaultHasher::new();
                (&message.recipient, &message.body).hash(&mut hasher);
                format!("ref-{:x}", hasher.finish())
            }
            Flaw::RacyIdCounter => {
                let current = self.next_id.load(Ordering::SeqCst);
                tokio::task::yield_now().await;
                self.next_id.store(current + 1, Ordering::SeqCst);
                format!("ref-{}", current + 1)
            }
            _ => format!("ref-{}", self.next_id.fetch_add(1, Ordering::SeqCst) + 1),
        }
    }

    fn check_running(&self, in_batch: bool) -> InfraResult<()> {
        let ignores_stop = self.flaw == Flaw::WorksAfterStop
            || (in_batch && self.flaw == Flaw::BatchWorksAfterStop);
        if self.stopped.load(Ordering::Acquire) && !ignores_stop {
            return Err(InfraError::stopped(NAME));
        }
        Ok(())
    }

    async fn deliver(&self, message: &Message, in_batch: bool) -> InfraResult<Receipt> {
        self.check_running(in_batch)?;
        if self.broken.load(Ordering::Acquire) {
            return Err(InfraError::unavailable(NAME, "connection lost"));
        }
        if let Err(error) = self.validate(message) {
            if self.flaw == Flaw::BrokenAfterRefusal {
                self.broken.store(true, Ordering::Release);
            }
            if self.flaw == Flaw::DeliversRefused {
                self.delivered.lock().unwrap().push(message.clone());
            }
            return Err(error);
        }
        if let Some(subject) = &message.subject {
            assert!(
                self.flaw != Flaw::PanicsOnNonAsciiSubject || subject.is_ascii(),
                "cannot encode the subject"
            );
        }
        let mut kept = message.clone();
        if self.flaw == Flaw::TrimsBody {
            kept.body = kept.body.trim().to_owned();
        }
        if self.flaw == Flaw::TruncatesLongBodies && kept.body.len() > 64 * 1024 {
            let mut end = 64 * 1024;
            while !kept.body.is_char_boundary(end) {
                end -= 1;
            }
            kept.body.truncate(end);
        }
        if self.flaw == Flaw::DropsMetadataPast64 {
            kept.metadata = kept.metadata.into_iter().take(64).collect();
        }
        if self.flaw == Flaw::FoldsMetadataKeyCase {
            kept.metadata = kept
                .metadata
                .into_iter()
                .map(|(key, value)| (key.to_lowercase(), value))
                .collect();
        }
        if self.flaw == Flaw::DropsMetadataBeyond32 {
            kept.metadata = kept.metadata.into_iter().take(32).collect();
        }
        if self.flaw == Flaw::SharedRecipientSlot {
            self.slot.lock().unwrap().clone_from(&message.recipient);
        }
        let id = self.new_id(message).await;
        if self.flaw == Flaw::SharedRecipientSlot {
            tokio::task::yield_now().await;
            kept.recipient.clone_from(&self.slot.lock().unwrap());
        }
        if self.flaw == Flaw::HeaderInjection
            && let Some(subject) = &message.subject
        {
            for line in subject.split("\r\n").skip(1) {
                if let Some(bcc) = line.strip_prefix("Bcc: ") {
                    let mut copy = kept.clone();
                    bcc.clone_into(&mut copy.recipient);
                    self.delivered.lock().unwrap().push(copy);
                }
            }
        }
        self.delivered.lock().unwrap().push(kept);
        let mut receipt = Receipt::new(id);
        if self.flaw == Flaw::ReceiptFromTheEpoch {
            receipt.accepted_at = SystemTime::UNIX_EPOCH;
        }
        if self.flaw == Flaw::ReceiptFromTheFuture {
            receipt.accepted_at = SystemTime::now() + std::time::Duration::from_secs(10);
        }
        Ok(receipt)
    }
}

impl NotifierOps for Reference {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.deliver(message, false).await
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        if self.flaw == Flaw::DeclaresBatchWithoutImplementing {
            return Err(InfraError::unsupported(NAME, "send_batch", BATCH));
        }
        self.check_running(true)?;
        let mut results = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            if self.flaw == Flaw::BatchCapsAt64 && index == 64 {
                break;
            }
            let mut message = message.clone();
            if self.flaw == Flaw::BatchToFirstRecipient && self.validate(&message).is_ok() {
                // One envelope for the whole batch, addressed to the first recipient.
                message.recipient = messages[0].recipient.clone();
            }
            let mut result = self.deliver(&message, true).await;
            if let Ok(receipt) = &mut result {
                if self.flaw == Flaw::BatchIdsRestartPerCall {
                    receipt.id = format!("batch-{}", index + 1);
                }
                if self.flaw == Flaw::BatchReceiptsFromTheEpoch {
                    receipt.accepted_at = SystemTime::UNIX_EPOCH;
                }
            }
            match (self.flaw, result) {
                (Flaw::BatchFailsWhole, Err(error)) => return Err(error),
                (Flaw::BatchStopsAtFirstFailure, Err(error)) => {
                    results.push(Err(error));
                    break;
                }
                (_, result) => results.push(result),
            }
        }
        if self.flaw == Flaw::BatchErrorsLast {
            results.sort_by_key(Result::is_err);
        }
        Ok(results)
    }
}

impl Driver for Reference {
    type Options = Flaw;

    fn supported_features() -> &'static [&'static str] {
        &[BATCH]
    }

    fn features_for(flaw: &Flaw) -> Vec<&'static str> {
        match flaw {
            Flaw::BatchWithoutDeclaring => vec![],
            _ => vec![BATCH],
        }
    }

    fn from_options(flaw: Flaw) -> Result<Self, DriverError> {
        Ok(Self {
            flaw,
            next_id: AtomicU64::new(0),
            delivered: Mutex::new(Vec::new()),
            broken: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            slot: Mutex::new(String::new()),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl NotifierProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

/// The kit as a driver crate would configure it for the reference driver.
fn kit(flaw: Flaw) -> NotifierConformance<Reference> {
    NotifierConformance::<Reference>::new(move |_| flaw)
        .invalid_recipient(UNKNOWN)
        .delivered(Reference::delivered)
        .secrets([SECRET])
}

// The reference as a driver crate runs it: one named test per obligation (and the macro's
// prefixed, configured form compiles and covers every obligation).
sandloom_conformance::notifier_conformance!(
    reference: Reference,
    |_request| Flaw::None,
    .invalid_recipient(UNKNOWN)
    .delivered(Reference::delivered),
);

#[test]
fn the_reference_driver_passes_every_obligation() {
    let failures = kit(Flaw::None).check_all();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Each flaw and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::EmptyReceiptId, "send_returns_a_receipt_with_an_id"),
    (
        Flaw::ReceiptFromTheEpoch,
        "send_returns_a_receipt_with_an_id",
    ),
    (Flaw::IdsFromContent, "receipt_ids_are_distinct"),
    (
        Flaw::RacyIdCounter,
        "concurrent_sends_get_distinct_receipts",
    ),
    (Flaw::AcceptsEmptyBody, "empty_body_is_invalid_input"),
    (
        Flaw::AcceptsBlankRecipient,
        "blank_recipient_is_invalid_input",
    ),
    (
        Flaw::AcceptsAnyRecipient,
        "configured_invalid_recipient_is_invalid_input",
    ),
    (Flaw::RefusesMetadata, "subject_and_metadata_are_accepted"),
    (
        Flaw::PanicsOnNonAsciiSubject,
        "unicode_and_multiline_text_is_accepted",
    ),
    (
        Flaw::BrokenAfterRefusal,
        "a_refused_message_does_not_break_the_driver",
    ),
    (Flaw::TrimsBody, "accepted_messages_are_delivered_as_sent"),
    (Flaw::HeaderInjection, "line_breaks_cannot_add_recipients"),
    (
        Flaw::DeliversRefused,
        "accepted_messages_are_delivered_as_sent",
    ),
    (
        Flaw::BatchStopsAtFirstFailure,
        "batch_answers_one_result_per_message_in_order",
    ),
    (
        Flaw::BatchErrorsLast,
        "batch_answers_one_result_per_message_in_order",
    ),
    (
        Flaw::BatchFailsWhole,
        "batch_answers_one_result_per_message_in_order",
    ),
    (
        Flaw::BatchWithoutDeclaring,
        "batch_answers_one_result_per_message_in_order",
    ),
    (
        Flaw::DeclaresBatchWithoutImplementing,
        "batch_answers_one_result_per_message_in_order",
    ),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::BatchWorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::ReceiptFromTheFuture,
        "send_returns_a_receipt_with_an_id",
    ),
    (Flaw::SecretInErrors, "secrets_never_show"),
    (
        Flaw::SharedRecipientSlot,
        "several_recipients_get_only_their_own",
    ),
    (
        Flaw::BatchToFirstRecipient,
        "several_recipients_get_only_their_own",
    ),
    (
        Flaw::TruncatesLongBodies,
        "extreme_messages_are_delivered_whole",
    ),
    (
        Flaw::DropsMetadataBeyond32,
        "extreme_messages_are_delivered_whole",
    ),
    (
        Flaw::RefusesEmptySubject,
        "extreme_messages_are_delivered_whole",
    ),
    (
        Flaw::BatchCapsAt64,
        "large_and_concurrent_batches_keep_order_and_ids",
    ),
    (
        Flaw::BatchIdsRestartPerCall,
        "large_and_concurrent_batches_keep_order_and_ids",
    ),
    (
        Flaw::BatchReceiptsFromTheEpoch,
        "large_and_concurrent_batches_keep_order_and_ids",
    ),
    (
        Flaw::DropsMetadataPast64,
        "messages_past_the_guarantees_arrive_whole_or_are_refused",
    ),
    (
        Flaw::FoldsMetadataKeyCase,
        "messages_past_the_guarantees_arrive_whole_or_are_refused",
    ),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, kit);
}

#[test]
fn racy_receipt_ids_are_caught_every_time() {
    for _ in 0..20 {
        let outcome = kit(Flaw::RacyIdCounter).check("concurrent_sends_get_distinct_receipts");
        assert!(outcome.is_err(), "a racy id counter slipped through");
    }
}

#[test]
fn the_configured_recipients_are_the_ones_used() {
    // A valid recipient the driver refuses fails the kit: the setting is used, not ignored.
    let refused = NotifierConformance::<Reference>::new(|_| Flaw::None)
        .valid_recipient("ops@nowhere.invalid")
        .check("send_returns_a_receipt_with_an_id");
    assert!(
        refused.is_err(),
        "the kit did not send to the valid recipient"
    );
    // Without an invalid recipient there is nothing driver-specific to refuse, and without a
    // reader nothing to read back: those obligations hold trivially.
    let plain = NotifierConformance::<Reference>::new(|_| Flaw::AcceptsAnyRecipient);
    plain
        .check("configured_invalid_recipient_is_invalid_input")
        .unwrap();
    NotifierConformance::<Reference>::new(|_| Flaw::TrimsBody)
        .check("accepted_messages_are_delivered_as_sent")
        .unwrap();
    // A recipient the driver accepts is not a valid choice of invalid recipient.
    let accepted = NotifierConformance::<Reference>::new(|_| Flaw::None)
        .invalid_recipient("ops@example.com")
        .check("configured_invalid_recipient_is_invalid_input");
    assert!(accepted.is_err());
}

#[test]
fn a_panicking_driver_is_a_failed_obligation_not_a_crash() {
    let failure = kit(Flaw::PanicsOnNonAsciiSubject)
        .check("unicode_and_multiline_text_is_accepted")
        .unwrap_err();
    assert!(
        failure
            .message
            .contains("panicked: cannot encode the subject"),
        "{failure}"
    );
}

#[test]
fn an_unknown_obligation_is_a_failure() {
    let failure = kit(Flaw::None).check("no_such_thing").unwrap_err();
    assert!(failure.message.contains("no such obligation"), "{failure}");
}

#[test]
fn every_flaw_is_tried() {
    // A flaw added to the enum but not to `CASES` would prove nothing.
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    let not_flaws = ["None"];
    let untried = flaws::untried(include_str!("kit_notifier.rs"), &tried, &not_flaws);
    assert!(untried.is_empty(), "flaws no test tries: {untried:?}");
}
