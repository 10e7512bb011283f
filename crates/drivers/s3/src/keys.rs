//! Object keys to `object_store` paths and back, one to one.
//!
//! A key is stored as the S3 key `{prefix}{key}`. `object_store::path::Path::parse` keeps a
//! valid string as it is (no percent-decoding, no re-encoding: `%20` stays three characters),
//! and the client percent-encodes every reserved byte when it builds the request URL, so any
//! key that [`validate_key`] accepts and that holds no control character maps to exactly one S3
//! key and back. Control characters (`\n`, `\t`, …) are refused with `InvalidInput`: `Path`
//! cannot hold them, and listings could not report them. Every operation checks keys through
//! [`KeySpace::path`], so they all refuse the same keys; a list prefix is refused when no key
//! that check accepts starts with it.

use object_store::path::Path;
use sandloom_driverkit::objectstore::{NAME, validate_key, validate_prefix};
use sandloom_driverkit::sdk::{InfraError, InfraResult};

/// The longest S3 key, in bytes.
pub(crate) const MAX_KEY_BYTES: usize = 1024;

/// The keys of one store: all under one prefix of the bucket.
#[derive(Debug, Clone)]
pub(crate) struct KeySpace {
    /// `""`, or a namespace ending in `/`.
    prefix: String,
}

impl KeySpace {
    pub(crate) fn new(prefix: String) -> Self {
        Self { prefix }
    }

    /// The S3 path of `key`, or `InvalidInput` for a key that breaks the key rule or cannot be
    /// stored exactly.
    pub(crate) fn path(&self, key: &str) -> InfraResult<Path> {
        validate_key(key)?;
        if key.chars().any(char::is_control) {
            return Err(InfraError::invalid_input(
                NAME,
                format!("object key {key:?} holds a control character, which S3 keys cannot hold"),
            ));
        }
        let full = format!("{}{key}", self.prefix);
        if full.len() > MAX_KEY_BYTES {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "object key {key:?} is {} bytes long with the store's prefix; S3 keys have \
                     at most {MAX_KEY_BYTES}",
                    full.len()
                ),
            ));
        }
        match Path::parse(&full) {
            Ok(path) if path.as_ref() == full => Ok(path),
            _ => Err(InfraError::invalid_input(
                NAME,
                format!("object key {key:?} cannot be stored exactly as an S3 key"),
            )),
        }
    }

    /// The S3 key prefix of a listing of `prefix`, or `InvalidInput` when no key this store
    /// accepts starts with it: one [`validate_prefix`] refuses, or one that neither is a key
    /// [`Self::path`] accepts nor becomes one with one more character (a control character,
    /// too long with the store's prefix).
    pub(crate) fn list_prefix(&self, prefix: &str) -> InfraResult<String> {
        validate_prefix(prefix)?;
        if !prefix.is_empty() && self.path(prefix).is_err() {
            self.path(&format!("{prefix}x")).map_err(|err| {
                InfraError::invalid_input(
                    NAME,
                    format!(
                        "no key this store accepts starts with the list prefix {prefix:?}: {}",
                        err.message()
                    ),
                )
            })?;
        }
        Ok(format!("{}{prefix}", self.prefix))
    }

    /// The S3 key to start a listing after, for the store's key `after`.
    pub(crate) fn start_after(&self, after: &str) -> String {
        format!("{}{after}", self.prefix)
    }

    /// The store's key of a listed S3 path; `None` for one outside the prefix.
    pub(crate) fn key_of<'a>(&self, path: &'a Path) -> Option<&'a str> {
        path.as_ref()
            .strip_prefix(self.prefix.as_str())
            .filter(|key| !key.is_empty())
    }

    /// The prefix, for a listing that only checks the bucket answers.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandloom_driverkit::sdk::ErrorKind;

    #[test]
    fn unusual_keys_map_exactly_under_the_prefix() {
        let space = KeySpace::new("ns/".into());
        for key in [
            "with space",
            "percent%20and+plus",
            "sym=&@!$'(),;~#",
            "..dots",
            ".hidden",
            "a/.../b",
            "ключ/🔑",
            "cafe\u{301}",
            "q?x*[]{}^|`<>\"",
        ] {
            let path = space.path(key).unwrap();
            assert_eq!(path.as_ref(), format!("ns/{key}"));
            assert_eq!(space.key_of(&path), Some(key));
        }
    }

    #[test]
    fn keys_that_cannot_round_trip_are_invalid_input() {
        let space = KeySpace::new(String::new());
        let long = "x".repeat(MAX_KEY_BYTES + 1);
        for key in [
            "",
            "/a",
            "a//b",
            "a/../b",
            "a\0b",
            "a\\b",
            "a/",
            "line\nbreak",
            "tab\t",
            &long,
        ] {
            let err = space.path(key).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{key:?}");
        }
        // The longest key: 1,024 bytes, in segments of at most 255 bytes (the general rule).
        let longest = "abc/".repeat(255) + "abcd";
        assert_eq!(longest.len(), MAX_KEY_BYTES);
        assert!(space.path(&longest).is_ok());
    }

    #[test]
    fn listing_prefixes_are_plain_strings() {
        let space = KeySpace::new("ns/".into());
        assert_eq!(space.list_prefix("a/b").unwrap(), "ns/a/b");
        assert_eq!(space.list_prefix("").unwrap(), "ns/");
        assert_eq!(space.start_after("a"), "ns/a");
        assert!(space.list_prefix("a\0").is_err());
        assert_eq!(space.key_of(&Path::parse("other/x").unwrap()), None);
    }

    #[test]
    fn a_list_prefix_is_refused_when_no_key_of_the_store_starts_with_it() {
        let space = KeySpace::new("ns/".into());
        for prefix in ["", ".", "..", "a/", "a/..", "a/.", "a/b"] {
            assert!(space.list_prefix(prefix).is_ok(), "{prefix:?}");
        }
        // 1,022 bytes: a valid key, but 1,025 with the store's prefix `ns/`.
        let long = "abc/".repeat(255) + "ab";
        assert!(validate_prefix(&long).is_ok());
        for prefix in ["../", "/", "a//", "./a", "a\\", "tab\t", &long] {
            let err = space.list_prefix(prefix).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{prefix:?}");
        }
        let room = MAX_KEY_BYTES - "ns/".len();
        assert!(space.list_prefix(&long[..room]).is_ok());
        assert!(space.list_prefix(&long[..room - 1]).is_ok());
    }
}
