//! Notifier obligations: what is delivered is what was sent, to its recipients only, whole.

use super::NotifierSettings;
use super::receipts::{describe, distinct, send_invalid, send_ok};
use crate::harness::Instance;
use crate::{call, ensure};
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::notifier::{BATCH, Message, Receipt};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

pub(super) async fn accepted_messages_are_delivered_as_sent<T: NotifierProvider>(
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

/// Whether `got` is `sent` as the contract lets it arrive: recipient, body and metadata exact,
/// the subject exact except that an empty subject may arrive as none.
pub(super) fn same_message(got: &Message, sent: &Message) -> bool {
    let subject = |m: &Message| m.subject.clone().filter(|subject| !subject.is_empty());
    got.recipient == sent.recipient
        && got.body == sent.body
        && got.metadata == sent.metadata
        && subject(got) == subject(sent)
}

/// A message for failure messages, with its subject and metadata.
pub(super) fn describe_fully(message: &Message) -> String {
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
pub(super) fn delivered_in_order(
    what: &str,
    got: &[Message],
    sent: &[Message],
) -> Result<(), String> {
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
pub(super) fn delivered_in_any_order(
    what: &str,
    got: &[Message],
    sent: &[Message],
) -> Result<(), String> {
    let mut got = got.to_vec();
    let mut sent = sent.to_vec();
    got.sort_by(|a, b| a.body.cmp(&b.body));
    sent.sort_by(|a, b| a.body.cmp(&b.body));
    delivered_in_order(what, &got, &sent)
}

/// Send `messages` at once from `TASKS` tasks on several threads (each its share, all of a
/// task's in flight together): their receipts, or the first failure.
pub(super) async fn send_concurrently<T: NotifierProvider>(
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

pub(super) async fn several_recipients_get_only_their_own<T: NotifierProvider>(
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
pub(super) fn long_body() -> String {
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

pub(super) async fn extreme_messages_are_delivered_whole<T: NotifierProvider>(
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
pub(super) async fn line_breaks_cannot_add_recipients<T: NotifierProvider>(
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
