//! One `tracing` span and two `metrics` series per operation, recorded by the gate for every
//! capability — and nothing at all, not even a clock read, when nobody listens.
//!
//! Names follow OpenTelemetry's conventions where they exist: the span carries `otel.name`
//! (`cache.get`), `otel.status_code` (`ERROR` on failure) and `error.type` (the `ErrorKind`);
//! durations are in seconds. Keys, values, payloads and options are never recorded.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use metrics::{Counter, Histogram, Label};
use sandloom_sdk_infra::{Boxed, ErrorKind, InfraResult};
use tracing::Instrument as _;
use tracing::field::Empty;

use sandloom_kernel::telemetry::{BOXED_METRIC, DURATION_METRIC, LABELS, OPERATIONS_METRIC};

/// An outcome label: `ok`, or the `ErrorKind`'s name.
const OUTCOMES: [&str; 9] = [
    "ok",
    "unsupported",
    "not_found",
    "invalid_input",
    "conflict",
    "stopped",
    "unavailable",
    "timeout",
    "backend",
];

/// The two series of one operation and outcome.
type Series = (Counter, Histogram);

fn outcome_index(kind: ErrorKind) -> usize {
    let name = kind.as_str();
    OUTCOMES[1..]
        .iter()
        .position(|outcome| *outcome == name)
        .map_or(OUTCOMES.len() - 1, |i| i + 1)
}

/// What one instance's operations are recorded under.
pub(crate) struct Telemetry {
    capability: &'static str,
    instance: Arc<str>,
    driver: &'static str,
    enabled: bool,
    /// Registered lazily per operation and outcome; `None` when no recorder was installed when
    /// the instance was built (or telemetry is off for it).
    metrics: Option<Box<[OnceLock<Series>]>>,
    operations: &'static [&'static str],
    /// Bit i: operation i boxed a future already (logged once).
    boxed: AtomicU64,
}

