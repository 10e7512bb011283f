//! The options of `secrets.vault` and their checks.

use std::time::Duration;

use sandloom_driverkit::secrets::MAX_VALUE_BYTES;
use sandloom_driverkit::{DriverError, Secret, SecretUrl};
use serde::Deserialize;

/// The longest timeout or poll interval accepted, in milliseconds: ten minutes.
const MAX_MS: u64 = 600_000;

/// Options of `secrets.vault`. `address` and one way to log in (`token`, or `role_id` with
/// `secret_id`) are required.
///
/// ```toml
/// [secrets.default]
/// driver = "vault"
/// address = "https://vault.internal:8200"
/// mount = "secret"              # the KV v2 engine's mount (default "secret")
/// prefix = "apps/orders"        # read only under secret/data/apps/orders/ (default: the whole mount)
/// # token: set SANDLOOM__SECRETS__DEFAULT__TOKEN rather than writing it here
/// ```
///
/// `Debug` shows no token, no `secret_id` and no user-info:
///
/// ```
/// use sandloom_driver_vault::VaultSecretsOptions;
///
/// let options = VaultSecretsOptions {
///     token: Some("hvs.s3cr3t".into()),
///     ..VaultSecretsOptions::new("http://127.0.0.1:8200")
/// };
/// assert_eq!(options.mount, "secret");
/// assert_eq!(options.field, "value");
/// assert!(!format!("{options:?}").contains("s3cr3t"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VaultSecretsOptions {
    /// The server's `http://` or `https://` base URL, as `VAULT_ADDR` holds it
    /// (`https://vault.internal:8200`); requests go to `<address>/v1/…`. No user-info, query
    /// or fragment. Shown redacted.
    pub address: SecretUrl,
    /// The token every request carries (`X-Vault-Token`). Required unless `role_id` and
    /// `secret_id` are given. Secret: never shown, and its header is marked sensitive.
    #[serde(default)]
    pub token: Option<Secret<String>>,
    /// `AppRole` login, instead of `token`: the role's id. Secret.
    #[serde(default)]
    pub role_id: Option<Secret<String>>,
    /// `AppRole` login: the secret id. Secret.
    #[serde(default)]
    pub secret_id: Option<Secret<String>>,
    /// Where the `AppRole` auth method is mounted (default `approle`).
    #[serde(default = "defaults::approle_mount")]
    pub approle_mount: String,
    /// The mount of the KV version 2 engine (default `secret`, where a dev server has one).
    #[serde(default = "defaults::mount")]
    pub mount: String,
    /// The path under the mount the driver reads beneath: the secret `db/password` is the
    /// entry `<prefix>/db/password`. Nothing outside it is read or listed. Default: none (the
    /// whole mount).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The namespace (`X-Vault-Namespace`: Vault Enterprise, `OpenBao` namespaces). Default none.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The field of a KV entry that holds the value (default `value`).
    #[serde(default = "defaults::field")]
    pub field: String,
    /// The largest value `get` reads, in bytes: 1 to 1 MiB (the contract's maximum).
    #[serde(default = "defaults::max_value_bytes")]
    pub max_value_bytes: usize,
    /// How often `changes` reads the entries' metadata again while it waits, in milliseconds
    /// (default 1000; 10 to 600 000).
    #[serde(default = "defaults::poll_interval_ms")]
    pub poll_interval_ms: u64,
    /// Time budget of opening a connection, in milliseconds (default 2000; 1 to 600 000).
    #[serde(default = "defaults::connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Time budget of one request, from connecting to the end of the answer, in milliseconds
    /// (default 10 000; 1 to 600 000).
    #[serde(default = "defaults::request_timeout_ms")]
    pub request_timeout_ms: u64,
}

mod defaults {
    pub(super) fn approle_mount() -> String {
        "approle".to_owned()
    }
    pub(super) fn mount() -> String {
        "secret".to_owned()
    }
    pub(super) fn field() -> String {
        "value".to_owned()
    }
    pub(super) fn max_value_bytes() -> usize {
        super::MAX_VALUE_BYTES
    }
    pub(super) fn poll_interval_ms() -> u64 {
        1000
    }
    pub(super) fn connect_timeout_ms() -> u64 {
        2000
    }
    pub(super) fn request_timeout_ms() -> u64 {
        10_000
    }
}

impl VaultSecretsOptions {
    /// Options for the server at `address`, every other option at its default (give a `token`
    /// or `AppRole` credentials before use).
    ///
    /// ```
    /// let options = sandloom_driver_vault::VaultSecretsOptions::new("http://127.0.0.1:8200");
    /// assert_eq!((options.connect_timeout_ms, options.request_timeout_ms), (2000, 10_000));
    /// assert!(options.token.is_none() && options.prefix.is_none());
    /// ```
    pub fn new(address: impl Into<SecretUrl>) -> Self {
        Self {
            address: address.into(),
            token: None,
            role_id: None,
            secret_id: None,
            approle_mount: defaults::approle_mount(),
            mount: defaults::mount(),
            prefix: None,
            namespace: None,
            field: defaults::field(),
            max_value_bytes: defaults::max_value_bytes(),
            poll_interval_ms: defaults::poll_interval_ms(),
            connect_timeout_ms: defaults::connect_timeout_ms(),
            request_timeout_ms: defaults::request_timeout_ms(),
        }
    }

