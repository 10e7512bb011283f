//! Notifier obligations: after `stop`, and secrets.

use super::NotifierSettings;
use super::receipts::send_ok;
use crate::harness::Instance;
use crate::{expect_kind, expect_unsupported};
use sandloom_driverkit::notifier::NotifierProvider;
use sandloom_sdk_infra::notifier::{BATCH, Message};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

pub(super) async fn operations_after_stop_fail_with_stopped<T: NotifierProvider>(
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

pub(super) async fn secrets_never_show<T: NotifierProvider>(
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
