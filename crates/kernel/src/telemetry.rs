//! What every operation leaves behind, whatever its capability and driver: the names of the
//! `tracing` span and the `metrics` series the gate around each driver records. Install a
//! subscriber and a recorder in the application (as early as possible in `main`, before
//! `Kernel::start`); with neither installed, nothing is recorded and nothing is paid.
//!
//! - Span `sandloom.operation` (target `sandloom`, level DEBUG), fields: `otel.name`
//!   (`cache.get`), `sandloom.capability`, `sandloom.instance`, `sandloom.driver`,
//!   `sandloom.operation`, `sandloom.outcome` (`ok` or the `ErrorKind`, e.g. `not_found`),
//!   `sandloom.duration_us`, and on failure `otel.status_code = "ERROR"` and `error.type`.
//! - Counter [`OPERATIONS_METRIC`] and histogram [`DURATION_METRIC`] (seconds), labelled
//!   `capability`, `instance`, `driver`, `operation`, `outcome`.
//!
//! Keys, values, payloads and options are never recorded. `telemetry = false` in an instance's
//! table turns both off for it.
//!
//! ```
//! use sandloom_kernel::telemetry::{DURATION_METRIC, OPERATIONS_METRIC, SPAN_NAME};
//! assert_eq!(SPAN_NAME, "sandloom.operation");
//! // With the Prometheus exporter: `sandloom_operations`, `sandloom_operation_duration`.
//! assert_eq!(OPERATIONS_METRIC, "sandloom.operations");
//! assert_eq!(DURATION_METRIC, "sandloom.operation.duration");
//! ```

/// The name of the span of one operation.
pub const SPAN_NAME: &str = "sandloom.operation";
/// The counter of operations.
pub const OPERATIONS_METRIC: &str = "sandloom.operations";
/// The histogram of operation durations, in seconds.
pub const DURATION_METRIC: &str = "sandloom.operation.duration";
/// The labels of both series, in order.
pub const LABELS: [&str; 5] = ["capability", "instance", "driver", "operation", "outcome"];
