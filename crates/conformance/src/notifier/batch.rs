//! Notifier obligations: `send_batch` answers one result per message, in order, also beside other sends.

use super::NotifierSettings;
use super::delivery::{delivered_in_any_order, delivered_in_order, send_concurrently};
use super::receipts::{describe, distinct, send_ok};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::notifier::{BATCH, Message, Receipt};
use std::collections::HashSet;
use std::time::{Duration, SystemTime};

pub(super) async fn batch_answers_one_result_per_message_in_order<T: NotifierProvider>(
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

/// Whether `receipt` was accepted between `before` and `after`, give or take `skew`.
pub(super) fn accepted_during(
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

pub(super) async fn large_and_concurrent_batches_keep_order_and_ids<T: NotifierProvider>(
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
pub(super) async fn concurrent_batches_and_sends<T: NotifierProvider>(
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
