//! The gate's spans: one per operation, with the instance's names, the outcome and the duration,
//! never a key or a value; none when telemetry is off. Every test here runs under a capturing
//! subscriber (tracing's callsite interest is process-wide).

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandloom_driverkit::cache::Cache as _;
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::sdk::bytes::Bytes;
use support::gate::{block_on, gate};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry};

/// A span: its name and its fields, as text.
type Captured = (String, HashMap<String, String>);

/// Every closed span, in order.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Captured>>>);

struct Capture {
    spans: Spans,
    open: Mutex<HashMap<Id, Captured>>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S>
    for Capture
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        attributes.record(&mut Fields(&mut fields));
        let name = attributes.metadata().name().to_owned();
        self.open.lock().unwrap().insert(id.clone(), (name, fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some((_, fields)) = self.open.lock().unwrap().get_mut(id) {
            values.record(&mut Fields(fields));
        }
    }
    fn on_close(&self, id: Id, _: Context<'_, S>) {
        if let Some(span) = self.open.lock().unwrap().remove(&id) {
            self.spans.0.lock().unwrap().push(span);
        }
    }
}

fn traced<T>(run: impl FnOnce() -> T) -> (T, Vec<Captured>) {
    let spans = Spans::default();
    let subscriber = Registry::default().with(Capture {
        spans: spans.clone(),
        open: Mutex::default(),
    });
    let out = tracing::subscriber::with_default(subscriber, run);
    let captured = spans.0.lock().unwrap().clone();
    (out, captured)
}

#[test]
fn each_operation_leaves_one_span_with_its_names_outcome_and_duration_and_no_values() {
    let ((), spans) = traced(|| {
        let cache = gate(true);
        block_on(async {
            assert!(cache.get("secret-key").await.unwrap().is_some());
            assert_eq!(
                cache.get("bad").await.unwrap_err().kind(),
                ErrorKind::InvalidInput
            );
            // Implemented, not declared: the gate refuses it, and records that.
            let refused = cache
                .set_with_ttl("k", Bytes::new(), Duration::from_secs(1))
                .await;
            assert_eq!(refused.unwrap_err().kind(), ErrorKind::Unsupported);
        });
    });
    assert_eq!(spans.len(), 3, "{spans:#?}");
    for (name, fields) in &spans {
        assert_eq!(name, "sandloom.operation");
        assert_eq!(fields["sandloom.capability"], "cache");
        assert_eq!(fields["sandloom.instance"], "sessions");
        assert_eq!(fields["sandloom.driver"], "tiny");
        assert!(fields.contains_key("sandloom.duration_us"), "{fields:?}");
        let all = format!("{fields:?}");
        assert!(
            !all.contains("secret"),
            "a key or a value was recorded: {all}"
        );
    }
    let ok = &spans[0].1;
    assert_eq!(ok["otel.name"], "cache.get");
    assert_eq!(ok["sandloom.operation"], "get");
    assert_eq!(ok["sandloom.outcome"], "ok");
    assert!(!ok.contains_key("otel.status_code"), "{ok:?}");
    let failed = &spans[1].1;
    assert_eq!(failed["sandloom.outcome"], "invalid_input");
    assert_eq!(failed["otel.status_code"], "ERROR");
    assert_eq!(failed["error.type"], "invalid_input");
    let refused = &spans[2].1;
    assert_eq!(refused["otel.name"], "cache.set_with_ttl");
    assert_eq!(refused["sandloom.outcome"], "unsupported");
}

#[test]
fn telemetry_off_leaves_no_span() {
    let ((), spans) = traced(|| {
        let cache = gate(false);
        block_on(async {
            cache.get("k").await.unwrap();
        });
    });
    assert!(spans.is_empty(), "{spans:#?}");
}
