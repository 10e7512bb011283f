//! The options of `notifier.webhook` and their checks.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use sandloom_driverkit::{DriverError, Secret, SecretUrl};
use serde::Deserialize;

use crate::address::Endpoint;
use crate::retry::RetryPolicy;
use crate::signature::{IDEMPOTENCY_KEY_HEADER, Signer};

/// The longest `timeout_ms`, `connect_timeout_ms` and retry delay accepted: ten minutes.
const MAX_MS: u64 = 600_000;
/// The most retries accepted: a notifier that retries for ever hides an outage.
const MAX_RETRIES: u32 = 10;

/// Headers the driver sets itself; `headers` may not replace them.
const RESERVED_HEADERS: &[&str] = &[
    "content-type",
    "content-length",
    "transfer-encoding",
    "connection",
    "host",
    IDEMPOTENCY_KEY_HEADER,
];

/// Options of `notifier.webhook`. Only `url` is required.
///
/// ```toml
/// [notifier.alerts]
/// driver = "webhook"
/// url = "https://hooks.example.com/sandloom"   # user-info, if any, is sent as Basic auth
/// secret = "…"                                 # HMAC-SHA256 key; better set through
///                                              # SANDLOOM__NOTIFIER__ALERTS__SECRET
/// timeout_ms = 10000
/// connect_timeout_ms = 3000
/// max_retries = 3
/// retry_base_delay_ms = 200
/// retry_max_delay_ms = 5000
/// verify_on_start = false
/// headers = { "X-Team" = "ops" }
/// ```
///
/// `Debug` redacts the secret, the header values and the URL's user-info, path and query:
///
/// ```
/// use sandloom_driver_webhook::WebhookOptions;
///
/// let options = WebhookOptions {
///     secret: Some("hunter2".into()),
///     ..WebhookOptions::new("https://bot:hunter2@hooks.example.com/T0/xyz")
/// };
/// assert_eq!(options.timeout_ms, 10_000);
/// assert_eq!(options.max_retries, 3);
/// let debug = format!("{options:?}");
/// assert!(debug.contains("https://***@hooks.example.com/***"));
/// assert!(!debug.contains("hunter2") && !debug.contains("xyz"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookOptions {
    /// The `http://` or `https://` URL every message is posted to. User-info in it
    /// (`https://user:password@host/…`) is removed from the URL and sent as Basic auth; it, the
    /// path and the query are secret: errors and logs show `https://***@host:443/***`.
    pub url: SecretUrl,
    /// The HMAC-SHA256 key that signs every request ([`SIGNATURE_HEADER`](crate::SIGNATURE_HEADER));
    /// without it requests are sent unsigned. Must not be empty when set. Secret.
    #[serde(default)]
    pub secret: Option<Secret<String>>,
    /// Time budget of one attempt, from connecting to the end of the response, in
    /// milliseconds (default 10 000; 1 to 600 000).
    #[serde(default = "defaults::timeout_ms")]
    pub timeout_ms: u64,
    /// Time budget of opening a connection, in milliseconds (default 3 000; 1 to 600 000). Also
    /// bounds the reachability check of `health` and of `start` with `verify_on_start`.
    #[serde(default = "defaults::connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Attempts after the first one when the endpoint cannot be reached, times out or answers
    /// 429 or 5xx (default 3; at most 10). Other 4xx answers are never retried.
    #[serde(default = "defaults::max_retries")]
    pub max_retries: u32,
    /// Delay before the first retry, in milliseconds (default 200; at most
    /// `retry_max_delay_ms`); doubled for each later retry, with jitter.
    #[serde(default = "defaults::retry_base_delay_ms")]
    pub retry_base_delay_ms: u64,
    /// Longest delay between two attempts, in milliseconds (default 5 000; at most 600 000).
    /// A `Retry-After` longer than this ends the retries at once.
    #[serde(default = "defaults::retry_max_delay_ms")]
    pub retry_max_delay_ms: u64,
    /// Extra headers sent with every request (an API key, a routing tag). Names must be valid
    /// and must not be ones the driver sets (`Content-Type`, `Idempotency-Key`,
    /// `X-Sandloom-*`, …). Values are secret: `Debug` shows names only.
    #[serde(default)]
    pub headers: BTreeMap<String, Secret<String>>,
    /// Whether `start` opens a TCP connection to the endpoint's host and port (within
    /// `connect_timeout_ms`) and fails when it cannot (default `false`: a receiver that is down
    /// at startup does not stop the application; sends then fail typed and `health` reports it).
    #[serde(default)]
    pub verify_on_start: bool,
}

