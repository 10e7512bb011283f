//! What the KV version 2 API answers, read without keeping more of a value than needed: a
//! KV entry's string fields are held in memory that is cleared when dropped, and only the
//! configured field is decoded.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::SystemTime;

use base64::Engine as _;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{NAME, too_large};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use zeroize::Zeroizing;

/// The field beside the value that says how it is encoded: absent (the value is UTF-8 text)
/// or `"base64"` (the value is standard base64, with padding, of any bytes).
///
/// ```
/// assert_eq!(sandloom_driver_vault::ENCODING_FIELD, "encoding");
/// ```
pub const ENCODING_FIELD: &str = "encoding";
/// The only `encoding` there is besides text: `{"value": "AP+A", "encoding": "base64"}` holds
/// the bytes `[0, 255, 128]`.
///
/// ```
/// assert_eq!(sandloom_driver_vault::BASE64, "base64");
/// ```
pub const BASE64: &str = "base64";

/// One field of a KV entry: text (kept in memory that is cleared), or another JSON type.
enum Field {
    Text(Zeroizing<String>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Field, E> {
                Ok(Field::Text(Zeroizing::new(text.to_owned())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Field, E> {
                Ok(Field::Text(Zeroizing::new(text)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Field, E> {
                Ok(Field::Other("a boolean"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Field, E> {
                Ok(Field::Other("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Field, E> {
                Ok(Field::Other("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Field, E> {
                Ok(Field::Other("a number"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Field, E> {
                Ok(Field::Other("null"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Field::Other("an array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Field::Other("an object"))
            }
        }
        deserializer.deserialize_any(FieldVisitor)
    }
}

/// `{"data": {"data": {…entry…}, "metadata": {…}}}`, the answer of a KV v2 read.
#[derive(Deserialize)]
struct ReadAnswer {
    data: Option<ReadData>,
}

#[derive(Deserialize)]
struct ReadData {
    data: Option<BTreeMap<String, Field>>,
}

/// The value of the secret `name` in the body of a KV v2 read: the text of `field`, or the
/// bytes it encodes in base64 when the entry's `encoding` is `"base64"`. `Ok(None)` when the
/// entry holds no data (a deleted version). Never shows the value.
pub(crate) fn value(
    body: &[u8],
    name: &str,
    field: &str,
    limit: usize,
) -> InfraResult<Option<Secret<Vec<u8>>>> {
    let answer: ReadAnswer = serde_json::from_slice(body).map_err(|e| {
        unreadable(
            name,
            &format!(
                "the answer is not a KV version 2 read ({})",
                e.classify_text()
            ),
        )
    })?;
    let Some(entry) = answer.data.and_then(|data| data.data) else {
        return Ok(None);
    };
    let text = match entry.get(field) {
        Some(Field::Text(text)) => text,
        Some(Field::Other(kind)) => {
            return Err(unreadable(
                name,
                &format!("its field `{field}` is {kind}, not a string"),
            ));
        }
        None => {
            return Err(unreadable(
                name,
                &format!(
                    "its entry has no field `{field}` (the option `field` names the one that \
                     holds the value)"
                ),
            ));
        }
    };
    match entry.get(ENCODING_FIELD) {
        None => {
            if text.len() > limit {
                return Err(too_large(name, text.len() as u64, limit));
            }
            Ok(Some(Secret::new(text.as_bytes().to_vec())))
        }
        Some(Field::Text(encoding)) if encoding.as_str() == BASE64 => {
            let size = decoded_size(text);
            if size > limit {
                return Err(too_large(name, size as u64, limit));
            }
            let mut bytes = Vec::with_capacity(size);
            base64::engine::general_purpose::STANDARD
                .decode_vec(text.as_bytes(), &mut bytes)
                .map_err(|_| {
                    // The decoder's message can quote a byte of the value: not shown.
                    zeroize::Zeroize::zeroize(&mut bytes);
                    unreadable(
                        name,
                        &format!("its field `{field}` is not valid base64 (standard, padded)"),
                    )
                })?;
            Ok(Some(Secret::new(bytes)))
        }
        Some(_) => Err(unreadable(
            name,
            &format!(
                "its field `{ENCODING_FIELD}` must be absent (text) or \"{BASE64}\"; the driver \
                 reads no other encoding"
            ),
        )),
    }
}

/// The size of what base64 `text` decodes to, without decoding it.
fn decoded_size(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (text.len() / 4 * 3).saturating_sub(padding) + (text.len() % 4 * 3 / 4)
}

/// The secret `name` holds what the driver cannot read as a value: `Backend`.
fn unreadable(name: &str, why: &str) -> InfraError {
    InfraError::new(
        ErrorKind::Backend,
        NAME,
        format!("secrets.vault cannot read secret {name:?}: {why}"),
    )
}

/// Where `serde_json`'s error is, without its text (which may quote the document).
trait Classify {
    fn classify_text(&self) -> String;
}

impl Classify for serde_json::Error {
    fn classify_text(&self) -> String {
        format!(
            "{:?} error at line {} column {}",
            self.classify(),
            self.line(),
            self.column()
        )
    }
}

/// The metadata of a KV v2 entry, as far as the driver uses it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub(crate) struct Metadata {
    pub(crate) current_version: u64,
    #[serde(default)]
    pub(crate) updated_time: String,
    #[serde(default)]
    pub(crate) versions: HashMap<String, VersionState>,
}

/// One version's state in the metadata.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub(crate) struct VersionState {
    /// When the version was (or will be) deleted, RFC 3339; empty when it is not.
    #[serde(default)]
    pub(crate) deletion_time: String,
    #[serde(default)]
    pub(crate) destroyed: bool,
}

impl VersionState {
    /// Whether the version can no longer be read: destroyed, or deleted at a time now past.
    pub(crate) fn gone(&self) -> bool {
        self.destroyed
            || (!self.deletion_time.is_empty()
                && humantime::parse_rfc3339_weak(self.deletion_time.trim_end_matches('Z'))
                    .map_or(true, |at| at <= SystemTime::now()))
    }
}

impl Metadata {
    /// The current version, when it can be read.
    pub(crate) fn live_version(&self) -> Option<u64> {
        let current = self.current_version;
        let state = self.versions.get(&current.to_string());
        (current > 0 && !state.is_some_and(VersionState::gone)).then_some(current)
    }
}

#[derive(Deserialize)]
struct MetadataAnswer {
    data: Metadata,
}

/// The metadata in the body of a metadata read.
pub(crate) fn metadata(body: &[u8], name: &str) -> InfraResult<Metadata> {
    serde_json::from_slice::<MetadataAnswer>(body)
        .map(|answer| answer.data)
        .map_err(|e| {
            unreadable(
                name,
                &format!("its metadata is not KV version 2's ({})", e.classify_text()),
            )
        })
}

/// The keys of a LIST answer: names, and folders ending in `/`.
pub(crate) fn keys(body: &[u8], path: &str) -> InfraResult<Vec<String>> {
    #[derive(Deserialize)]
    struct ListAnswer {
        data: ListData,
    }
    #[derive(Deserialize)]
    struct ListData {
        #[serde(default)]
        keys: Vec<String>,
    }
    serde_json::from_slice::<ListAnswer>(body)
        .map(|answer| answer.data.keys)
        .map_err(|e| {
            InfraError::new(
                ErrorKind::Backend,
                NAME,
                format!(
                    "secrets.vault: the list of {path} is not KV version 2's ({})",
                    e.classify_text()
                ),
            )
        })
}

/// What `sys/internal/ui/mounts/<mount>` says of a mount: its path, type and KV version.
#[derive(Debug, Deserialize)]
pub(crate) struct Mount {
    #[serde(default)]
    pub(crate) path: String,
    #[serde(rename = "type", default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) options: Option<HashMap<String, String>>,
}

/// The mount in the body of a `sys/internal/ui/mounts/<mount>` answer.
pub(crate) fn mount(body: &[u8]) -> Option<Mount> {
    #[derive(Deserialize)]
    struct MountAnswer {
        data: Mount,
    }
    serde_json::from_slice::<MountAnswer>(body)
        .ok()
        .map(|answer| answer.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(entry: &str) -> String {
        format!(r#"{{"data":{{"data":{entry},"metadata":{{"version":3}}}}}}"#)
    }

    #[test]
    fn text_and_base64_values_are_read_and_others_refused_without_showing_them() {
        let value = |entry: &str| value(read(entry).as_bytes(), "db/password", "value", 16);
        let text = value(r#"{"value":"s3cr3t\n","user":"app"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(text.expose(), b"s3cr3t\n");
        let binary = value(r#"{"value":"AP+A","encoding":"base64"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(binary.expose(), &[0, 255, 128]);
        assert!(value("null").unwrap().is_none());
        for (entry, says) in [
            (r#"{"other":"s3cr3t"}"#, "no field `value`"),
            (r#"{"value":12345}"#, "a number"),
            (r#"{"value":{"s3cr3t":1}}"#, "an object"),
            (r#"{"value":"s3cr3t","encoding":"hex"}"#, "\"base64\""),
            (
                r#"{"value":"s3cr3t!!","encoding":"base64"}"#,
                "not valid base64",
            ),
            (r#"{"value":"0123456789abcdefX"}"#, "17 bytes"),
            (
                r#"{"value":"AAAAAAAAAAAAAAAAAAAAAAAA","encoding":"base64"}"#,
                "18 bytes",
            ),
        ] {
            let err = value(entry).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Backend, "{entry}");
            assert!(err.message().contains(says), "{entry}: {err}");
            assert!(err.message().contains("db/password"), "{err}");
            assert!(
                !err.message().contains("s3cr3t") && !err.message().contains("0123"),
                "{err}"
            );
        }
        let broken = super::value(b"{\"data\": \"s3cr3t", "n", "value", 16).unwrap_err();
        assert!(!broken.message().contains("s3cr3t"), "{broken}");
    }

    #[test]
    fn decoded_sizes_are_exact() {
        for len in 0..40 {
            let bytes = vec![7_u8; len];
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
            assert_eq!(decoded_size(&text), len, "{text}");
        }
    }

    #[test]
    fn deleted_and_destroyed_versions_are_gone() {
        let live = VersionState::default();
        assert!(!live.gone());
        let destroyed = VersionState {
            destroyed: true,
            ..VersionState::default()
        };
        assert!(destroyed.gone());
        let past = VersionState {
            deletion_time: "2020-01-01T00:00:00.123456Z".into(),
            destroyed: false,
        };
        assert!(past.gone());
        let future = VersionState {
            deletion_time: "2999-01-01T00:00:00Z".into(),
            destroyed: false,
        };
        assert!(!future.gone());
    }
}
