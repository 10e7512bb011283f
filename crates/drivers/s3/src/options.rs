//! The options of `objectstore.s3`, their defaults and their checks.

use std::time::Duration;

use sandloom_driverkit::objectstore::validate_key;
use sandloom_driverkit::{DriverError, Secret, SecretUrl};

use crate::address::Endpoint;

/// The region used when none is given.
pub(crate) const DEFAULT_REGION: &str = "us-east-1";

/// Options of `objectstore.s3`: where the bucket is, how to sign, how long to wait.
///
/// Only `bucket` is required. Without `endpoint` the driver talks to AWS S3 in `region`; with
/// one it talks to any S3-compatible server (`MinIO`, Ceph, R2, moto, …).
///
/// ```
/// use sandloom_driver_s3::S3ObjectStoreOptions;
///
/// let options = S3ObjectStoreOptions {
///     endpoint: Some("http://127.0.0.1:9000".into()),
///     bucket: "uploads".into(),
///     access_key_id: Some("minio".into()),
///     secret_access_key: Some("minio-secret".into()),
///     prefix: Some("tenant-a".into()),
///     ..Default::default()
/// };
/// assert_eq!(options.region, "us-east-1");
/// assert!(!format!("{options:?}").contains("minio-secret")); // secrets are redacted
/// ```
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct S3ObjectStoreOptions {
    /// Base URL of an S3-compatible server (`https://minio.internal:9000`), without the bucket
    /// and without user-info. Default: AWS S3 of `region`.
    pub endpoint: Option<SecretUrl>,
    /// The region requests are signed for. Default `us-east-1`.
    pub region: String,
    /// The bucket holding the objects. Required; it must exist.
    pub bucket: String,
    /// Access key id. With `secret_access_key` it signs requests; without both, requests are
    /// sent unsigned (anonymous: public buckets or servers without authentication). No ambient
    /// credentials (environment, instance metadata) are used.
    pub access_key_id: Option<String>,
    /// Secret access key (a secret: redacted in `Debug` and never written in errors or logs).
    pub secret_access_key: Option<Secret<String>>,
    /// Session token of temporary credentials (a secret, like `secret_access_key`).
    pub session_token: Option<Secret<String>>,
    /// `true`: path-style requests (`{endpoint}/{bucket}/{key}`); `false`: virtual-hosted
    /// requests (`{bucket}.{endpoint host}/{key}`). Default: path-style with an `endpoint`
    /// (what S3-compatible servers expect), virtual-hosted on AWS.
    pub path_style: Option<bool>,
    /// Allow plain `http://`. Default: `true` exactly when `endpoint` starts with `http://`;
    /// setting it to `false` with such an endpoint is refused.
    pub allow_http: Option<bool>,
    /// A key namespace inside the bucket (`tenant-a` or `apps/orders`): every key is stored as
    /// `{prefix}/{key}` and listings see only this namespace. Default: the whole bucket.
    pub prefix: Option<String>,
    /// Declare the feature `conditional_put`: `put_if` sends `If-None-Match: *` or `If-Match`.
    /// Turn it on only for a server that honours both on `PUT` atomically (AWS S3 does): one
    /// that ignores them overwrites silently, and one that checks then writes (moto does) lets
    /// two racing creates both succeed. Default `false`: `put_if` answers `Unsupported`.
    pub conditional_put: bool,
    /// How long to wait for a connection, and for `start`'s check that the bucket answers.
    /// Default 3000 ms.
    pub connect_timeout_ms: u64,
    /// How long one HTTP request may take, connection included. Default 30 000 ms.
    pub request_timeout_ms: u64,
    /// How many times a failed request (connection error, 5xx, timeout of a safe request) is
    /// retried. `0` disables retries. Default 3.
    pub max_retries: usize,
    /// No retry starts later than this after the first attempt. Default 10 000 ms.
    pub retry_timeout_ms: u64,
    /// The first backoff between retries; later ones grow exponentially. Default 100 ms.
    pub retry_initial_backoff_ms: u64,
    /// The longest backoff between retries. Default 2000 ms.
    pub retry_max_backoff_ms: u64,
}

impl Default for S3ObjectStoreOptions {
    fn default() -> Self {
        Self {
            endpoint: None,
            region: DEFAULT_REGION.to_owned(),
            bucket: String::new(),
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            path_style: None,
            allow_http: None,
            prefix: None,
            conditional_put: false,
            connect_timeout_ms: 3000,
            request_timeout_ms: 30_000,
            max_retries: 3,
            retry_timeout_ms: 10_000,
            retry_initial_backoff_ms: 100,
            retry_max_backoff_ms: 2000,
        }
    }
}

