//! Secrets obligations: values never shown, operations after `stop`, planted secrets.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sandloom_driverkit::secrets::{LIST, SecretsCapability, SecretsProvider, VERSIONS, WATCH};
use sandloom_sdk_infra::ErrorKind;
use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use super::{SecretsSettings, set};
use crate::harness::Instance;
use crate::{ensure, expect_kind};

/// The value `values_never_show` seeds: text nothing else in a message would contain.
const SHOWN_NOWHERE: &str = "kit-VALUE-9f3a7c21-never-shown";

/// Records the text of every span and event, whatever its level: what a subscriber at TRACE
/// would write.
#[derive(Default)]
struct Capture {
    text: Arc<Mutex<String>>,
    ids: AtomicU64,
}

struct Writer<'a>(&'a mut String);

impl Visit for Writer<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl Capture {
    fn write(&self, values: impl FnOnce(&mut Writer<'_>)) {
        let mut text = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        values(&mut Writer(&mut text));
        text.push('\n');
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.write(|w| {
            w.0.push_str(span.metadata().name());
            w.0.push(' ');
            span.record(w);
        });
        Id::from_u64(self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        self.write(|w| values.record(w));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.write(|w| event.record(w));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

pub(super) async fn values_never_show<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    let value = SHOWN_NOWHERE.as_bytes();
    set(i, s, "kit/shown", value).await?;
    let past_limit: Vec<u8> = value
        .iter()
        .copied()
        .cycle()
        .take(s.max_value_bytes() + 1)
        .collect();
    set(i, s, "kit/shown_too_large", &past_limit).await?;
    let capture = Capture::default();
    let text = Arc::clone(&capture.text);
    let answers = async {
        let mut shown = Vec::new();
        let got = secrets.get("kit/shown").await;
        ensure!(
            got.as_ref().is_ok_and(|v| v.expose().as_slice() == value),
            "`get(\"kit/shown\")` did not answer the seeded value"
        );
        shown.push((
            "the answer of `get`".to_owned(),
            format!("{got:?} {:?}", got.as_ref().map(ToString::to_string)),
        ));
        let too_large = secrets.get("kit/shown_too_large").await;
        shown.push((
            "`get` of a value past the limit".to_owned(),
            shown_result(&too_large),
        ));
        if i.declares(VERSIONS) {
            let version = secrets.current_version("kit/shown").await;
            shown.push(("`current_version`".to_owned(), format!("{version:?}")));
            let missing = secrets.get_version("kit/shown", 1_000_000).await;
            shown.push((
                "`get_version` of a missing version".to_owned(),
                shown_result(&missing),
            ));
        }
        if i.declares(WATCH) {
            let changes = secrets.changes(0, Duration::ZERO).await;
            shown.push(("`changes`".to_owned(), format!("{changes:?}")));
        }
        if i.declares(LIST) {
            let listed = secrets.list("kit/").await;
            shown.push(("`list`".to_owned(), format!("{listed:?}")));
        }
        Ok::<_, String>(shown)
    }
    .with_subscriber(capture)
    .await?;
    let telemetry = text.lock().unwrap_or_else(PoisonError::into_inner).clone();
    for (what, text) in answers
        .iter()
        .map(|(what, text)| (what.as_str(), text.as_str()))
        .chain([(
            "the spans and events recorded while they ran",
            telemetry.as_str(),
        )])
    {
        ensure!(
            !text.contains(SHOWN_NOWHERE),
            "a seeded value shows in {what}: {}",
            text.replace(SHOWN_NOWHERE, "<THE VALUE>")
        );
    }
    Ok(())
}

/// The `Debug` and `Display` of an operation's answer.
fn shown_result<V: fmt::Debug>(result: &Result<V, sandloom_sdk_infra::InfraError>) -> String {
    match result {
        Ok(value) => format!("{value:?}"),
        Err(error) => format!("{error} {error:?}"),
    }
}

pub(super) async fn operations_after_stop_fail_with_stopped<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    set(i, s, "kit/stop", b"value").await?;
    i.driver()
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    let stopped = |what: &str| format!("`{what}` after stop");
    expect_kind(
        &stopped("get"),
        ErrorKind::Stopped,
        &secrets.get("kit/stop").await.map(|v| v.expose().len()),
    )?;
    if i.declares(VERSIONS) {
        expect_kind(
            &stopped("get_version"),
            ErrorKind::Stopped,
            &secrets
                .get_version("kit/stop", 1)
                .await
                .map(|v| v.expose().len()),
        )?;
        expect_kind(
            &stopped("current_version"),
            ErrorKind::Stopped,
            &secrets.current_version("kit/stop").await,
        )?;
    }
    if i.declares(WATCH) {
        expect_kind(
            &stopped("changes"),
            ErrorKind::Stopped,
            &secrets.changes(0, Duration::from_secs(5)).await,
        )?;
    }
    if i.declares(LIST) {
        expect_kind(
            &stopped("list"),
            ErrorKind::Stopped,
            &secrets.list("").await,
        )?;
    }
    Ok(())
}

pub(super) async fn secrets_never_show<T: SecretsProvider>(
    i: &Instance<T>,
    _: &SecretsSettings,
) -> Result<(), String> {
    i.secrets_never_show(|secrets| {
        Box::pin(async move {
            vec![
                secrets.get("").await.err(),
                secrets.get("kit/never_shown").await.err(),
            ]
        })
    })
    .await
}
