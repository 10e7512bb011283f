use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use sandloom_driverkit::sdk::ErrorKind;
use serde::de::IntoDeserializer;
use serde::de::value::{Error as DeError, MapDeserializer};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, span};

use serde::Deserialize;

use super::*;

#[derive(Debug, Clone)]
struct Captured {
    target: String,
    level: Level,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            target: event.metadata().target().to_owned(),
            level: *event.metadata().level(),
            fields,
        });
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

impl Capture {
    fn events(&self) -> Vec<Captured> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|event| event.target == TARGET)
            .cloned()
            .collect()
    }
}

fn notifier(level: LogLevel) -> LogNotifier {
    LogNotifier::from_options(LogNotifierOptions { level }).unwrap()
}

#[tokio::test]
async fn send_logs_one_event_with_the_message_and_redacted_secrets() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let message = Message::new("ops@example.com", "disk full")
        .with_subject("alert")
        .with_metadata("severity", "high")
        .with_metadata("X-Api-Token", "tok-123")
        .with_metadata("db_password", "hunter2")
        .with_metadata("SECRET", "s3cr3t");
    let receipt = notifier(LogLevel::Warn).send(&message).await.unwrap();
    assert_eq!(receipt.id, "log-1");
    let events = capture.events();
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.level, Level::WARN);
    assert_eq!(event.fields["recipient"], "ops@example.com");
    assert_eq!(event.fields["subject"], "alert");
    assert_eq!(event.fields["body"], "disk full");
    assert_eq!(event.fields["body_len"], "9");
    assert_eq!(event.fields["receipt"], "log-1");
    let metadata = &event.fields["metadata"];
    assert!(metadata.contains(r#""severity": "high""#), "{metadata}");
    for secret in ["tok-123", "hunter2", "s3cr3t"] {
        assert!(
            !format!("{event:?}").contains(secret),
            "{secret} leaked: {event:?}"
        );
    }
    assert_eq!(metadata.matches("[redacted]").count(), 3, "{metadata}");
}

#[tokio::test]
async fn the_level_option_selects_the_event_level() {
    for (option, level) in [
        (LogLevel::Debug, Level::DEBUG),
        (LogLevel::Info, Level::INFO),
        (LogLevel::Warn, Level::WARN),
    ] {
        let capture = Capture::default();
        let _guard = tracing::subscriber::set_default(capture.clone());
        notifier(option)
            .send(&Message::new("a", "b"))
            .await
            .unwrap();
        let events = capture.events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].level, level);
    }
}

#[tokio::test]
async fn receipts_are_unique() {
    let notifier = notifier(LogLevel::Info);
    let mut ids = std::collections::HashSet::new();
    for _ in 0..100 {
        let receipt = notifier.send(&Message::new("a", "b")).await.unwrap();
        assert!(ids.insert(receipt.id));
    }
}

#[tokio::test]
async fn empty_body_or_blank_recipient_is_invalid_input() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let notifier = notifier(LogLevel::Info);
    for message in [
        Message::new("a", ""),
        Message::new("", "b"),
        Message::new(" \t", "b"),
    ] {
        let err = notifier.send(&message).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{message:?}");
    }
    assert!(
        capture.events().is_empty(),
        "nothing is logged for refused messages"
    );
}

#[tokio::test]
async fn batch_answers_one_result_per_message() {
    let notifier = notifier(LogLevel::Info);
    let results = notifier
        .send_batch(&[
            Message::new("a", "1"),
            Message::new("a", ""),
            Message::new("b", "3"),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].as_ref().unwrap().id, "log-1");
    assert_eq!(
        results[1].as_ref().unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(results[2].as_ref().unwrap().id, "log-2");
    assert!(notifier.send_batch(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn stop_makes_every_operation_stopped() {
    let notifier = notifier(LogLevel::Info);
    notifier.stop().await.unwrap();
    assert!(!notifier.health().await.is_healthy());
    let message = Message::new("a", "b");
    assert_eq!(
        notifier.send(&message).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
    let batch = notifier.send_batch(std::slice::from_ref(&message)).await;
    assert_eq!(batch.unwrap_err().kind(), ErrorKind::Stopped);
}

#[test]
fn options_parse_levels_and_refuse_unknown_fields() {
    let parse = |pairs: Vec<(&'static str, &'static str)>| {
        let map = pairs.into_iter().map(|(k, v)| (k, v.into_deserializer()));
        LogNotifierOptions::deserialize(MapDeserializer::<_, DeError>::new(map))
    };
    assert_eq!(parse(vec![]).unwrap().level, LogLevel::Info);
    assert_eq!(
        parse(vec![("level", "debug")]).unwrap().level,
        LogLevel::Debug
    );
    assert_eq!(
        parse(vec![("level", "warn")]).unwrap().level,
        LogLevel::Warn
    );
    assert!(parse(vec![("level", "error")]).is_err());
    let err = parse(vec![("levle", "info")]).unwrap_err();
    assert!(err.to_string().contains("unknown field `levle`"), "{err}");
    assert_eq!(LogNotifier::supported_features(), &[BATCH]);
}

#[test]
fn secret_keys_are_recognised_in_any_case() {
    assert!(is_secret_key("Authorization"));
    assert!(is_secret_key("refresh_TOKEN"));
    assert!(!is_secret_key("severity"));
    let mut metadata = BTreeMap::new();
    metadata.insert("password".to_owned(), "p".to_owned());
    metadata.insert("tag".to_owned(), "t".to_owned());
    assert_eq!(
        loggable_metadata(&metadata),
        r#"{"password": "[redacted]", "tag": "t"}"#
    );
}
