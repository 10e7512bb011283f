//! Notifier obligations on the edges of a message: the smallest one, and what lies past the
//! sizes every driver guarantees or looks alike to a backend that ignores letter case.
//!
//! Each input of the contract, by partition, and the obligation that holds a driver to it:
//!
//! | input | empty | one | typical | at the limit | past the limit | look-alike forms |
//! |---|---|---|---|---|---|---|
//! | recipient | `blank_recipient_is_invalid_input` (`""`, spaces, `\t\n`) | — (the driver's address syntax) | every obligation | the driver's (`configured_invalid_recipient_is_invalid_input`) | the same | `several_recipients_get_only_their_own` |
//! | body | `empty_body_is_invalid_input` | `messages_past_the_guarantees_arrive_whole_or_are_refused` (one character) | `accepted_messages_are_delivered_as_sent` | the guarantee is a floor: `extreme_messages_are_delivered_whole` (256 KiB) | `extreme_messages_are_delivered_whole` (its body is 24 bytes past 256 KiB) | `extreme_messages_are_delivered_whole` (lone dots, trailing spaces), `unicode_and_multiline_text_is_accepted` |
//! | subject | `extreme_messages_are_delivered_whole` (`""` is none) | `subject_and_metadata_are_accepted` | the same | `extreme_messages_are_delivered_whole` (over 300 characters) | the same (the guarantee is a floor) | `line_breaks_cannot_add_recipients` (CR LF) |
//! | metadata | every obligation (none) | `subject_and_metadata_are_accepted` | the same | `extreme_messages_are_delivered_whole` (64 pairs) | `messages_past_the_guarantees_arrive_whole_or_are_refused` (65 pairs) | `messages_past_the_guarantees_arrive_whole_or_are_refused` (keys differing in case, an empty key); `line_breaks_cannot_add_recipients` (CR LF in values) |
//! | batch | `batch_answers_one_result_per_message_in_order` (empty) | the same | the same | no limit: `large_and_concurrent_batches_keep_order_and_ids` (100) | — | — |
//!
//! The notifier contract makes no promise about time passing (nothing it holds can expire), so
//! it has no obligation of absence.

use super::NotifierSettings;
use super::delivery::delivered_in_order;
use super::receipts::{describe, send_ok};
use crate::harness::Instance;
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::ErrorKind;

pub(super) async fn messages_past_the_guarantees_arrive_whole_or_are_refused<
    T: NotifierProvider,
>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let notifier = &*i.driver;
    // The smallest message: a body of one character. It must go.
    let smallest = s.message("1");
    send_ok(notifier, &smallest).await?;
    let mut sent = vec![smallest];
    // Past what every driver guarantees: a 65th metadata pair (the kit's long body is already
    // past 256 KiB: `extreme_messages_are_delivered_whole`); and metadata keys a backend that
    // ignores case (e-mail or HTTP headers) would merge, and the empty key. Each is delivered
    // exactly or refused with `InvalidInput`; none is cut.
    let mut pairs = s.message("kit: 65 metadata pairs");
    for n in 0..65 {
        pairs = pairs.with_metadata(format!("kit-{n:02}"), format!("value {n}"));
    }
    let past = [
        pairs,
        s.message("kit: keys that differ in case")
            .with_metadata("kit-case", "lower")
            .with_metadata("Kit-Case", "capital")
            .with_metadata("KIT-CASE", "upper"),
        s.message("kit: an empty metadata key")
            .with_metadata("", "nameless")
            .with_metadata("kit-named", "named"),
    ];
    for message in past {
        match notifier.send(&message).await {
            Ok(_) => sent.push(message),
            Err(error) if error.kind() == ErrorKind::InvalidInput => {}
            Err(error) => {
                return Err(format!(
                    "send({}) must be delivered exactly or refused with InvalidInput; it \
                     answered {}: {error}",
                    describe(&message),
                    error.kind()
                ));
            }
        }
    }
    let plain = s.message("kit: after the edges");
    send_ok(notifier, &plain).await?;
    sent.push(plain);
    let Some(delivered) = &s.delivered else {
        return Ok(());
    };
    delivered_in_order(
        "messages past the guaranteed sizes and with look-alike metadata keys (each accepted \
         and then delivered whole, or refused)",
        &delivered(notifier),
        &sent,
    )
}