    /// Check every option and prepare what the driver keeps. Messages name options, never a
    /// secret's value.
    pub(crate) fn check(&self) -> Result<Checked, DriverError> {
        let base = crate::address::base_url(&self.address)
            .map_err(|e| DriverError::new(e).at_option("address"))?;
        let auth = self.auth()?;
        path_option("mount", &self.mount)?;
        path_option("approle_mount", &self.approle_mount)?;
        if let Some(prefix) = &self.prefix {
            path_option("prefix", prefix)?;
        }
        if let Some(namespace) = &self.namespace {
            path_option("namespace", namespace)?;
        }
        if self.field.is_empty() || self.field.len() > 256 || self.field == "encoding" {
            return Err(DriverError::new(
                "must be 1 to 256 bytes, and not `encoding` (which says how the value is encoded)",
            )
            .at_option("field"));
        }
        if self.max_value_bytes == 0 || self.max_value_bytes > MAX_VALUE_BYTES {
            return Err(DriverError::new(format!(
                "must be 1 to {MAX_VALUE_BYTES} (1 MiB, the contract's maximum), not {}",
                self.max_value_bytes
            ))
            .at_option("max_value_bytes"));
        }
        for (key, value, min) in [
            ("poll_interval_ms", self.poll_interval_ms, 10),
            ("connect_timeout_ms", self.connect_timeout_ms, 1),
            ("request_timeout_ms", self.request_timeout_ms, 1),
        ] {
            if !(min..=MAX_MS).contains(&value) {
                return Err(DriverError::new(format!(
                    "must be {min} to {MAX_MS} milliseconds, not {value}"
                ))
                .at_option(key));
            }
        }
        Ok(Checked {
            base,
            auth,
            mount: self.mount.clone(),
            prefix: self.prefix.clone(),
            namespace: self.namespace.clone(),
            field: self.field.clone(),
            max_value_bytes: self.max_value_bytes,
            poll_interval: Duration::from_millis(self.poll_interval_ms),
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            request_timeout: Duration::from_millis(self.request_timeout_ms),
        })
    }

    /// How the driver logs in: exactly one of `token` and (`role_id`, `secret_id`).
    fn auth(&self) -> Result<Auth, DriverError> {
        let nonempty = |key: &str, value: &Secret<String>| {
            let text = value.expose();
            if text.is_empty() {
                return Err(DriverError::new("must not be empty").at_option(key));
            }
            // A header value: visible ASCII only. The message never repeats the value.
            if !text.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(DriverError::new(
                    "must be printable ASCII without spaces (it is sent in a header)",
                )
                .at_option(key));
            }
            Ok(value.clone())
        };
        match (&self.token, &self.role_id, &self.secret_id) {
            (Some(token), None, None) => Ok(Auth::Token(nonempty("token", token)?)),
            (None, Some(role_id), Some(secret_id)) => Ok(Auth::AppRole {
                role_id: nonempty("role_id", role_id)?,
                secret_id: nonempty("secret_id", secret_id)?,
                mount: self.approle_mount.clone(),
            }),
            (None, None, None) => Err(DriverError::new(
                "give `token`, or `role_id` and `secret_id` for AppRole: the driver must log in \
                 (set them through SANDLOOM__SECRETS__<INSTANCE>__TOKEN rather than in the file)",
            )),
            (Some(_), _, _) => Err(DriverError::new(
                "give either `token` or `role_id` and `secret_id` (AppRole), not both",
            )
            .at_option("token")),
            (None, Some(_), None) => {
                Err(DriverError::new("AppRole needs `secret_id` too").at_option("secret_id"))
            }
            (None, None, Some(_)) => {
                Err(DriverError::new("AppRole needs `role_id` too").at_option("role_id"))
            }
        }
    }
}

/// How the driver logs in.
#[derive(Debug, Clone)]
pub(crate) enum Auth {
    Token(Secret<String>),
    AppRole {
        role_id: Secret<String>,
        secret_id: Secret<String>,
        mount: String,
    },
}

/// The options, checked.
#[derive(Debug)]
pub(crate) struct Checked {
    /// `<address>/v1/`.
    pub(crate) base: String,
    pub(crate) auth: Auth,
    pub(crate) mount: String,
    pub(crate) prefix: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) field: String,
    pub(crate) max_value_bytes: usize,
    pub(crate) poll_interval: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
}

