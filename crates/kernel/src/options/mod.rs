//! A driver's options as written in `INFRA`, and what goes wrong deserializing them.

use std::fmt;

use serde::de::DeserializeOwned;

mod borrowed;
mod probe;

pub use probe::accepts_unknown_keys;

/// The options of one configured instance: every key of its `INFRA` table except `driver`.
///
/// Drivers never see this type: `sandloom-driverkit` deserializes it into the driver's own
/// `Options` type, which refuses unknown fields.
///
/// ```
/// use sandloom_kernel::RawOptions;
/// #[derive(Debug, serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Opts { capacity: u64 }
///
/// let raw: RawOptions = "capacity = 10".parse().unwrap();
/// assert_eq!(raw.deserialize::<Opts>().unwrap().capacity, 10);
///
/// let typo: RawOptions = "capcity = 10".parse().unwrap();
/// let err = typo.deserialize::<Opts>().unwrap_err();
/// assert_eq!(err.suggestion(), Some("capacity"));
/// ```
#[derive(Clone, Default, PartialEq)]
pub struct RawOptions(pub(crate) toml::Table);

impl RawOptions {
    /// Deserialize into a driver's typed options.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Options { capacity: u64, #[serde(default)] tls: Tls }
    /// #[derive(Debug, Default, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Tls { verify: bool }
    ///
    /// let raw: RawOptions = "capacity = 10\n[tls]\nverify = true".parse().unwrap();
    /// let options: Options = raw.deserialize().unwrap();
    /// assert_eq!(options.capacity, 10);
    /// assert!(options.tls.verify);
    ///
    /// let raw: RawOptions = "capacity = 10\n[tls]\nverify = \"yes\"".parse().unwrap();
    /// let err = raw.deserialize::<Options>().unwrap_err();
    /// assert_eq!(err.to_string(), "option `tls.verify`: invalid type: a string, expected a boolean");
    /// ```
    ///
    /// # Errors
    /// An [`OptionsError`] naming the key path, with a "did you mean" for an unknown key.
    pub fn deserialize<O: DeserializeOwned>(&self) -> Result<O, OptionsError> {
        // In place first (no copy of the table; see `borrowed`). Tracking the key path costs an
        // allocation per key read, and only an error reads it: options that deserialize
        // (nearly all) skip it; an error is deserialized again, by `toml`, with it.
        O::deserialize(borrowed::InPlace::Table(&self.0))
            .or_else(|_| O::deserialize(self.0.clone()))
            .or_else(|_| self.deserialize_with_path())
    }

    fn deserialize_with_path<O: DeserializeOwned>(&self) -> Result<O, OptionsError> {
        serde_path_to_error::deserialize(self.0.clone()).map_err(|err| {
            let path: Vec<String> = err
                .path()
                .iter()
                .filter_map(|segment| match segment {
                    serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                    serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                    _ => None,
                })
                .collect();
            OptionsError::from_message(path, err.inner().message())
        })
    }

    /// The option keys, sorted.
    ///
    /// ```
    /// let raw: sandloom_kernel::RawOptions = "b = 1\na = 2".parse().unwrap();
    /// assert_eq!(raw.keys().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    pub(crate) fn is_str(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(toml::Value::is_str)
    }

    pub(crate) fn remove(&mut self, key: &str) -> bool {
        self.0.remove(key).is_some()
    }

    pub(crate) fn set_str(&mut self, key: &str, value: &str) {
        self.0
            .insert(key.to_owned(), toml::Value::String(value.to_owned()));
    }

    /// Whether there are no options.
    ///
    /// ```
    /// assert!(sandloom_kernel::RawOptions::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::str::FromStr for RawOptions {
    type Err = toml::de::Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<toml::Table>().map(Self)
    }
}

// Option values may be secrets: show keys only.
impl fmt::Debug for RawOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// Options did not deserialize.
///
/// ```
/// use sandloom_kernel::RawOptions;
/// #[derive(Debug, serde::Deserialize)]
/// struct Opts { #[allow(dead_code)] port: u16 }
/// let raw: RawOptions = "port = \"secret-ish\"".parse().unwrap();
/// let err = raw.deserialize::<Opts>().unwrap_err();
/// assert_eq!(err.path(), ["port"]);
/// assert!(!err.to_string().contains("secret-ish"), "string values are redacted");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsError {
    path: Vec<String>,
    message: String,
    unknown_field: Option<String>,
    suggestion: Option<String>,
    /// The driver's own `validate` refused the value (not serde, reading it).
    refused_by_driver: bool,
}

