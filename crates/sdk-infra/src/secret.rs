//! The one secret type: values that `Debug`, `Display` and logs never show, cleared from
//! memory when dropped.
//!
//! Modules receive it from `secrets.get` ([`Secrets`](crate::secrets::Secrets)); drivers type
//! their option fields with it (`sandloom_driverkit::Secret` is this type, re-exported, with
//! its `Deserialize` and `JsonSchema` impls behind this crate's feature `options`).

use std::fmt;
use std::str::Utf8Error;

use zeroize::Zeroize;

/// What `Debug` and `Display` of a [`Secret`] print instead of the value.
const REDACTED: &str = "<redacted>";

/// A value that is never shown: `Debug` and `Display` print `<redacted>`, the value is reached
/// only through [`expose`](Secret::expose), so it cannot slip into a format string, and its
/// memory is overwritten with zeros when it is dropped (the `zeroize` crate).
///
/// It is deliberately not `Serialize`: a dump of options or of a module's state (a debug
/// endpoint, a config echo) must not carry the secret; call [`expose`](Secret::expose) where
/// the value really has to go somewhere. Not `Copy` either: every copy would be one more place
/// the value stays in memory after use.
///
/// Zeroing covers this value's own buffer. What [`expose`](Secret::expose) hands out and the
/// caller copies (into a connection string, a request header) is the caller's to keep short.
///
/// `PartialEq` compares the values (for tests and option equality); it is not constant-time,
/// so never use it to check a credential someone presented.
///
/// ```
/// use sandloom_sdk_infra::Secret;
///
/// let password = Secret::new(String::from("hunter2"));
/// assert_eq!(password.expose(), "hunter2");
/// assert_eq!(format!("{password:?}"), "<redacted>");
/// assert_eq!(password.to_string(), "<redacted>");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Secret<T: Zeroize>(T);

impl<T: Zeroize> Secret<T> {
    /// Wrap `value`.
    ///
    /// ```
    /// let token = sandloom_sdk_infra::Secret::new(42_u64);
    /// assert_eq!(*token.expose(), 42);
    /// ```
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    /// The value itself: the one deliberate way to reach it.
    ///
    /// ```
    /// let password = sandloom_sdk_infra::Secret::<String>::from("hunter2");
    /// assert_eq!(password.expose(), "hunter2");
    /// ```
    pub const fn expose(&self) -> &T {
        &self.0
    }

    /// The value itself, taken out of its wrapper: from here on it is the caller's to clear.
    /// The wrapper keeps `T::default()`.
    ///
    /// ```
    /// let password = sandloom_sdk_infra::Secret::new(String::from("hunter2"));
    /// assert_eq!(password.into_exposed(), "hunter2");
    /// ```
    #[must_use]
    pub fn into_exposed(mut self) -> T
    where
        T: Default,
    {
        // `Secret` has a `Drop`, so the value cannot be moved out; it is swapped out instead.
        std::mem::take(&mut self.0)
    }
}

impl Secret<Vec<u8>> {
    /// The value as text, when it is UTF-8 (a password, a token): secrets are bytes, and most
    /// are text.
    ///
    /// ```
    /// use sandloom_sdk_infra::Secret;
    ///
    /// let token = Secret::new(b"s3cr3t".to_vec());
    /// assert_eq!(token.expose_str().unwrap(), "s3cr3t");
    /// let key = Secret::new(vec![0xff, 0x00]);
    /// assert!(key.expose_str().is_err()); // the error names a position, never the bytes
    /// ```
    ///
    /// # Errors
    /// When the bytes are not UTF-8; the error says where, not what.
    pub fn expose_str(&self) -> Result<&str, Utf8Error> {
        std::str::from_utf8(&self.0)
    }
}