mod defaults {
    pub(super) fn timeout_ms() -> u64 {
        10_000
    }
    pub(super) fn connect_timeout_ms() -> u64 {
        3_000
    }
    pub(super) fn max_retries() -> u32 {
        3
    }
    pub(super) fn retry_base_delay_ms() -> u64 {
        200
    }
    pub(super) fn retry_max_delay_ms() -> u64 {
        5_000
    }
}

impl WebhookOptions {
    /// Options for `url` with every other option at its default.
    ///
    /// ```
    /// let options = sandloom_driver_webhook::WebhookOptions::new("http://127.0.0.1:8080/hook");
    /// assert_eq!(options.connect_timeout_ms, 3_000);
    /// assert_eq!((options.retry_base_delay_ms, options.retry_max_delay_ms), (200, 5_000));
    /// assert!(options.secret.is_none() && options.headers.is_empty() && !options.verify_on_start);
    /// ```
    pub fn new(url: impl Into<SecretUrl>) -> Self {
        Self {
            url: url.into(),
            secret: None,
            timeout_ms: defaults::timeout_ms(),
            connect_timeout_ms: defaults::connect_timeout_ms(),
            max_retries: defaults::max_retries(),
            retry_base_delay_ms: defaults::retry_base_delay_ms(),
            retry_max_delay_ms: defaults::retry_max_delay_ms(),
            headers: BTreeMap::new(),
            verify_on_start: false,
        }
    }

    /// Check every option and prepare what the driver keeps. Messages name options, never
    /// their secret values.
    pub(crate) fn check(&self) -> Result<Checked, DriverError> {
        let endpoint = Endpoint::parse(self.url.expose()).map_err(DriverError::new)?;
        let signer = match &self.secret {
            Some(secret) if secret.expose().is_empty() => {
                return Err(DriverError::new(
                    "`secret` must not be empty: leave it out to send unsigned requests",
                ));
            }
            Some(secret) => Some(Signer::new(secret.expose().as_bytes())),
            None => None,
        };
        let timeout = millis("timeout_ms", self.timeout_ms, 1)?;
        let connect_timeout = millis("connect_timeout_ms", self.connect_timeout_ms, 1)?;
        if self.max_retries > MAX_RETRIES {
            return Err(DriverError::new(format!(
                "`max_retries` must be at most {MAX_RETRIES}, not {}",
                self.max_retries
            )));
        }
        let max_delay = millis("retry_max_delay_ms", self.retry_max_delay_ms, 0)?;
        let base_delay = millis("retry_base_delay_ms", self.retry_base_delay_ms, 0)?;
        if base_delay > max_delay {
            return Err(DriverError::new(format!(
                "`retry_base_delay_ms` ({}) must not exceed `retry_max_delay_ms` ({})",
                self.retry_base_delay_ms, self.retry_max_delay_ms
            )));
        }
        let headers = self.header_map(&endpoint)?;
        Ok(Checked {
            endpoint,
            signer,
            headers,
            timeout,
            connect_timeout,
            retry: RetryPolicy {
                max_retries: self.max_retries,
                base_delay,
                max_delay,
            },
            verify_on_start: self.verify_on_start,
        })
    }

    fn header_map(&self, endpoint: &Endpoint) -> Result<HeaderMap, DriverError> {
        let mut map = HeaderMap::with_capacity(self.headers.len());
        for (name, value) in &self.headers {
            let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                DriverError::new(format!(
                    "`headers` has the invalid header name {name:?}: use letters, digits and `-`"
                ))
            })?;
            let lower = header.as_str();
            if RESERVED_HEADERS.contains(&lower) || lower.starts_with("x-sandloom-") {
                return Err(DriverError::new(format!(
                    "`headers` must not set `{name}`: the driver sets it on every request"
                )));
            }
            if lower == "authorization" && endpoint.credentials.is_some() {
                return Err(DriverError::new(
                    "`headers` sets `Authorization` and `url` has user-info: keep one of them",
                ));
            }
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
                DriverError::new(format!(
                    "the value of header `{name}` in `headers` is not a valid HTTP header value \
                     (control characters or non-ASCII text)"
                ))
            })?;
            // Keeps the value out of the HTTP client's own `Debug` output too.
            value.set_sensitive(true);
            map.insert(header, value);
        }
        Ok(map)
    }
}

