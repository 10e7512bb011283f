//! Secrets in driver options: values that `Debug`, `Display` and logs never show.
//!
//! An options type marks a field [`Secret`] (a password, a token) or [`SecretUrl`] (an address
//! that may carry a password) and then simply derives `Debug`: nothing to write by hand, and
//! nothing that drifts when a field is added. `Secret` is sdk-infra's one secret type (modules
//! get it from `secrets.get`), re-exported here with its `Deserialize` and `JsonSchema` impls.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use zeroize::Zeroize;

use crate::redact::redact_url;

/// A value that is never shown, and is cleared from memory when dropped: `Debug` and `Display`
/// print `<redacted>`, and the value is reached only through [`expose`](Secret::expose).
///
/// The same type as [`sandloom_sdk_infra::Secret`], the one modules get from `secrets.get`.
/// In options it deserializes exactly as `T` does (an `INFRA` option `password = "…"` reads
/// into a `Secret<String>`), and is described by `T`'s JSON Schema marked `writeOnly`. It is
/// never `Serialize`.
///
/// ```
/// use sandloom_driverkit::Secret;
///
/// #[derive(Debug, serde::Deserialize)]
/// struct Options {
///     user: String,
///     password: Secret<String>,
/// }
///
/// let options: Options = serde_json::from_str(r#"{"user":"app","password":"hunter2"}"#).unwrap();
/// assert_eq!(options.password.expose(), "hunter2");
/// let shown = format!("{options:?}");
/// assert_eq!(shown, r#"Options { user: "app", password: <redacted> }"#);
/// assert_eq!(options.password.to_string(), "<redacted>");
/// ```
pub use sandloom_sdk_infra::Secret;

/// An address (`redis://:password@host:6379/0`, `amqp://user:password@host/%2f`, a webhook
/// URL with a token in its path) that may carry a secret: `Debug` and `Display` show it through
/// [`redact_url`], so the scheme and host stay visible and the password never is.
///
/// Held as the text that was configured, unparsed: each driver parses it with its client's
/// own rules (a `PostgreSQL` key/value string is not a URL, and is shown as fully redacted).
/// Deserialized from a string; its JSON Schema is a `writeOnly` string.
///
/// ```
/// use sandloom_driverkit::SecretUrl;
///
/// let url = SecretUrl::from("redis://app:hunter2@cache.internal:6379/0");
/// assert_eq!(url.expose(), "redis://app:hunter2@cache.internal:6379/0");
/// assert_eq!(url.to_string(), "redis://***@cache.internal:6379/0");
/// assert_eq!(format!("{url:?}"), r#""redis://***@cache.internal:6379/0""#);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(transparent)]
pub struct SecretUrl(String);

impl Drop for SecretUrl {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl SecretUrl {
    /// Wrap `url`.
    ///
    /// ```
    /// let url = sandloom_driverkit::SecretUrl::new(format!("amqp://{}:5672/%2f", "broker"));
    /// assert_eq!(url.expose(), "amqp://broker:5672/%2f");
    /// ```
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The address as configured, password included: for the client, never for people.
    ///
    /// ```
    /// let url = sandloom_driverkit::SecretUrl::from("postgres://app:pw@db/app");
    /// assert_eq!(url.expose(), "postgres://app:pw@db/app");
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The address for people: [`redact_url`] of it (what `Display` prints).
    ///
    /// ```
    /// let url = sandloom_driverkit::SecretUrl::from("postgres://app:pw@db/app");
    /// assert_eq!(url.redacted(), "postgres://***@db/app");
    /// ```
    pub fn redacted(&self) -> String {
        redact_url(&self.0)
    }
}

impl From<&str> for SecretUrl {
    /// ```
    /// let url: sandloom_driverkit::SecretUrl = "redis://127.0.0.1".into();
    /// assert_eq!(url.expose(), "redis://127.0.0.1");
    /// ```
    fn from(url: &str) -> Self {
        Self(url.to_owned())
    }
}

impl From<String> for SecretUrl {
    /// ```
    /// let url: sandloom_driverkit::SecretUrl = String::from("redis://127.0.0.1").into();
    /// assert_eq!(url.expose(), "redis://127.0.0.1");
    /// ```
    fn from(url: String) -> Self {
        Self(url)
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.redacted(), f)
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl JsonSchema for SecretUrl {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SecretUrl".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "sandloom_driverkit::SecretUrl".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        // The same schema as a secret string: `writeOnly`, marked in one place.
        <Secret<String> as JsonSchema>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "hunter2-secret";

    #[test]
    fn a_new_secret_field_is_redacted_by_derive_alone() {
        // What a driver author writes for a new option: the field type, nothing else.
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Options {
            host: String,
            api_token: Secret<String>,
            url: SecretUrl,
            backup_key: Option<Secret<String>>,
        }
        let options: Options = serde_json::from_value(serde_json::json!({
            "host": "db.internal",
            "api_token": PASSWORD,
            "url": format!("https://bot:{PASSWORD}@hooks.example.com/in/{PASSWORD}"),
            "backup_key": PASSWORD,
        }))
        .unwrap();
        for shown in [format!("{options:?}"), format!("{options:#?}")] {
            assert!(!shown.contains(PASSWORD), "{shown}");
            assert!(shown.contains("db.internal"), "{shown}");
            assert!(
                shown.contains("https://***@hooks.example.com/***"),
                "{shown}"
            );
        }
        assert_eq!(options.host, "db.internal");
        assert!(options.url.expose().contains(PASSWORD));
        assert_eq!(options.api_token.expose(), PASSWORD);
        assert_eq!(options.backup_key.unwrap().expose(), PASSWORD);
    }

    #[test]
    fn secret_url_shows_the_address_without_the_password() {
        let url = SecretUrl::from(format!("redis://:{PASSWORD}@127.0.0.1:6379/0"));
        for shown in [format!("{url:?}"), url.to_string(), url.redacted()] {
            assert!(!shown.contains(PASSWORD), "{shown}");
            assert!(shown.contains("127.0.0.1:6379/0"), "{shown}");
        }
        let parsed: SecretUrl = serde_json::from_str(r#""amqp://guest:pw@host/%2f""#).unwrap();
        assert_eq!(parsed.expose(), "amqp://guest:pw@host/%2f");
        assert!(serde_json::from_str::<SecretUrl>("5").is_err());
    }

    #[test]
    fn schemas_are_the_inner_ones_marked_write_only() {
        let schema = schemars::schema_for!(Secret<String>);
        assert_eq!(schema.get("type"), Some(&"string".into()));
        assert_eq!(schema.get("writeOnly"), Some(&true.into()));
        let schema = schemars::schema_for!(Secret<u16>);
        assert_eq!(schema.get("type"), Some(&"integer".into()));
        assert_eq!(schema.get("writeOnly"), Some(&true.into()));
        let schema = schemars::schema_for!(SecretUrl);
        assert_eq!(schema.get("type"), Some(&"string".into()));
        assert_eq!(schema.get("writeOnly"), Some(&true.into()));
        // Inside an options type, the field keeps both the inner type and the flag.
        let schema = schemars::schema_for!(Option<Secret<String>>);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains("writeOnly"), "{text}");
        assert!(text.contains("string"), "{text}");
    }
}