impl<T: Zeroize> Drop for Secret<T> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<T: Zeroize> From<T> for Secret<T> {
    /// ```
    /// let key: sandloom_sdk_infra::Secret<Vec<u8>> = vec![1, 2, 3].into();
    /// assert_eq!(key.expose(), &[1, 2, 3]);
    /// ```
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret<String> {
    /// ```
    /// let password: sandloom_sdk_infra::Secret<String> = "hunter2".into();
    /// assert_eq!(password.expose(), "hunter2");
    /// ```
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl<T: Zeroize> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T: Zeroize> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Driver options: a `Secret<T>` reads exactly as `T` does (an `INFRA` option
/// `password = "…"` reads into a `Secret<String>`), and is described by `T`'s JSON Schema
/// marked `writeOnly`. Here rather than in driverkit because the orphan rule wants the impls
/// next to the type.
#[cfg(feature = "options")]
mod options {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator};
    use serde::{Deserialize, Deserializer};
    use zeroize::Zeroize;

    use super::Secret;

    impl<'de, T: Zeroize + Deserialize<'de>> Deserialize<'de> for Secret<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            T::deserialize(deserializer).map(Self)
        }
    }

    impl<T: Zeroize + JsonSchema> JsonSchema for Secret<T> {
        // Always inlined: the wrapper has no schema of its own to name, only `T`'s plus a flag.
        fn inline_schema() -> bool {
            true
        }

        fn schema_name() -> Cow<'static, str> {
            format!("Secret_{}", T::schema_name()).into()
        }

        fn schema_id() -> Cow<'static, str> {
            format!("sandloom_sdk_infra::Secret<{}>", T::schema_id()).into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            // A value given to the program, never read back from it.
            let mut schema = generator.subschema_for::<T>();
            schema.insert("writeOnly".to_owned(), true.into());
            schema
        }
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
    fn equality_and_clone_follow_the_inner_value() {
        assert_eq!(Secret::new(1), Secret::new(1));
        assert_ne!(Secret::new(1), Secret::new(2));
        assert_eq!(Secret::<String>::default().expose(), "");
    }

    #[test]
    fn dropping_zeroizes_the_value_and_into_exposed_leaves_the_default() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        /// Counts the `zeroize` calls it receives.
        #[derive(Default)]
        struct Probe(Arc<AtomicUsize>);
        impl Zeroize for Probe {
            fn zeroize(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }

        let cleared = Arc::new(AtomicUsize::new(0));
        drop(Secret::new(Probe(Arc::clone(&cleared))));
        assert_eq!(cleared.load(Ordering::SeqCst), 1, "dropped: zeroized once");
        let taken = Secret::new(Probe(Arc::clone(&cleared))).into_exposed();
        assert_eq!(
            cleared.load(Ordering::SeqCst),
            1,
            "what was taken out is the caller's: the wrapper zeroized its default only"
        );
        drop(taken);
        // `Vec`'s own `Zeroize` empties it (and zeroes its whole capacity).
        let mut bytes = PASSWORD.as_bytes().to_vec();
        bytes.zeroize();
        assert!(bytes.is_empty());
    }

    #[test]
    fn text_of_bytes_is_reached_only_when_utf8() {
        let text = Secret::new("pässword".as_bytes().to_vec());
        assert_eq!(text.expose_str().unwrap(), "pässword");
        let binary = Secret::new(vec![b'a', 0xC3]);
        let error = binary.expose_str().unwrap_err().to_string();
        assert!(!error.contains('a'), "{error}");
    }

    #[cfg(feature = "options")]
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

    #[cfg(feature = "options")]
    #[test]
    fn schemas_are_the_inner_ones_marked_write_only() {
        let schema = schemars::schema_for!(Secret<String>);
        assert_eq!(schema.get("type"), Some(&"string".into()));
        assert_eq!(schema.get("writeOnly"), Some(&true.into()));
        let schema = schemars::schema_for!(Secret<u16>);
        assert_eq!(schema.get("type"), Some(&"integer".into()));
        assert_eq!(schema.get("writeOnly"), Some(&true.into()));
        let schema = schemars::schema_for!(Option<Secret<String>>);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains("writeOnly"), "{text}");
        assert!(text.contains("string"), "{text}");
    }
}