fn millis(option: &str, value: u64, min: u64) -> Result<Duration, DriverError> {
    if !(min..=MAX_MS).contains(&value) {
        return Err(DriverError::new(format!(
            "`{option}` must be between {min} and {MAX_MS} milliseconds, not {value}"
        )));
    }
    Ok(Duration::from_millis(value))
}

/// Options after their checks: what the driver is built from.
pub(crate) struct Checked {
    pub(crate) endpoint: Endpoint,
    pub(crate) signer: Option<Signer>,
    pub(crate) headers: HeaderMap,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) verify_on_start: bool,
}

#[cfg(test)]
mod tests {
    use serde::de::value::{Error as DeError, MapDeserializer};

    use super::*;

    fn parse(pairs: &[(&'static str, &'static str)]) -> Result<WebhookOptions, DeError> {
        WebhookOptions::deserialize(MapDeserializer::<_, DeError>::new(pairs.iter().copied()))
    }

    #[test]
    fn url_is_required_and_the_rest_defaults() {
        let options = parse(&[("url", "http://127.0.0.1:1/h")]).unwrap();
        assert_eq!(options, WebhookOptions::new("http://127.0.0.1:1/h"));
        let missing = parse(&[]).unwrap_err();
        assert!(
            missing.to_string().contains("missing field `url`"),
            "{missing}"
        );
        let unknown = parse(&[("url", "http://x"), ("timeout", "1")]).unwrap_err();
        assert!(
            unknown.to_string().contains("unknown field `timeout`"),
            "{unknown}"
        );
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        let base = WebhookOptions::new("http://127.0.0.1:1/h");
        let cases = [
            (
                WebhookOptions {
                    secret: Some("".into()),
                    ..base.clone()
                },
                "`secret` must not be empty",
            ),
            (
                WebhookOptions {
                    timeout_ms: 0,
                    ..base.clone()
                },
                "`timeout_ms` must be between 1 and 600000",
            ),
            (
                WebhookOptions {
                    connect_timeout_ms: 600_001,
                    ..base.clone()
                },
                "`connect_timeout_ms`",
            ),
            (
                WebhookOptions {
                    max_retries: 11,
                    ..base.clone()
                },
                "`max_retries` must be at most 10",
            ),
            (
                WebhookOptions {
                    retry_base_delay_ms: 10,
                    retry_max_delay_ms: 5,
                    ..base.clone()
                },
                "must not exceed `retry_max_delay_ms`",
            ),
            (
                WebhookOptions {
                    url: "ftp://example.com".into(),
                    ..base.clone()
                },
                "http:// or https://",
            ),
        ];
        for (options, expected) in cases {
            let err = options.check().err().expect("refused");
            assert!(err.message().contains(expected), "{err}");
        }
    }

    #[test]
    fn headers_are_checked_and_their_values_never_echoed() {
        let with = |name: &str, value: &str| WebhookOptions {
            headers: BTreeMap::from([(name.to_owned(), value.into())]),
            ..WebhookOptions::new("http://u:p@127.0.0.1:1/h")
        };
        for (name, value, expected) in [
            ("bad name", "v", "invalid header name"),
            ("Content-Type", "text/plain", "must not set `Content-Type`"),
            ("X-Sandloom-Signature", "x", "must not set"),
            ("Idempotency-Key", "x", "must not set"),
            ("Authorization", "Bearer hunter2", "keep one of them"),
            ("X-Key", "hunter2\n", "not a valid HTTP header value"),
        ] {
            let err = with(name, value).check().err().expect("refused");
            assert!(err.message().contains(expected), "{name}: {err}");
            assert!(!err.message().contains("hunter2"), "{err}");
        }
        let checked = WebhookOptions {
            headers: BTreeMap::from([("X-Api-Key".to_owned(), "hunter2".into())]),
            ..WebhookOptions::new("http://127.0.0.1:1/h")
        }
        .check()
        .unwrap();
        assert!(checked.headers["x-api-key"].is_sensitive());
        assert!(!format!("{:?}", checked.headers).contains("hunter2"));
    }
}
