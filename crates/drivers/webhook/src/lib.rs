//! Sandloom driver `notifier.webhook`: a [`Notifier`](sandloom_driverkit::notifier::Notifier)
//! that POSTs each message as JSON to one URL, signed with HMAC-SHA256, on `reqwest`.
//!
//! Link it with `sandloom::link_drivers!(sandloom_embedded, sandloom_driver_webhook)` and
//! select it in `INFRA`:
//!
//! ```toml
//! [notifier.alerts]
//! driver = "webhook"
//! url = "https://hooks.example.com/sandloom"
//! # secret: set SANDLOOM__NOTIFIER__ALERTS__SECRET rather than writing it here
//! ```
//!
//! Options: see [`WebhookOptions`]. No optional feature (`send_batch` answers `Unsupported`).
//!
//! # The request
//!
//! One endpoint receives every message; the recipient travels in the body, and the receiver
//! decides what it addresses (a channel, a user, a phone). Each [`send`] is one
//! `POST <url>` with `Content-Type: application/json` and this body (`subject` is `null` when
//! absent; `metadata` is an object of strings, keys sorted):
//!
//! ```json
//! {
//!   "id": "5d6c0b8e-2f0e-4d55-9a7e-6d1f3a2c9b10",
//!   "recipient": "#ops",
//!   "subject": "release",
//!   "body": "deployed 1.4.2",
//!   "metadata": { "env": "prod" }
//! }
//! ```
//!
//! `id` is a random UUID, new for every message; it is also the receipt id `send` answers
//! (the response body is not read for one, so receipt ids are always the driver's own).
//!
//! | header | value |
//! |---|---|
//! | [`x-sandloom-message-id`](MESSAGE_ID_HEADER), [`idempotency-key`](IDEMPOTENCY_KEY_HEADER) | the `id`; the same on every retry of the message |
//! | [`x-sandloom-timestamp`](TIMESTAMP_HEADER) | the attempt's time, whole seconds since the Unix epoch |
//! | [`x-sandloom-signature`](SIGNATURE_HEADER) | with `secret` only: `sha256=` + lowercase hex of HMAC-SHA256(`secret`, `<timestamp>.<body>`) |
//! | `authorization` | `Basic …` when `url` has user-info |
//! | `user-agent` | `sandloom-driver-webhook/<version>` (the `headers` option may replace it) |
//!
//! Any `headers` from the options are added. Redirects are not followed.
//!
//! # Verifying a request (receivers)
//!
//! 1. Read the raw body bytes; do not parse and re-serialize before checking.
//! 2. Check [`verify_signature`]`(secret, timestamp_header, body, signature_header)`: the
//!    HMAC-SHA256 of the timestamp, a `.` and the body, compared in constant time.
//! 3. Refuse stale timestamps ([`timestamp_is_fresh`], e.g. five minutes): a captured request
//!    cannot be replayed later, since changing the timestamp breaks the signature.
//! 4. Deliveries are at least once: remember recent `x-sandloom-message-id` values and answer
//!    2xx to a repeat without acting on it again.
//!
//! ```
//! use std::time::Duration;
//! use sandloom_driver_webhook::{signature, timestamp_is_fresh, verify_signature};
//!
//! /// A receiver's check; `headers` looks a header up by name.
//! fn accept(secret: &str, headers: impl Fn(&str) -> Option<String>, body: &[u8]) -> bool {
//!     let (Some(timestamp), Some(signature)) =
//!         (headers("x-sandloom-timestamp"), headers("x-sandloom-signature"))
//!     else {
//!         return false;
//!     };
//!     verify_signature(secret, &timestamp, body, &signature)
//!         && timestamp_is_fresh(&timestamp, Duration::from_secs(300))
//! }
//!
//! // What the driver would send now:
//! let body = br##"{"id":"1","recipient":"#ops","subject":null,"body":"hi","metadata":{}}"##;
//! let now = std::time::SystemTime::now()
//!     .duration_since(std::time::UNIX_EPOCH)
//!     .unwrap()
//!     .as_secs()
//!     .to_string();
//! let sig = signature("hunter2", &now, body);
//! let headers = |name: &str| match name {
//!     "x-sandloom-timestamp" => Some(now.clone()),
//!     "x-sandloom-signature" => Some(sig.clone()),
//!     _ => None,
//! };
//! assert!(accept("hunter2", &headers, body));
//! assert!(!accept("another secret", &headers, body));
//! ```
//!
//! # Outcomes, retries and errors
//!
//! A 2xx answer is a delivery. `timeout_ms` bounds each attempt; after a failure that may be
//! transient the driver waits `retry_base_delay_ms × 2^(n-1)` (capped at
//! `retry_max_delay_ms`, the upper half random) and tries again, at most `max_retries` times.
//! A `Retry-After: <seconds>` on 429/5xx replaces the backoff; one longer than
//! `retry_max_delay_ms` ends the retries. The worst case of one `send` is therefore about
//! `(max_retries + 1) × timeout_ms` plus the delays. `stop` ends sends in flight with
//! `Stopped`.
//!
//! | outcome | retried | [`ErrorKind`](sandloom_driverkit::sdk::ErrorKind) |
//! |---|---|---|
//! | empty body, blank recipient (checked before sending) | — | `InvalidInput` |
//! | connection refused or reset, 429, 502, 503 | yes | `Unavailable` |
//! | no answer within `timeout_ms`, 504 | yes | `Timeout` |
//! | other 5xx | yes | `Backend` |
//! | 400, 422, 413 (the receiver refused the message) | no | `InvalidInput` |
//! | 401, 403 (check `secret`, credentials, `headers`) | no | `Backend` |
//! | 404, 410 (nothing at `url`: a configuration error, not a missing item) | no | `Backend` |
//! | 408 | no | `Timeout` |
//! | 409 | no | `Conflict` |
//! | 3xx and other statuses | no | `Backend` |
//! | after `stop` | — | `Stopped` |
//!
//! Errors and logs name the endpoint as `scheme://***@host:port/***`: user-info, path and query
//! of a webhook URL often are its credentials.
//!
//! # Lifecycle and health
//!
//! `from_options` checks the options and does no I/O; `start` builds the HTTP client (loading
//! the system's CA certificates for https) and contacts the endpoint only with
//! `verify_on_start = true`, as a TCP connection: a webhook has no standard health URL and a
//! probe POST would reach the receiver as a message. `health` makes the same TCP check
//! (unhealthy when it fails) and reports `Degraded` while the latest deliveries failed on the
//! endpoint's side. `stop` drops the client and its connections.
//!
//! [`send`]: sandloom_driverkit::notifier::Notifier::send

mod address;
mod errors;
mod options;
mod payload;
mod provider;
mod retry;
mod signature;

pub use options::WebhookOptions;
pub use provider::WebhookNotifier;
pub use signature::{
    IDEMPOTENCY_KEY_HEADER, MESSAGE_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature,
    timestamp_is_fresh, verify_signature,
};

sandloom_driverkit::register_driver!(notifier, "webhook", WebhookNotifier);
