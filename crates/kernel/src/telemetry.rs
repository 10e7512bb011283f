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
//! Rotated secrets (see `Running::secret_rotations`): counter [`ROTATIONS_METRIC`], labelled
//! `store`, one per rotation of a secret the configuration uses; counter
//! [`ROTATION_ERRORS_METRIC`], labelled `store` and `outcome` (the `ErrorKind`), one per failed
//! call of the rotation watcher to a store. Both are logged under target `sandloom::secrets`.
//!
//! ```
//! use sandloom_kernel::telemetry::{DURATION_METRIC, OPERATIONS_METRIC, SPAN_NAME};
//! assert_eq!(SPAN_NAME, "sandloom.operation");
//! // With the Prometheus exporter: `sandloom_operations`, `sandloom_operation_duration`.
//! assert_eq!(OPERATIONS_METRIC, "sandloom.operations");
//! assert_eq!(DURATION_METRIC, "sandloom.operation.duration");
//! ```
//!
//! ```
//! use sandloom_kernel::telemetry::{ROTATION_ERRORS_METRIC, ROTATIONS_METRIC};
//! // Prometheus: `sandloom_secret_rotations`, `sandloom_secret_rotation_errors`.
//! assert_eq!(ROTATIONS_METRIC, "sandloom.secret.rotations");
//! assert_eq!(ROTATION_ERRORS_METRIC, "sandloom.secret.rotation.errors");
//! ```

/// The name of the span of one operation.
pub const SPAN_NAME: &str = "sandloom.operation";
/// The counter of operations.
pub const OPERATIONS_METRIC: &str = "sandloom.operations";
/// The histogram of operation durations, in seconds.
pub const DURATION_METRIC: &str = "sandloom.operation.duration";
/// The counter of operations whose future did not fit their `OpFuture` and were boxed (one
/// allocation per call), labelled `capability`, `instance`, `driver` and `operation` (the labels
/// of [`OPERATIONS_METRIC`] but `outcome`: it is counted when the call begins).
pub const BOXED_METRIC: &str = "sandloom.operation.boxed";
/// The labels of both series, in order.
pub const LABELS: [&str; 5] = ["capability", "instance", "driver", "operation", "outcome"];
/// The counter of rotated secrets, labelled `store`.
pub const ROTATIONS_METRIC: &str = "sandloom.secret.rotations";
/// The counter of the rotation watcher's failed calls to a store, labelled `store` and
/// `outcome`.
pub const ROTATION_ERRORS_METRIC: &str = "sandloom.secret.rotation.errors";