/// Check a path-like option: segments of ASCII letters, digits, `.`, `_` and `-` separated by
/// single `/`, no `.` or `..` segment, no leading or trailing `/`.
fn path_option(key: &str, value: &str) -> Result<(), DriverError> {
    let valid = !value.is_empty()
        && value.len() <= 512
        && value.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        });
    if valid {
        Ok(())
    } else {
        Err(DriverError::new(format!(
            "{value:?} must be segments of ASCII letters, digits, `.`, `_` and `-` separated by \
             single `/`, with no leading or trailing `/` and no `.` or `..` segment"
        ))
        .at_option(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_token(address: &str) -> VaultSecretsOptions {
        VaultSecretsOptions {
            token: Some("t0ken".into()),
            ..VaultSecretsOptions::new(address)
        }
    }

    #[test]
    fn addresses_become_the_api_base() {
        for (address, base) in [
            ("http://127.0.0.1:8200", "http://127.0.0.1:8200/v1/"),
            (
                "https://vault.internal:8200/",
                "https://vault.internal:8200/v1/",
            ),
            ("https://gw.internal/vault", "https://gw.internal/vault/v1/"),
        ] {
            assert_eq!(with_token(address).check().unwrap().base, base);
        }
        for bad in [
            "vault.internal:8200",
            "ftp://vault.internal",
            "https://user:pw@vault.internal",
            "https://vault.internal/?x=1",
            "",
        ] {
            let err = with_token(bad).check().unwrap_err();
            assert_eq!(err.option(), ["address"], "{bad}: {err}");
            assert!(!err.to_string().contains("pw@"), "{err}");
        }
    }

    #[test]
    fn exactly_one_way_to_log_in() {
        let none = VaultSecretsOptions::new("http://127.0.0.1:8200");
        assert!(none.check().unwrap_err().to_string().contains("`token`"));
        let both = VaultSecretsOptions {
            role_id: Some("r".into()),
            secret_id: Some("s".into()),
            ..with_token("http://127.0.0.1:8200")
        };
        assert_eq!(both.check().unwrap_err().option(), ["token"]);
        let half = VaultSecretsOptions {
            role_id: Some("r".into()),
            ..VaultSecretsOptions::new("http://127.0.0.1:8200")
        };
        assert_eq!(half.check().unwrap_err().option(), ["secret_id"]);
        let approle = VaultSecretsOptions {
            role_id: Some("r".into()),
            secret_id: Some("s".into()),
            ..VaultSecretsOptions::new("http://127.0.0.1:8200")
        };
        assert!(matches!(
            approle.check().unwrap().auth,
            Auth::AppRole { .. }
        ));
        for bad in ["", "with space", "tab\there", "é"] {
            let err = VaultSecretsOptions {
                token: Some(bad.into()),
                ..VaultSecretsOptions::new("http://127.0.0.1:8200")
            }
            .check()
            .unwrap_err();
            assert_eq!(err.option(), ["token"]);
            if !bad.is_empty() {
                assert!(!err.to_string().contains(bad), "{err}");
            }
        }
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one table of cases
    fn paths_limits_and_timeouts_are_checked() {
        let base = || with_token("http://127.0.0.1:8200");
        for (options, key) in [
            (
                VaultSecretsOptions {
                    mount: "/secret".into(),
                    ..base()
                },
                "mount",
            ),
            (
                VaultSecretsOptions {
                    mount: String::new(),
                    ..base()
                },
                "mount",
            ),
            (
                VaultSecretsOptions {
                    prefix: Some("a//b".into()),
                    ..base()
                },
                "prefix",
            ),
            (
                VaultSecretsOptions {
                    prefix: Some("a/../b".into()),
                    ..base()
                },
                "prefix",
            ),
            (
                VaultSecretsOptions {
                    prefix: Some("a b".into()),
                    ..base()
                },
                "prefix",
            ),
            (
                VaultSecretsOptions {
                    namespace: Some("ns/".into()),
                    ..base()
                },
                "namespace",
            ),
            (
                VaultSecretsOptions {
                    field: String::new(),
                    ..base()
                },
                "field",
            ),
            (
                VaultSecretsOptions {
                    field: "encoding".into(),
                    ..base()
                },
                "field",
            ),
            (
                VaultSecretsOptions {
                    max_value_bytes: 0,
                    ..base()
                },
                "max_value_bytes",
            ),
            (
                VaultSecretsOptions {
                    max_value_bytes: MAX_VALUE_BYTES + 1,
                    ..base()
                },
                "max_value_bytes",
            ),
            (
                VaultSecretsOptions {
                    poll_interval_ms: 9,
                    ..base()
                },
                "poll_interval_ms",
            ),
            (
                VaultSecretsOptions {
                    connect_timeout_ms: 0,
                    ..base()
                },
                "connect_timeout_ms",
            ),
            (
                VaultSecretsOptions {
                    request_timeout_ms: MAX_MS + 1,
                    ..base()
                },
                "request_timeout_ms",
            ),
        ] {
            assert_eq!(options.check().unwrap_err().option(), [key]);
        }
        let good = VaultSecretsOptions {
            mount: "kv/team-a".into(),
            prefix: Some("apps/orders.v2".into()),
            namespace: Some("admin/team".into()),
            ..base()
        };
        assert!(good.check().is_ok());
    }
}