/// Options checked and turned into what the client builder and the driver need.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The endpoint as shown in errors: never with user-info.
    pub(crate) shown_endpoint: String,
    /// The endpoint given to the client: with the bucket in the host for virtual-hosted
    /// requests on a custom endpoint; `None` for AWS.
    pub(crate) client_endpoint: Option<String>,
    pub(crate) virtual_hosted: bool,
    pub(crate) allow_http: bool,
    pub(crate) region: String,
    pub(crate) bucket: String,
    pub(crate) credentials: Option<Credentials>,
    /// `""`, or the namespace followed by `/`.
    pub(crate) key_prefix: String,
    pub(crate) conditional_put: bool,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) max_retries: usize,
    pub(crate) retry_timeout: Duration,
    pub(crate) initial_backoff: Duration,
    pub(crate) max_backoff: Duration,
}

/// Static credentials; `Debug` shows the key id only.
#[derive(Debug, Clone)]
pub(crate) struct Credentials {
    pub(crate) access_key_id: String,
    pub(crate) secret_access_key: Secret<String>,
    pub(crate) session_token: Option<Secret<String>>,
}

/// Bucket names as S3 allows them (3 to 63 of lowercase letters, digits, `.`, `-`; compatible
/// servers may be laxer, so only what can never work in a URL host or path is refused here).
fn check_bucket(bucket: &str) -> Result<(), String> {
    if bucket.is_empty() {
        return Err("`bucket` is required: the name of an existing bucket".to_owned());
    }
    if !bucket
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(format!(
            "`bucket` {bucket:?} may hold only ASCII letters, digits, `.`, `-` and `_`"
        ));
    }
    Ok(())
}

fn check_prefix(prefix: &str) -> Result<String, String> {
    let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    validate_key(trimmed).map_err(|err| {
        format!(
            "`prefix` {prefix:?} is not a valid key namespace: {}",
            err.message()
        )
    })?;
    if trimmed.chars().any(char::is_control) {
        return Err(format!(
            "`prefix` {prefix:?} holds a control character, which object keys cannot hold"
        ));
    }
    Ok(format!("{trimmed}/"))
}

fn millis(name: &str, value: u64, at_least: u64) -> Result<Duration, String> {
    if value < at_least {
        return Err(format!(
            "`{name}` must be at least {at_least} ms, not {value}"
        ));
    }
    Ok(Duration::from_millis(value))
}

impl S3ObjectStoreOptions {
    /// Check the options and derive the settings, without I/O.
    pub(crate) fn settings(&self) -> Result<Settings, DriverError> {
        self.try_settings().map_err(DriverError::new)
    }

