//! Notifier obligations: a sent message gets a receipt, and receipt ids are distinct, also under concurrency.

use super::NotifierSettings;
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::notifier::{Message, Notifier, Receipt};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::SystemTime;

/// Send `message`, which must be accepted with a usable receipt.
pub(super) async fn send_ok(notifier: &dyn Notifier, message: &Message) -> Result<Receipt, String> {
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
pub(super) async fn send_invalid(notifier: &dyn Notifier, message: &Message) -> Result<(), String> {
    expect_kind(
        &format!("send({})", describe(message)),
        ErrorKind::InvalidInput,
        &notifier.send(message).await,
    )
}

/// A message for failure messages: the recipient and the start of the body.
pub(super) fn describe(message: &Message) -> String {
    let body: String = message.body.chars().take(24).collect();
    let more = if body.len() < message.body.len() {
        "…"
    } else {
        ""
    };
    format!("to {:?}: {body:?}{more}", message.recipient)
}

/// Record `id`; fail when it was seen before.
pub(super) fn distinct(seen: &mut HashSet<String>, id: String, what: &str) -> Result<(), String> {
    let message = format!("{what} answered the receipt id {id:?} a second time");
    ensure!(seen.insert(id), "{message}");
    Ok(())
}

pub(super) async fn send_returns_a_receipt_with_an_id<T: NotifierProvider>(
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

pub(super) async fn receipt_ids_are_distinct<T: NotifierProvider>(
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

pub(super) async fn concurrent_sends_get_distinct_receipts<T: NotifierProvider>(
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