impl OptionsError {
    /// An error at `path` with `message` (as serde wrote it; values of any type are redacted).
    ///
    /// ```
    /// let e = sandloom_kernel::OptionsError::from_message(vec![], "unknown field `tll`, expected `ttl` or `capacity`");
    /// assert_eq!(e.unknown_field(), Some("tll"));
    /// assert_eq!(e.suggestion(), Some("ttl"));
    /// ```
    pub fn from_message(path: Vec<String>, message: &str) -> Self {
        let (unknown_field, suggestion) = match parse_unknown_field(message) {
            Some((field, expected)) => {
                let suggestion =
                    crate::suggest::closest(&field, expected.iter().map(String::as_str))
                        .map(str::to_owned);
                (Some(field), suggestion)
            }
            None => (None, None),
        };
        Self {
            path,
            message: redact_values(message),
            unknown_field,
            suggestion,
            refused_by_driver: false,
        }
    }

    /// A value the driver's `validate` refused, at `path` (empty when the driver names no
    /// option). Used by driverkit.
    #[doc(hidden)]
    #[must_use]
    pub fn refused_by_driver(path: Vec<String>, message: &str) -> Self {
        Self {
            refused_by_driver: true,
            ..Self::from_message(path, message)
        }
    }

    /// Whether the driver's `validate` refused the value, as opposed to serde reading it.
    pub(crate) fn is_refused_by_driver(&self) -> bool {
        self.refused_by_driver
    }

    /// The key path of the failing value, outermost first (empty for the table itself). For an
    /// unknown key, the path ends with that key.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Options { #[allow(dead_code)] retry: Retry }
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Retry { #[allow(dead_code)] attempts: u32 }
    ///
    /// let raw: RawOptions = "retry = { attempts = -1 }".parse().unwrap();
    /// assert_eq!(raw.deserialize::<Options>().unwrap_err().path(), ["retry", "attempts"]);
    /// ```
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The message, with values of any type redacted.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Options { #[allow(dead_code)] port: u16 }
    ///
    /// let raw: RawOptions = "port = \"hunter2\"".parse().unwrap();
    /// let err = raw.deserialize::<Options>().unwrap_err();
    /// assert_eq!(err.message(), "invalid type: a string, expected u16");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The unknown key, when that is the problem.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Options { #[allow(dead_code)] capacity: Option<u64> }
    ///
    /// let raw: RawOptions = "size = 10".parse().unwrap();
    /// assert_eq!(raw.deserialize::<Options>().unwrap_err().unknown_field(), Some("size"));
    /// ```
    pub fn unknown_field(&self) -> Option<&str> {
        self.unknown_field.as_deref()
    }

    /// The known key closest to the unknown one, when one is close.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Options { #[allow(dead_code)] capacity: Option<u64> }
    ///
    /// let typo: RawOptions = "capcity = 10".parse().unwrap();
    /// assert_eq!(typo.deserialize::<Options>().unwrap_err().suggestion(), Some("capacity"));
    /// let unrelated: RawOptions = "colour = 1".parse().unwrap();
    /// assert_eq!(unrelated.deserialize::<Options>().unwrap_err().suggestion(), None);
    /// ```
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }

    /// The key path the error is about: the unknown key itself when that is the problem.
    pub(crate) fn key_path(&self) -> Vec<String> {
        let mut path = self.path.clone();
        if let Some(field) = &self.unknown_field {
            path.push(field.clone());
        }
        path
    }
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "option `{}`: ", self.path.join("."))?;
        }
        f.write_str(&self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " (did you mean `{suggestion}`?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for OptionsError {}

// serde's `Error::unknown_field` writes "unknown field `x`, expected `a` or `b`",
// "expected one of `a`, `b`, `c`" or "there are no fields"; a test pins that format.
fn parse_unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    Some((field.to_owned(), expected))
}