impl Telemetry {
    pub(crate) fn new(
        capability: &'static str,
        instance: &Arc<str>,
        driver: &'static str,
        enabled: bool,
        operations: &'static [&'static str],
    ) -> Self {
        let metrics = (enabled && recorder_installed()).then(|| {
            (0..operations.len() * OUTCOMES.len())
                .map(|_| OnceLock::new())
                .collect()
        });
        Self {
            capability,
            instance: Arc::clone(instance),
            driver,
            enabled,
            metrics,
            operations,
            boxed: AtomicU64::new(0),
        }
    }

    /// Operation `operation`'s future was boxed: counted (when telemetry is on for the
    /// instance), and logged at debug the first time for each operation.
    pub(crate) fn boxed(&self, operation: usize, boxed: Boxed) {
        let [capability, instance, driver, name, _] = LABELS;
        if self.enabled {
            metrics::counter!(
                BOXED_METRIC,
                capability => self.capability,
                instance => metrics::SharedString::from(Arc::clone(&self.instance)),
                driver => self.driver,
                name => self.operations[operation],
            )
            .increment(1);
        }
        let bit = 1u64 << (operation % 64);
        if self.boxed.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
            tracing::debug!(
                target: "sandloom",
                capability = self.capability,
                instance = &*self.instance,
                driver = self.driver,
                operation = self.operations[operation],
                size = boxed.size(),
                align = boxed.align(),
                buffer = boxed.capacity(),
                "the driver's future of this operation does not fit the capability's buffer: \
                 boxed, one allocation per call (counted in {BOXED_METRIC}); logged once",
            );
        }
    }

    pub(crate) fn capability(&self) -> &'static str {
        self.capability
    }

    /// Whether anything would record this instance's operations: a recorder, or a subscriber
    /// interested in target `sandloom` at DEBUG. Costs a load and a comparison when neither.
    #[inline]
    pub(crate) fn listened(&self) -> bool {
        self.enabled
            && (self.metrics.is_some()
                || tracing::enabled!(target: "sandloom", tracing::Level::DEBUG))
    }

    /// Run `future`, the operation `operation` (an index into the gate's operations, named
    /// `otel_name` for spans), inside its span, and record how it ended.
    #[inline]
    pub(crate) async fn observe<V>(
        &self,
        operation: usize,
        otel_name: &'static str,
        future: impl Future<Output = InfraResult<V>>,
    ) -> InfraResult<V> {
        let span = tracing::debug_span!(
            target: "sandloom",
            "sandloom.operation", // sandloom_kernel::telemetry::SPAN_NAME
            otel.name = otel_name,
            sandloom.capability = self.capability,
            sandloom.instance = &*self.instance,
            sandloom.driver = self.driver,
            sandloom.operation = self.operations[operation],
            sandloom.outcome = Empty,
            sandloom.duration_us = Empty,
            otel.status_code = Empty,
            error.type = Empty,
        );
        if span.is_disabled() && self.metrics.is_none() {
            return future.await;
        }
        let started = Instant::now();
        let result = future.instrument(span.clone()).await;
        self.finish(&span, operation, started.elapsed(), &result);
        result
    }

    fn finish<V>(
        &self,
        span: &tracing::Span,
        operation: usize,
        elapsed: Duration,
        result: &InfraResult<V>,
    ) {
        let outcome = match result {
            Ok(_) => 0,
            Err(error) => outcome_index(error.kind()),
        };
        if !span.is_disabled() {
            span.record("sandloom.outcome", OUTCOMES[outcome]);
            span.record(
                "sandloom.duration_us",
                u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            );
            if outcome != 0 {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", OUTCOMES[outcome]);
            }
        }
        if let Some(cells) = &self.metrics {
            let (count, duration) = cells[operation * OUTCOMES.len() + outcome]
                .get_or_init(|| self.register(operation, outcome));
            count.increment(1);
            duration.record(elapsed.as_secs_f64());
        }
    }

    /// The two series of one operation and outcome: registered once, then only updated.
    fn register(&self, operation: usize, outcome: usize) -> Series {
        let [capability, instance, driver, name, outcome_label] = LABELS;
        let labels = vec![
            Label::new(capability, self.capability),
            Label::new(
                instance,
                metrics::SharedString::from(Arc::clone(&self.instance)),
            ),
            Label::new(driver, self.driver),
            Label::new(name, self.operations[operation]),
            Label::new(outcome_label, OUTCOMES[outcome]),
        ];
        (
            metrics::counter!(OPERATIONS_METRIC, labels.clone()),
            metrics::histogram!(DURATION_METRIC, labels),
        )
    }
}

/// Whether a `metrics` recorder is installed. The facade has no such query; what it hands out
/// without one is its no-op recorder, a zero-sized type, while every exporter's recorder holds
/// state. A zero-sized recorder of one's own therefore counts as none (metrics then cost nothing
/// and record nothing): give it a field.
fn recorder_installed() -> bool {
    metrics::with_recorder(|recorder| std::mem::size_of_val(recorder) != 0)
}

#[cfg(test)]
mod tests {
    use super::{OUTCOMES, outcome_index, recorder_installed};
    use sandloom_sdk_infra::ErrorKind;

    #[test]
    fn every_error_kind_has_its_own_outcome() {
        for kind in [
            ErrorKind::Unsupported,
            ErrorKind::NotFound,
            ErrorKind::InvalidInput,
            ErrorKind::Conflict,
            ErrorKind::Stopped,
            ErrorKind::Unavailable,
            ErrorKind::Timeout,
            ErrorKind::Backend,
        ] {
            assert_eq!(OUTCOMES[outcome_index(kind)], kind.as_str());
        }
    }

    #[test]
    fn the_no_op_recorder_is_not_a_recorder_and_a_real_one_is() {
        assert!(!recorder_installed());
        let recorder = metrics_util::debugging::DebuggingRecorder::new();
        assert!(metrics::with_local_recorder(&recorder, recorder_installed));
    }
}
