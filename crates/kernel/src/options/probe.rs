//! Whether a driver's options type accepts keys it does not know (SANDLOOM-B022 when it does: a
//! misspelt option would be ignored silently).
//!
//! serde has no way to ask a type whether it denies unknown fields, so the kernel asks the type
//! by deserializing: it offers a key no options type knows and watches what happens. Offered the
//! instance's real options plus that key, the answer costs a second deserialization and, for a
//! type that refuses (every well-written driver), the formatting of serde's "unknown field,
//! expected one of …" message and a "did you mean" search over the fields: together most of a
//! resolution (`BENCHMARKS.md`). So the common answer is first asked of a deserializer of its
//! own: the table `{ "" = "" }`, whose error type records *that* the key was refused instead of
//! formatting a message. A type that refuses the key there refuses it anywhere; only a type that
//! did not (lenient, or one this cannot tell, such as an untagged enum) is asked again with the
//! real options, as before.

use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};

use super::RawOptions;

/// A key no options type knows: no Rust field is named so, and it sorts first, so a type
/// refusing unknown keys fails on it before reading the others.
const PROBE_KEY: &str = "";

/// Whether options type `O` accepts a key it does not know, given the instance's `options`
/// (which `O` already deserialized). The kernel calls this through
/// `DriverEntry::accepts_unknown_keys`; `sandloom-driverkit`'s `register_driver!` fills it in.
///
/// ```
/// use sandloom_kernel::{RawOptions, registry::accepts_unknown_keys};
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Strict { #[allow(dead_code)] capacity: u64 }
///
/// #[derive(serde::Deserialize)]
/// struct Lenient { #[allow(dead_code)] capacity: u64 }
///
/// let options: RawOptions = "capacity = 10".parse().unwrap();
/// assert!(!accepts_unknown_keys::<Strict>(&options));
/// assert!(accepts_unknown_keys::<Lenient>(&options));
/// ```
#[doc(hidden)]
pub fn accepts_unknown_keys<O: DeserializeOwned>(options: &RawOptions) -> bool {
    if let Err(Refusal::UnknownKey) = O::deserialize(OneUnknownKey) {
        return false;
    }
    let mut probe = options.clone();
    probe.set_str(PROBE_KEY, "");
    O::deserialize(probe.0).is_ok()
}

/// Deserializes as the table `{ "" = "" }` and nothing else.
struct OneUnknownKey;

/// Why the table was refused. Never formatted: that is the point.
#[derive(Debug)]
enum Refusal {
    /// The type refused the probe key as unknown.
    UnknownKey,
    /// Anything else (a missing field, a wrong type): this deserializer cannot tell.
    Other,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnknownKey => "the probe key was refused as unknown",
            Self::Other => "the probe table was refused",
        })
    }
}

impl std::error::Error for Refusal {}

impl de::Error for Refusal {
    fn custom<T: fmt::Display>(_message: T) -> Self {
        Self::Other
    }

    fn unknown_field(field: &str, _expected: &'static [&'static str]) -> Self {
        if field == PROBE_KEY {
            Self::UnknownKey
        } else {
            Self::Other
        }
    }
}

impl<'de> de::Deserializer<'de> for OneUnknownKey {
    type Error = Refusal;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        visitor.visit_map(Entry { read: false })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// The one entry of the probe table.
struct Entry {
    read: bool,
}

impl<'de> MapAccess<'de> for Entry {
    type Error = Refusal;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refusal> {
        if std::mem::replace(&mut self.read, true) {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(PROBE_KEY))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Refusal> {
        seed.deserialize(BorrowedStrDeserializer::new(""))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(!self.read))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        capacity: u64,
    }

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct StrictEmpty {}

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields, default)]
    #[derive(Default)]
    #[allow(dead_code)]
    struct StrictDefaults {
        capacity: u64,
        tls: Option<String>,
    }

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Lenient {
        capacity: u64,
    }

    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    #[allow(dead_code)]
    struct LenientDefaults {
        capacity: u64,
    }

    #[derive(serde::Deserialize)]
    #[serde(tag = "mode", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Tagged {
        Plain { port: u16 },
    }

    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Untagged {
        Strict(Strict),
        Lenient(Lenient),
    }

    fn options(text: &str) -> RawOptions {
        text.parse().unwrap()
    }

    #[test]
    fn the_probe_alone_answers_for_types_that_refuse_unknown_keys() {
        assert!(matches!(
            Strict::deserialize(OneUnknownKey),
            Err(Refusal::UnknownKey)
        ));
        assert!(matches!(
            StrictEmpty::deserialize(OneUnknownKey),
            Err(Refusal::UnknownKey)
        ));
        assert!(matches!(
            StrictDefaults::deserialize(OneUnknownKey),
            Err(Refusal::UnknownKey)
        ));
        assert!(!accepts_unknown_keys::<Strict>(&options("capacity = 1")));
        assert!(!accepts_unknown_keys::<StrictEmpty>(&options("")));
        assert!(!accepts_unknown_keys::<StrictDefaults>(&options("")));
    }

    #[test]
    fn lenient_types_are_found_with_or_without_their_required_fields() {
        assert!(matches!(
            Lenient::deserialize(OneUnknownKey),
            Err(Refusal::Other)
        ));
        assert!(LenientDefaults::deserialize(OneUnknownKey).is_ok());
        assert!(accepts_unknown_keys::<Lenient>(&options("capacity = 1")));
        assert!(accepts_unknown_keys::<LenientDefaults>(&options("")));
        assert!(accepts_unknown_keys::<BTreeMap<String, String>>(&options(
            "a = \"b\""
        )));
    }

    #[test]
    fn types_the_probe_cannot_tell_are_asked_with_the_real_options() {
        // A tagged enum looks for its tag first: the probe cannot tell, the real options can.
        assert!(matches!(
            Tagged::deserialize(OneUnknownKey),
            Err(Refusal::Other)
        ));
        assert!(!accepts_unknown_keys::<Tagged>(&options(
            "mode = \"Plain\"\nport = 1"
        )));
        // An untagged enum with a lenient variant accepts the key.
        assert!(accepts_unknown_keys::<Untagged>(&options("capacity = 1")));
    }

    #[test]
    fn a_refusal_is_never_formatted_but_reads_plainly_if_it_is() {
        assert_eq!(
            Refusal::UnknownKey.to_string(),
            "the probe key was refused as unknown"
        );
        assert!(matches!(
            <Refusal as de::Error>::unknown_field("other", &[]),
            Refusal::Other
        ));
    }
}