// serde writes `invalid type: string "value"` or `invalid value: integer `918273645``; any value
// may be a password (one written unquoted is an integer), so never echo one, whatever its type.
fn redact_values(message: &str) -> String {
    // (what serde writes before the value, the value's closing quote, what we write instead)
    const VALUES: [(&str, char, &str); 5] = [
        ("string \"", '"', "a string"),
        ("integer `", '`', "an integer"),
        ("floating point `", '`', "a floating point number"),
        ("boolean `", '`', "a boolean"),
        ("character `", '`', "a character"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some((start, (opening, closing, replacement))) = VALUES
        .iter()
        .filter_map(|value| rest.find(value.0).map(|at| (at, value)))
        .min_by_key(|(at, _)| *at)
    {
        let value_start = start + opening.len();
        out.push_str(&rest[..start]);
        out.push_str(replacement);
        match closing_quote(&rest[value_start..], *closing) {
            Some(end) => rest = &rest[value_start + end + closing.len_utf8()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where `closing` ends a value that serde quoted; a string is written with `Debug`, so `\"`
/// inside it is not the end.
fn closing_quote(value: &str, closing: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if closing == '"' => escaped = true,
            _ if c == closing => return Some(at),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Two {
        capacity: u64,
        ttl_ms: u64,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Three {
        capacity: u64,
        ttl_ms: u64,
        root: String,
    }

    #[test]
    fn serde_unknown_field_format_is_the_one_we_parse() {
        let raw: RawOptions = "capcity = 1".parse().unwrap();
        let err = raw.deserialize::<Two>().unwrap_err();
        assert_eq!(err.unknown_field(), Some("capcity"));
        assert_eq!(err.suggestion(), Some("capacity"));
        let err = raw.deserialize::<Three>().unwrap_err();
        assert_eq!(err.suggestion(), Some("capacity"));
        assert!(
            err.to_string().contains("did you mean `capacity`?"),
            "{err}"
        );
    }

    #[test]
    fn far_off_key_gets_no_suggestion() {
        let raw: RawOptions = "zzzzzzzz = 1".parse().unwrap();
        let err = raw.deserialize::<Two>().unwrap_err();
        assert_eq!(err.unknown_field(), Some("zzzzzzzz"));
        assert_eq!(err.suggestion(), None);
    }

    #[test]
    fn values_of_every_type_are_redacted() {
        for (serde_wrote, shown) in [
            (
                r#"invalid type: string "hunter2", expected u64"#,
                "invalid type: a string, expected u64",
            ),
            (
                "invalid type: integer `918273645`, expected a string",
                "invalid type: an integer, expected a string",
            ),
            (
                "invalid value: integer `-1`, expected u64",
                "invalid value: an integer, expected u64",
            ),
            (
                "invalid type: floating point `9182.73645`, expected a string",
                "invalid type: a floating point number, expected a string",
            ),
            (
                "invalid type: boolean `true`, expected a string",
                "invalid type: a boolean, expected a string",
            ),
            (
                "invalid type: character `x`, expected u8",
                "invalid type: a character, expected u8",
            ),
            (
                r#"invalid type: integer `1`, expected `a` or string "b`c""#,
                "invalid type: an integer, expected `a` or a string",
            ),
            (
                r#"invalid type: string "pa\"ss\\", expected u64"#,
                "invalid type: a string, expected u64",
            ),
            // Field names in backticks are not values.
            (
                "unknown field `tll`, expected `ttl` or `capacity`",
                "unknown field `tll`, expected `ttl` or `capacity`",
            ),
        ] {
            assert_eq!(redact_values(serde_wrote), shown);
        }
    }

    #[test]
    fn an_unquoted_numeric_password_is_not_echoed() {
        // Issue 25: `password = 918273645` was echoed in B022.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Opts {
            password: String,
        }
        let raw: RawOptions = "password = 918273645".parse().unwrap();
        let err = raw.deserialize::<Opts>().unwrap_err();
        assert!(!err.to_string().contains("918273645"), "{err}");
        assert!(!format!("{err:?}").contains("918273645"), "{err:?}");
        assert_eq!(err.path(), ["password"]);
    }
}
