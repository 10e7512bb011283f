//! Notifier obligations: what a message may hold, and what is refused as invalid input.

use super::NotifierSettings;
use super::receipts::{send_invalid, send_ok};
use crate::harness::Instance;
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::notifier::Message;

pub(super) async fn empty_body_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    send_invalid(&*i.driver, &s.message("")).await?;
    send_invalid(&*i.driver, &s.message("").with_subject("kit: subject only")).await
}

pub(super) async fn blank_recipient_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    _: &NotifierSettings<T>,
) -> Result<(), String> {
    for recipient in ["", "   ", "\t\n"] {
        send_invalid(&*i.driver, &Message::new(recipient, "kit: to nobody")).await?;
    }
    Ok(())
}

pub(super) async fn configured_invalid_recipient_is_invalid_input<T: NotifierProvider>(
    i: &Instance<T>,
    s: &NotifierSettings<T>,
) -> Result<(), String> {
    let Some(invalid) = &s.invalid else {
        return Ok(());
    };
    send_invalid(&*i.driver, &Message::new(invalid.clone(), "kit: to nobody")).await
}

pub(super) async fn subject_and_metadata_are_accepted<T: NotifierProvider>(
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

pub(super) async fn unicode_and_multiline_text_is_accepted<T: NotifierProvider>(
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

pub(super) async fn a_refused_message_does_not_break_the_driver<T: NotifierProvider>(
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
