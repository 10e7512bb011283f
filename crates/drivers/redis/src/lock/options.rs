//! The options of `lock.redis`, their defaults and their checks.

use std::path::PathBuf;

use redis::ConnectionInfo;
use sandloom_driverkit::{DriverError, SecretUrl};
use serde::Deserialize;

use crate::connection::Endpoint;

/// Options of `lock.redis`.
///
/// ```toml
/// [lock.default]
/// driver = "redis"
/// url = "rediss://:secret@locks.internal:6380/3"  # default redis://127.0.0.1:6379
/// prefix = "shop"                 # keys `shop:lock:{name}`; default `sandloom`
/// connect_timeout_ms = 2000       # default 2000
/// response_timeout_ms = 1000      # default 1000
/// tls_ca_file = "/etc/ssl/private-ca.pem"  # only with rediss://; default: web PKI roots
/// ```
///
/// Keep the password out of the file: `SANDLOOM__LOCK__DEFAULT__URL` overrides `url`. The URL's
/// user-info never appears in `Debug`, errors or logs:
///
/// ```
/// use sandloom_driver_redis::RedisLockOptions;
///
/// let options = RedisLockOptions {
///     url: "redis://:hunter2@127.0.0.1:6379/0".into(),
///     ..RedisLockOptions::default()
/// };
/// let shown = format!("{options:?}");
/// assert!(shown.contains("redis://***@127.0.0.1:6379/0"));
/// assert!(!shown.contains("hunter2"));
/// assert_eq!(RedisLockOptions::default().prefix, "sandloom");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedisLockOptions {
    /// The server: `redis://[user][:password@]host[:port][/db]`, `rediss://…` for TLS, or
    /// `redis+unix:///path/to/socket`. User-info is a secret: it is redacted wherever the
    /// address is shown. The `#insecure` fragment is refused: trust a private CA with
    /// `tls_ca_file` instead.
    pub url: SecretUrl,
    /// The namespace of this instance's keys: the lease of lock `name` is `{prefix}:lock:{name}`,
    /// its fence counter `{prefix}:fence:{name}`, its release channel
    /// `{prefix}:released:{name}`. Not empty. Default `sandloom`.
    pub prefix: String,
    /// How long `start` may take to connect and get a `PONG`, and each (re)connection attempt
    /// later, `acquire_wait`'s notification connection included. At least 1. Default 2000.
    pub connect_timeout_ms: u64,
    /// How long a command may wait for its answer before it fails with `Timeout`. At least 1.
    /// Default 1000.
    pub response_timeout_ms: u64,
    /// PEM file of the certificate authorities trusted for a `rediss://` server. Read by
    /// `start`. Only with a `rediss://` URL.
    pub tls_ca_file: Option<PathBuf>,
}

impl Default for RedisLockOptions {
    fn default() -> Self {
        Self {
            url: "redis://127.0.0.1:6379".into(),
            prefix: "sandloom".to_owned(),
            connect_timeout_ms: 2000,
            response_timeout_ms: 1000,
            tls_ca_file: None,
        }
    }
}

impl RedisLockOptions {
    /// Every check of the options; the connection info of `url` when they pass.
    pub(crate) fn check(&self) -> Result<ConnectionInfo, DriverError> {
        if self.prefix.is_empty() {
            return Err(DriverError::new("`prefix` must not be empty"));
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

    #[test]
    fn defaults_pass_and_bad_values_are_refused() {
        assert!(RedisLockOptions::default().check().is_ok());
        let empty = RedisLockOptions {
            prefix: String::new(),
            ..RedisLockOptions::default()
        };
        assert!(empty.check().unwrap_err().to_string().contains("`prefix`"));
        let slow = RedisLockOptions {
            response_timeout_ms: 0,
            ..RedisLockOptions::default()
        };
        let message = slow.check().unwrap_err().to_string();
        assert!(message.contains("`response_timeout_ms`"), "{message}");
    }

    #[test]
    fn unknown_keys_are_refused() {
        use serde::de::value::{Error, MapDeserializer};
        let entries = [("url", "redis://x"), ("default_ttl_ms", "5")];
        let deserializer = MapDeserializer::<_, Error>::new(entries.into_iter());
        let err = RedisLockOptions::deserialize(deserializer).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `default_ttl_ms`"),
            "{err}"
        );
    }
}