    fn try_settings(&self) -> Result<Settings, String> {
        check_bucket(&self.bucket)?;
        if self.region.trim().is_empty() {
            return Err("`region` must not be empty (default `us-east-1`)".to_owned());
        }
        let endpoint = self.endpoint.as_ref().map(Endpoint::parse).transpose()?;
        let is_http = endpoint.as_ref().is_some_and(|e| e.scheme == "http");
        let allow_http = self.allow_http.unwrap_or(is_http);
        if is_http && !allow_http {
            return Err(format!(
                "`endpoint` {:?} is plain http but `allow_http` is false: use https or set \
                 `allow_http = true`",
                endpoint.as_ref().map(Endpoint::base).unwrap_or_default()
            ));
        }
        let path_style = self.path_style.unwrap_or(endpoint.is_some());
        let (shown_endpoint, client_endpoint) = match &endpoint {
            Some(endpoint) if path_style => (endpoint.base(), Some(endpoint.base())),
            Some(endpoint) => {
                let hosted = format!(
                    "{}://{}.{}{}",
                    endpoint.scheme, self.bucket, endpoint.authority, endpoint.path
                );
                (endpoint.base(), Some(hosted))
            }
            None => (format!("https://s3.{}.amazonaws.com", self.region), None),
        };
        let credentials = match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) if !id.is_empty() && !secret.expose().is_empty() => {
                Some(Credentials {
                    access_key_id: id.clone(),
                    secret_access_key: secret.clone(),
                    session_token: self
                        .session_token
                        .clone()
                        .filter(|token| !token.expose().is_empty()),
                })
            }
            (None, None) if self.session_token.is_none() => None,
            _ => {
                return Err(
                    "`access_key_id` and `secret_access_key` go together: give both \
                            (non-empty), or neither for unsigned requests; `session_token` \
                            needs both"
                        .to_owned(),
                );
            }
        };
        let key_prefix = check_prefix(self.prefix.as_deref().unwrap_or(""))?;
        let initial_backoff = millis("retry_initial_backoff_ms", self.retry_initial_backoff_ms, 1)?;
        let max_backoff = millis("retry_max_backoff_ms", self.retry_max_backoff_ms, 1)?;
        if max_backoff < initial_backoff {
            return Err(format!(
                "`retry_max_backoff_ms` ({}) must not be below `retry_initial_backoff_ms` ({})",
                self.retry_max_backoff_ms, self.retry_initial_backoff_ms
            ));
        }
        Ok(Settings {
            shown_endpoint,
            client_endpoint,
            virtual_hosted: !path_style,
            allow_http,
            region: self.region.clone(),
            bucket: self.bucket.clone(),
            credentials,
            key_prefix,
            conditional_put: self.conditional_put,
            connect_timeout: millis("connect_timeout_ms", self.connect_timeout_ms, 1)?,
            request_timeout: millis("request_timeout_ms", self.request_timeout_ms, 1)?,
            max_retries: self.max_retries,
            retry_timeout: millis("retry_timeout_ms", self.retry_timeout_ms, 0)?,
            initial_backoff,
            max_backoff,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_bucket() -> S3ObjectStoreOptions {
        S3ObjectStoreOptions {
            bucket: "b".into(),
            ..Default::default()
        }
    }

    #[test]
    fn aws_by_default_virtual_hosted_and_https_only() {
        let settings = with_bucket().settings().unwrap();
        assert_eq!(
            settings.shown_endpoint,
            "https://s3.us-east-1.amazonaws.com"
        );
        assert_eq!(settings.client_endpoint, None);
        assert!(settings.virtual_hosted && !settings.allow_http);
        assert_eq!(settings.key_prefix, "");
    }

    #[test]
    fn a_custom_endpoint_is_path_style_and_http_follows_its_scheme() {
        let settings = S3ObjectStoreOptions {
            endpoint: Some("http://127.0.0.1:9000/".into()),
            ..with_bucket()
        }
        .settings()
        .unwrap();
        assert_eq!(
            settings.client_endpoint.as_deref(),
            Some("http://127.0.0.1:9000")
        );
        assert!(!settings.virtual_hosted && settings.allow_http);
        let hosted = S3ObjectStoreOptions {
            endpoint: Some("https://minio.internal".into()),
            path_style: Some(false),
            ..with_bucket()
        }
        .settings()
        .unwrap();
        assert_eq!(
            hosted.client_endpoint.as_deref(),
            Some("https://b.minio.internal")
        );
        assert_eq!(hosted.shown_endpoint, "https://minio.internal");
        assert!(hosted.virtual_hosted && !hosted.allow_http);
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        let cases = [
            (S3ObjectStoreOptions::default(), "`bucket` is required"),
            (
                S3ObjectStoreOptions {
                    bucket: "a b".into(),
                    ..Default::default()
                },
                "`bucket`",
            ),
            (
                S3ObjectStoreOptions {
                    endpoint: Some("localhost:9000".into()),
                    ..with_bucket()
                },
                "is not a URL",
            ),
            (
                S3ObjectStoreOptions {
                    endpoint: Some("ftp://h".into()),
                    ..with_bucket()
                },
                "only `http` and `https`",
            ),
            (
                S3ObjectStoreOptions {
                    endpoint: Some("http://h".into()),
                    allow_http: Some(false),
                    ..with_bucket()
                },
                "`allow_http` is false",
            ),
            (
                S3ObjectStoreOptions {
                    access_key_id: Some("id".into()),
                    ..with_bucket()
                },
                "go together",
            ),
            (
                S3ObjectStoreOptions {
                    prefix: Some("a//b".into()),
                    ..with_bucket()
                },
                "`prefix`",
            ),
            (
                S3ObjectStoreOptions {
                    prefix: Some("../up".into()),
                    ..with_bucket()
                },
                "`prefix`",
            ),
            (
                S3ObjectStoreOptions {
                    connect_timeout_ms: 0,
                    ..with_bucket()
                },
                "`connect_timeout_ms`",
            ),
            (
                S3ObjectStoreOptions {
                    retry_initial_backoff_ms: 500,
                    retry_max_backoff_ms: 100,
                    ..with_bucket()
                },
                "`retry_max_backoff_ms`",
            ),
        ];
        for (options, expected) in cases {
            let err = options.settings().unwrap_err();
            assert!(err.message().contains(expected), "{err} / {expected}");
        }
    }

    #[test]
    fn user_info_in_the_endpoint_is_refused_without_echoing_it() {
        let err = S3ObjectStoreOptions {
            endpoint: Some("http://user:hunter2@host:9000".into()),
            ..with_bucket()
        }
        .settings()
        .unwrap_err();
        assert!(err.message().contains("http://***@host:9000"), "{err}");
        assert!(!err.message().contains("hunter2"), "{err}");
    }

    #[test]
    fn the_prefix_is_normalized_to_one_trailing_slash() {
        for (given, expected) in [("a", "a/"), ("a/b/", "a/b/"), ("", ""), ("/", "")] {
            let settings = S3ObjectStoreOptions {
                prefix: Some(given.into()),
                ..with_bucket()
            };
            assert_eq!(
                settings.settings().unwrap().key_prefix,
                expected,
                "{given:?}"
            );
        }
    }

    #[test]
    fn options_deserialize_with_defaults_and_refuse_unknown_keys() {
        let options: S3ObjectStoreOptions =
            toml::from_str("bucket = \"b\"\nmax_retries = 0\n").unwrap();
        assert_eq!((options.bucket.as_str(), options.max_retries), ("b", 0));
        assert_eq!(options.request_timeout_ms, 30_000);
        let err = toml::from_str::<S3ObjectStoreOptions>("bucket = \"b\"\nbuckett = \"c\"\n")
            .unwrap_err();
        assert!(err.to_string().contains("buckett"), "{err}");
    }
}
