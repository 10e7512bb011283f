//! Secrets in driver options: values that `Debug`, `Display` and logs never show.
//!
//! An options type marks a field [`Secret`] (a password, a token) or [`SecretUrl`] (an address
//! that may carry a password) and then simply derives `Debug`: nothing to write by hand, and
//! nothing that drifts when a field is added.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

use crate::redact::redact_url;

/// What `Debug` and `Display` of a [`Secret`] print instead of the value.
const REDACTED: &str = "<redacted>";

/// A value that is never shown: `Debug` and `Display` print `<redacted>`, and the value is
/// reached only through [`expose`](Secret::expose), so it cannot slip into a format string.
///
/// Deserialized exactly as `T` is (an `INFRA` option `password = "…"` reads into a
/// `Secret<String>`), and described by `T`'s JSON Schema marked `writeOnly`.
///
/// It is deliberately not `Serialize`: options are read, never written back, and a dump of
/// options (a debug endpoint, a config echo) must not carry the secret; call
/// [`expose`](Secret::expose) where the value really has to go somewhere.
///
/// `PartialEq` compares the values (for tests and option equality); it is not constant-time,
/// so never use it to check a credential someone presented.
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
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wrap `value`.
    ///
    /// ```
    /// let token = sandloom_driverkit::Secret::new(42_u64);
    /// assert_eq!(*token.expose(), 42);
    /// ```
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    /// The value itself: the one deliberate way to reach it.
    ///
    /// ```
    /// let password = sandloom_driverkit::Secret::<String>::from("hunter2");
    /// assert_eq!(password.expose(), "hunter2");
    /// ```
    pub const fn expose(&self) -> &T {
        &self.0
    }

    /// The value itself, taken out of its wrapper.
    ///
    /// ```
    /// let password = sandloom_driverkit::Secret::new(String::from("hunter2"));
    /// assert_eq!(password.into_exposed(), "hunter2");
    /// ```
    pub fn into_exposed(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    /// ```
    /// let key: sandloom_driverkit::Secret<Vec<u8>> = vec![1, 2, 3].into();
    /// assert_eq!(key.expose(), &[1, 2, 3]);
    /// ```
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret<String> {
    /// ```
    /// let password: sandloom_driverkit::Secret<String> = "hunter2".into();
    /// assert_eq!(password.expose(), "hunter2");
    /// ```
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self)
    }
}

impl<T: JsonSchema> JsonSchema for Secret<T> {
    // Always inlined: the wrapper has no schema of its own to name, only `T`'s plus a flag.
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Secret_{}", T::schema_name()).into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("sandloom_driverkit::Secret<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        write_only(generator.subschema_for::<T>())
    }
}

/// `schema` with `writeOnly: true`: a value given to the program, never read back from it.
fn write_only(mut schema: Schema) -> Schema {
    schema.insert("writeOnly".to_owned(), true.into());
    schema
}

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
        write_only(generator.subschema_for::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "hunter2-secret";

    #[test]
    fn debug_and_display_never_show_the_value() {
        let secret = Secret::<String>::from(PASSWORD);
        for shown in [
            format!("{secret:?}"),
            format!("{secret:#?}"),
            format!("{secret}"),
            format!("{:?}", Some(&secret)),
            format!("{:?}", vec![secret.clone()]),
        ] {
            assert!(!shown.contains(PASSWORD), "{shown}");
            assert!(shown.contains(REDACTED), "{shown}");
        }
        assert_eq!(secret.expose(), PASSWORD);
        assert_eq!(secret.clone().into_exposed(), PASSWORD);
    }

    #[test]
    fn deserializes_exactly_as_the_inner_type() {
        let secret: Secret<String> = serde_json::from_str(r#""hunter2""#).unwrap();
        assert_eq!(secret, Secret::<String>::from("hunter2"));
        let number: Secret<u32> = serde_json::from_str("7").unwrap();
        assert_eq!(*number.expose(), 7);
        let wrong: Result<Secret<u32>, _> = serde_json::from_str(r#""seven""#);
        let message = wrong.unwrap_err().to_string();
        assert!(message.contains("invalid type"), "{message}");
        let missing: Option<Secret<String>> = serde_json::from_str("null").unwrap();
        assert!(missing.is_none());
    }

    #[test]
    fn equality_and_clone_follow_the_inner_value() {
        assert_eq!(Secret::new(1), Secret::new(1));
        assert_ne!(Secret::new(1), Secret::new(2));
        assert_eq!(Secret::<String>::default().expose(), "");
    }

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
