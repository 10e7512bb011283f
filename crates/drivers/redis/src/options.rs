//! The options of `cache.redis`, their defaults and their checks.

use std::path::PathBuf;

use redis::ConnectionInfo;
use sandloom_driverkit::{DriverError, SecretUrl};
use serde::Deserialize;

use crate::connection::Endpoint;

/// The server `url` when none is configured.
const DEFAULT_URL: &str = "redis://127.0.0.1:6379";

/// Options of `cache.redis`.
///
/// ```toml
/// [cache.default]
/// driver = "redis"
/// url = "rediss://:secret@cache.internal:6380/2"  # default redis://127.0.0.1:6379
/// prefix = "shop"                 # keys stored as `shop:{key}`; default none
/// connect_timeout_ms = 2000       # default 2000
/// response_timeout_ms = 1000      # default 1000
/// default_ttl_ms = 3600000        # expiry of `set`, `set_many`, new counters; default none
/// tls_ca_file = "/etc/ssl/private-ca.pem"  # only with rediss://; default: web PKI roots
/// ```
///
/// Keep the password out of the file: `SANDLOOM__CACHE__DEFAULT__URL` overrides `url`. The URL's
/// user-info never appears in `Debug`, errors or logs:
///
/// ```
/// use sandloom_driver_redis::RedisCacheOptions;
///
/// let options = RedisCacheOptions {
///     url: "redis://:hunter2@127.0.0.1:6379/0".into(),
///     prefix: Some("shop".to_owned()),
///     ..RedisCacheOptions::default()
/// };
/// let shown = format!("{options:?}");
/// assert!(shown.contains("redis://***@127.0.0.1:6379/0"));
/// assert!(!shown.contains("hunter2"));
/// assert_eq!(RedisCacheOptions::default().url.expose(), "redis://127.0.0.1:6379");
/// assert_eq!(RedisCacheOptions::default().connect_timeout_ms, 2000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedisCacheOptions {
    /// The server: `redis://[user][:password@]host[:port][/db]`, `rediss://…` for TLS, or
    /// `redis+unix:///path/to/socket`. User-info is a secret: it is redacted wherever the
    /// address is shown. The `#insecure` fragment (no certificate check) is refused: trust a
    /// private CA with `tls_ca_file` instead.
    pub url: SecretUrl,
    /// A namespace for this instance's keys: key `k` is stored as `{prefix}:k`, so several
    /// applications or instances can share one database. `None` (the default) stores keys as
    /// given. Must not be empty when set.
    pub prefix: Option<String>,
    /// How long `start` may take to connect and get a `PONG`, and how long each (re)connection
    /// attempt may take later. At least 1. Default 2000.
    pub connect_timeout_ms: u64,
    /// How long a command may wait for its answer before it fails with `Timeout`. At least 1.
    /// Default 1000.
    pub response_timeout_ms: u64,
    /// When set, `set`, `set_many` and the `increment` that creates a counter store the entry
    /// with this expiry (milliseconds). At least 1 when set. Default: no expiry.
    pub default_ttl_ms: Option<u64>,
    /// PEM file of the certificate authorities trusted for a `rediss://` server, instead of the
    /// built-in web PKI roots. Read by `start`. Only with a `rediss://` URL.
    pub tls_ca_file: Option<PathBuf>,
}

impl Default for RedisCacheOptions {
    fn default() -> Self {
        Self {
            url: DEFAULT_URL.into(),
            prefix: None,
            connect_timeout_ms: 2000,
            response_timeout_ms: 1000,
            default_ttl_ms: None,
            tls_ca_file: None,
        }
    }
}

impl RedisCacheOptions {
    /// Every check of the options; the connection info of `url` when they pass.
    pub(crate) fn check(&self) -> Result<ConnectionInfo, DriverError> {
        if self.default_ttl_ms == Some(0) {
            return Err(DriverError::new(
                "`default_ttl_ms` must be at least 1 when set",
            ));
        }
        if self.prefix.as_deref() == Some("") {
            return Err(DriverError::new(
                "`prefix` must not be empty when set (leave it out to store keys as given)",
            ));
        }
        self.endpoint().check()
    }

    /// The server options, shared with the crate's other drivers.
    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint {
            url: self.url.clone(),
            connect_timeout_ms: self.connect_timeout_ms,
            response_timeout_ms: self.response_timeout_ms,
            tls_ca_file: self.tls_ca_file.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(options: &RedisCacheOptions) -> String {
        match options.check() {
            Ok(_) => panic!("{options:?} passed its checks"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn defaults_pass() {
        let info = RedisCacheOptions::default().check().unwrap();
        assert_eq!(info.addr().to_string(), "127.0.0.1:6379");
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        let base = RedisCacheOptions::default();
        let cases = [
            (
                RedisCacheOptions {
                    connect_timeout_ms: 0,
                    ..base.clone()
                },
                "`connect_timeout_ms` must be at least 1",
            ),
            (
                RedisCacheOptions {
                    response_timeout_ms: 0,
                    ..base.clone()
                },
                "`response_timeout_ms` must be at least 1",
            ),
            (
                RedisCacheOptions {
                    default_ttl_ms: Some(0),
                    ..base.clone()
                },
                "`default_ttl_ms` must be at least 1",
            ),
            (
                RedisCacheOptions {
                    prefix: Some(String::new()),
                    ..base.clone()
                },
                "`prefix` must not be empty",
            ),
            (
                RedisCacheOptions {
                    url: "http://127.0.0.1".into(),
                    ..base.clone()
                },
                "`url` is not a Redis URL",
            ),
            (
                RedisCacheOptions {
                    url: "rediss://127.0.0.1/#insecure".into(),
                    ..base.clone()
                },
                "`#insecure` fragment",
            ),
            (
                RedisCacheOptions {
                    tls_ca_file: Some("ca.pem".into()),
                    ..base.clone()
                },
                "`tls_ca_file` needs a `rediss://` url",
            ),
        ];
        for (options, expected) in cases {
            let message = refused(&options);
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn a_refused_url_never_shows_its_password() {
        let options = RedisCacheOptions {
            url: "redis://:hunter2@127.0.0.1/notadb".into(),
            ..RedisCacheOptions::default()
        };
        assert!(!refused(&options).contains("hunter2"));
        let options = RedisCacheOptions {
            url: "redis://:hunter2@127.0.0.1".into(),
            tls_ca_file: Some("ca.pem".into()),
            ..RedisCacheOptions::default()
        };
        let message = refused(&options);
        assert!(message.contains("redis://***@127.0.0.1"), "{message}");
        assert!(!message.contains("hunter2"));
    }

    #[test]
    fn unknown_keys_are_refused() {
        use serde::de::value::{Error, MapDeserializer};
        // Any self-describing format behaves the same; this one needs no format crate.
        let entries = [("url", "redis://x"), ("prefx", "a")];
        let deserializer = MapDeserializer::<_, Error>::new(entries.into_iter());
        let err = RedisCacheOptions::deserialize(deserializer).unwrap_err();
        assert!(err.to_string().contains("unknown field `prefx`"), "{err}");
    }
}
