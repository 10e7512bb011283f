//! Options deserialized from the `INFRA` table in place, without copying it: every start
//! deserializes every instance's options, and the copy was most of the cost (a string and a
//! tree node per key).
//!
//! It answers as `toml::Value`'s own deserializer does for what options hold (booleans,
//! integers, floats, strings, arrays, tables, enums written as a string); for anything else (a
//! datetime, an enum written as a table, a 128-bit integer) and for every error it gives up, and the caller
//! deserializes a copy with `toml`'s own deserializer, so that behaviour and error messages are
//! `toml`'s in every case.

use serde::de::value::{Error, SeqDeserializer};
use serde::de::{self, DeserializeSeed, Error as _, IntoDeserializer, MapAccess, Visitor};

/// A `toml::Value`, or an options table, deserialized where it is.
#[derive(Clone, Copy)]
pub(super) enum InPlace<'a> {
    Value(&'a toml::Value),
    Table(&'a toml::Table),
}

/// The table's entries as a map, checked to be read to the end.
fn table<'de, V: Visitor<'de>>(table: &toml::Table, visitor: V) -> Result<V::Value, Error> {
    let mut map = Entries {
        entries: table.iter(),
        value: None,
    };
    let value = visitor.visit_map(&mut map)?;
    match map.entries.len() {
        0 => Ok(value),
        // As `toml` answers: an error, so the caller asks `toml`.
        _ => Err(Error::custom("entries left unread")),
    }
}

/// A table's entries, handed to a visitor. Not serde's `MapDeserializer`: a visitor that asks
/// for a value before its key gets an error here (as from `toml`), not a panic.
struct Entries<'a> {
    entries: toml::map::Iter<'a, String, toml::Value>,
    value: Option<&'a toml::Value>,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(key.as_str().into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| Error::custom("a value asked for before its key"))?;
        seed.deserialize(InPlace::Value(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

impl<'de> de::Deserializer<'de> for InPlace<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let value = match self {
            Self::Table(entries) => return table(entries, visitor),
            Self::Value(value) => value,
        };
        match value {
            toml::Value::Boolean(v) => visitor.visit_bool(*v),
            toml::Value::Integer(n) => visitor.visit_i64(*n),
            toml::Value::Float(n) => visitor.visit_f64(*n),
            // Not `visit_borrowed_str`: options are `DeserializeOwned`, as with the copy.
            toml::Value::String(v) => visitor.visit_str(v),
            toml::Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.iter().map(InPlace::Value));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            toml::Value::Table(entries) => table(entries, visitor),
            // `toml` has its own representation for these: left to it.
            toml::Value::Datetime(_) => Err(Error::custom("a datetime: deserialized by toml")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Self::Value(toml::Value::String(variant)) => {
                visitor.visit_enum(variant.as_str().into_deserializer())
            }
            _ => Err(Error::custom(
                "an enum not written as a string: deserialized by toml",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl IntoDeserializer<'_, Error> for InPlace<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde::de::DeserializeOwned;

    /// What `toml` makes of `text` as `O`, from a copy, and what the in-place deserializer
    /// makes of it: the same, or the latter gave up.
    fn both<O: DeserializeOwned>(text: &str) -> (Option<O>, Option<O>) {
        let table: toml::Table = text.parse().unwrap();
        let owned = O::deserialize(table.clone()).ok();
        let in_place = O::deserialize(super::InPlace::Table(&table)).ok();
        (owned, in_place)
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Safe,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Options {
        capacity: u32,
        #[serde(default)]
        ratio: Option<f64>,
        name: String,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        tls: Option<Tls>,
        mode: Mode,
        #[serde(default)]
        extra: BTreeMap<String, i64>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Tls {
        verify: bool,
    }

    #[test]
    fn what_options_hold_deserializes_as_toml_makes_it() {
        let text = "capacity = 10\nratio = 0.5\nname = \"a\"\ntags = [\"x\", \"y\"]\n\
                    mode = \"safe\"\n[tls]\nverify = true\n[extra]\nb = 2\na = 1\n";
        let (owned, in_place) = both::<Options>(text);
        assert!(owned.is_some());
        assert_eq!(in_place, owned);
    }

    /// Errors (wrong type, out of range, unknown key) and what it leaves to `toml` (a
    /// datetime, an enum written as a table) give up, so the caller asks `toml`.
    #[derive(Debug, PartialEq, Deserialize)]
    struct When {
        at: toml::value::Datetime,
    }

    #[test]
    fn errors_and_what_toml_represents_its_own_way_give_up() {
        for text in [
            "capacity = -1\nname = \"a\"\nmode = \"fast\"",
            "capacity = 1\nname = 2\nmode = \"fast\"",
            "capacity = 1\nname = \"a\"\nmode = \"fast\"\ncapcity = 3",
            "capacity = 1\nname = \"a\"\nmode = { fast = {} }",
            "capacity = 1\nname = \"a\"\nmode = \"fast\"\n[tls]\nverify = 1979-05-27",
        ] {
            assert!(both::<Options>(text).1.is_none(), "{text}");
        }
        let (owned, in_place) = both::<When>("at = 1979-05-27T07:32:00Z");
        assert!(owned.is_some() && in_place.is_none());
        // `toml` refuses 128-bit integers (serde's default answer); so must this.
        let (owned, in_place) = both::<Wide>("a = 5\nb = -3");
        assert!(owned.is_none() && in_place.is_none());
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Wide {
        a: u128,
        b: i128,
    }

    /// A visitor that asks for a value before its key gets an error, not a panic.
    #[test]
    fn a_value_before_its_key_is_an_error() {
        struct ValueFirst;
        impl<'de> serde::de::Visitor<'de> for ValueFirst {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                map.next_value::<i64>().map(drop)
            }
        }
        let table: toml::Table = "a = 1".parse().unwrap();
        let result =
            serde::Deserializer::deserialize_map(super::InPlace::Table(&table), ValueFirst);
        assert!(result.is_err());
    }
}
