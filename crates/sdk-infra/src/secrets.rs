//! The `secrets` capability: secret values read by name, never shown. Contract 1.0.0, stable:
//! semver applies, as for every public capability.
//!
//! Required operation: [`get`](Secrets::get). Optional features: [`VERSIONS`]
//! ([`get_version`](Secrets::get_version), [`current_version`](Secrets::current_version)),
//! [`WATCH`] ([`changes`](Secrets::changes), the change signal) and [`LIST`]
//! ([`list`](Secrets::list), names only).
//!
//! A value comes back as a [`Secret<Vec<u8>>`](crate::Secret): bytes (binary-safe where the
//! backend allows; an environment variable cannot hold a NUL byte), redacted in `Debug` and
//! `Display`, never `Serialize`, zeroed when dropped. [`Secret::expose_str`](crate::Secret::expose_str)
//! reads it as text.
//!
//! ## Names
//!
//! One rule on every driver, checked by [`check_name`]: 1 to [`MAX_NAME_BYTES`] (256) bytes;
//! one or more segments of ASCII letters, digits, `.`, `_` and `-`, separated by single `/`;
//! no empty segment (so no leading, trailing or doubled `/`), no `.` or `..` segment. Names
//! are case-sensitive and compared byte for byte: `db/Password`, `db/password` and
//! `db_password` are three secrets. A driver that maps names onto something else (variable
//! names, file paths) documents a mapping that keeps distinct names distinct, and refuses with
//! `InvalidInput`, saying why, a valid name it cannot map.
//!
//! ## Sizes
//!
//! A value is at most [`MAX_VALUE_BYTES`] (1 MiB); a driver may declare a lower limit in its
//! options. A stored value above the driver's limit is never read: `get` answers an error of
//! kind `Backend` ([`too_large`]) naming the secret, its size and the limit.
//!
//! ## Errors
//!
//! A secret that does not exist is `NotFound`, naming the secret ([`not_found`]), never a
//! value; a backend that cannot be reached or fails is `Unavailable` or `Timeout`, never
//! `NotFound`: a module must be able to tell "no such secret" from "cannot tell now".
//!
//! ```
//! use sandloom_sdk_infra::secrets::Secrets;
//! use sandloom_sdk_infra::{ErrorKind, InfraResult};
//!
//! /// The database password, or `None` when none is stored (a local run without one).
//! async fn db_password(secrets: &dyn Secrets) -> InfraResult<Option<String>> {
//!     match secrets.get("db/password").await {
//!         Ok(value) => Ok(Some(value.expose_str().map_err(|_| {
//!             sandloom_sdk_infra::InfraError::invalid_input("secrets", "db/password is not UTF-8")
//!         })?.to_owned())),
//!         Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
//!         Err(err) => Err(err), // Unavailable, Timeout: not the same as "none"
//!     }
//! }
//! ```
//!
//! ```
//! use sandloom_sdk_infra::secrets::{FEATURES, LIST, NAME, REQUIRED_OPERATIONS, VERSIONS, WATCH};
//! use sandloom_sdk_infra::SECRETS;
//!
//! assert_eq!(NAME, SECRETS.name());
//! assert_eq!(FEATURES, [VERSIONS, WATCH, LIST]);
//! assert_eq!(REQUIRED_OPERATIONS, ["get"]);
//! ```

use crate::{ErrorKind, InfraError, InfraResult};

/// Capability name of secrets, as written in `INFRA` (`[secrets.default]`); see the
/// [module example](self).
pub const NAME: &str = "secrets";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`Secrets`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::secrets::FUTURE_BYTES, 576);
/// ```
pub const FUTURE_BYTES: usize = 576;

/// Feature: [`get_version`](Secrets::get_version) and
/// [`current_version`](Secrets::current_version). Versions are numbered 1, 2, 3… per name, as
/// Vault's KV v2 numbers them.
///
/// ```
/// use sandloom_sdk_infra::{requires, secrets, SECRETS};
/// requires!(SECRETS, features = [secrets::VERSIONS]);
/// # fn main() { assert_eq!(secrets::VERSIONS, "versions"); }
/// ```
pub const VERSIONS: &str = "versions";
/// Feature: [`changes`](Secrets::changes), the change signal.
///
/// ```
/// assert_eq!(sandloom_sdk_infra::secrets::WATCH, "watch");
/// ```
pub const WATCH: &str = "watch";
/// Feature: [`list`](Secrets::list), the names under a prefix (never values).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::secrets::LIST, "list");
/// ```
pub const LIST: &str = "list";

/// The longest name, in bytes.
///
/// ```
/// use sandloom_sdk_infra::secrets::{check_name, MAX_NAME_BYTES};
/// assert!(check_name(&"a".repeat(MAX_NAME_BYTES)).is_ok());
/// assert!(check_name(&"a".repeat(MAX_NAME_BYTES + 1)).is_err());
/// ```
pub const MAX_NAME_BYTES: usize = 256;

/// The largest value any driver reads, in bytes (1 MiB): a driver's own limit is at most this.
///
/// ```
/// assert_eq!(sandloom_sdk_infra::secrets::MAX_VALUE_BYTES, 1024 * 1024);
/// ```
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;

/// Check `name` against the one naming rule (see the [module docs](self#names)): what every
/// driver calls before it does anything with a name.
///
/// ```
/// use sandloom_sdk_infra::secrets::check_name;
/// use sandloom_sdk_infra::ErrorKind;
///
/// assert!(check_name("db/password").is_ok());
/// assert!(check_name("tls/server.key").is_ok());
/// for bad in ["", "/db", "db/", "db//password", "db/../x", "./db", "db password", "clé"] {
///     assert_eq!(check_name(bad).unwrap_err().kind(), ErrorKind::InvalidInput, "{bad:?}");
/// }
/// ```
///
/// # Errors
/// `InvalidInput` saying which part of the rule `name` breaks.
pub fn check_name(name: &str) -> InfraResult<()> {
    let refuse = |why: &str| {
        Err(InfraError::invalid_input(
            NAME,
            format!("invalid secret name {:?}: {why}", shown(name)),
        ))
    };
    if name.is_empty() {
        return refuse("a name must not be empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return refuse(&format!(
            "a name is at most {MAX_NAME_BYTES} bytes, this one is {}",
            name.len()
        ));
    }
    if let Some(bad) = name.chars().find(|&c| c != '/' && !is_name_char(c)) {
        return refuse(&format!(
            "{bad:?} is not allowed: segments are ASCII letters, digits, `.`, `_` and `-`, \
             separated by `/`"
        ));
    }
    for segment in name.split('/') {
        match segment {
            "" => {
                return refuse(
                    "empty segment: no leading, trailing or doubled `/` (segments are separated by single `/`)",
                );
            }
            "." | ".." => return refuse("`.` and `..` are not segments a name may have"),
            _ => {}
        }
    }
    Ok(())
}

/// Check a [`list`](Secrets::list) prefix: empty (every name), or at most [`MAX_NAME_BYTES`]
/// bytes of the characters names are made of (`/` included). Any such prefix is accepted, even
/// one no name starts with (`db/`, `a//`): it then lists nothing.
///
/// ```
/// use sandloom_sdk_infra::secrets::check_prefix;
/// assert!(check_prefix("").is_ok());
/// assert!(check_prefix("db/").is_ok());
/// assert!(check_prefix("db password").is_err());
/// ```
///
/// # Errors
/// `InvalidInput` for a prefix too long, or with a character no name has.
pub fn check_prefix(prefix: &str) -> InfraResult<()> {
    if prefix.len() > MAX_NAME_BYTES {
        return Err(InfraError::invalid_input(
            NAME,
            format!(
                "a list prefix is at most {MAX_NAME_BYTES} bytes, this one is {}",
                prefix.len()
            ),
        ));
    }
    if let Some(bad) = prefix.chars().find(|&c| c != '/' && !is_name_char(c)) {
        return Err(InfraError::invalid_input(
            NAME,
            format!(
                "invalid list prefix {:?}: no name has {bad:?}",
                shown(prefix)
            ),
        ));
    }
    Ok(())
}

/// Whether `c` may be part of a name's segment.
const fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// `text` cut to 300 bytes (at a character boundary), for messages.
fn shown(text: &str) -> &str {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The `NotFound` a driver answers for a secret it does not hold: it names the secret, and
/// nothing else.
///
/// ```
/// use sandloom_sdk_infra::ErrorKind;
/// let err = sandloom_sdk_infra::secrets::not_found("db/password");
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// assert_eq!(err.message(), "no secret \"db/password\"");
/// ```
#[must_use]
pub fn not_found(name: &str) -> InfraError {
    InfraError::not_found(NAME, format!("no secret {:?}", shown(name)))
}

/// The error a driver answers for a stored value of `size` bytes above its `limit`: kind
/// `Backend` (the store holds what the contract does not allow; retrying will not help),
/// naming the secret and both sizes, never the value.
///
/// ```
/// use sandloom_sdk_infra::ErrorKind;
/// let err = sandloom_sdk_infra::secrets::too_large("tls/bundle", 2_000_000, 1_048_576);
/// assert_eq!(err.kind(), ErrorKind::Backend);
/// assert!(err.message().contains("2000000 bytes"));
/// ```
#[must_use]
pub fn too_large(name: &str, size: u64, limit: usize) -> InfraError {
    InfraError::new(
        ErrorKind::Backend,
        NAME,
        format!(
            "secret {:?} is {size} bytes, above this store's limit of {limit} bytes: it is not read",
            shown(name)
        ),
    )
}

/// What [`changes`](Secrets::changes) answers: the names changed after the cursor it was
/// given, and the cursor to give the next call.
///
/// ```
/// use sandloom_sdk_infra::secrets::Changes;
/// let changes = Changes::new(7, vec!["db/password".to_owned()]);
/// assert_eq!(changes.cursor, 7);
/// assert_eq!(changes.names, ["db/password"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Changes {
    /// Where the store's change history stood when the call answered; never 0.
    pub cursor: u64,
    /// The names created, changed or removed after the cursor given, sorted, each once; empty
    /// when none changed before the wait ended. When [`relisted`](Self::relisted), every name
    /// the instance holds instead.
    pub names: Vec<String>,
    /// The cursor given was issued by an instance that a reload has replaced since, so it names
    /// no position in this instance's history: `names` are every name this instance holds
    /// (sorted, each once), whether or not it changed, and `cursor` is this instance's. Read
    /// every secret you follow again (one you know that is not among `names` is gone), then
    /// go on with `cursor`. Never set on an answer to a cursor this instance issued, nor to 0.
    pub relisted: bool,
}

impl Changes {
    /// A value (drivers build these).
    ///
    /// ```
    /// let c = sandloom_sdk_infra::secrets::Changes::new(1, Vec::new());
    /// assert!(c.names.is_empty());
    /// ```
    #[must_use]
    pub fn new(cursor: u64, names: Vec<String>) -> Self {
        Self {
            cursor,
            names,
            relisted: false,
        }
    }

    /// A [`relisted`](Self::relisted) answer: `names` are every name the instance holds, and
    /// `cursor` its own (what [`rebind_changes`] answers).
    ///
    /// ```
    /// let c = sandloom_sdk_infra::secrets::Changes::relisted(3, vec!["db/password".to_owned()]);
    /// assert!(c.relisted);
    /// ```
    #[must_use]
    pub fn relisted(cursor: u64, names: Vec<String>) -> Self {
        Self {
            cursor,
            names,
            relisted: true,
        }
    }
}

/// How [`changes`](Secrets::changes) is answered when a reload sent it to another instance
/// than the one it began on (the declaration's `rebind`, see `declare.rs`; not called by
/// modules, which get it from every `secrets` handle).
///
/// A cursor belongs to the instance that issued it. Run again as-is on another instance, it
/// would name a position in another history: `InvalidInput` when that history is shorter, and
/// worse, when it is longer, a silent answer with the names changed there after that position.
/// Neither is what the caller asked, and the route cannot tell whether the new instance reads
/// the same history (a memory store shared by name, the same Vault) or another (a new file, a
/// new mount). So the answer is a relist, at once, from the instance `secrets` now serves:
/// its cursor (`changes(0, 0)`) and then every name it holds (`list("")`), marked
/// [`relisted`](Changes::relisted); a change made between the two is named by the next call
/// with that cursor too, so nothing is missed. A cursor of 0 is bound to no instance: that
/// call runs again as-is. When the new instance does not declare `list`, it cannot name what
/// it holds: the answer is `InvalidInput` saying so, and the caller follows it from 0 (no
/// silent wrong answer either way).
///
/// ```
/// use std::time::Duration;
/// use sandloom_sdk_infra::secrets::{rebind_changes, Secrets};
/// use sandloom_sdk_infra::InfraResult;
///
/// async fn after_a_reload(secrets: &dyn Secrets, cursor: u64) -> InfraResult<()> {
///     let changes = rebind_changes(secrets, cursor, Duration::from_secs(30)).await?;
///     assert!(changes.relisted || cursor == 0);
///     Ok(())
/// }
/// ```
///
/// # Errors
/// As [`changes`](Secrets::changes) and [`list`](Secrets::list) on the instance served now;
/// `InvalidInput` when it does not declare [`LIST`].
pub async fn rebind_changes(
    secrets: &dyn Secrets,
    after: u64,
    wait: std::time::Duration,
) -> InfraResult<Changes> {
    if after == 0 {
        return secrets.changes(0, wait).await;
    }
    // The cursor first: whatever changes while the names are read is after it.
    let cursor = secrets.changes(0, std::time::Duration::ZERO).await?.cursor;
    match secrets.list("").await {
        Ok(names) => Ok(Changes::relisted(cursor, names)),
        Err(err) if err.kind() == ErrorKind::Unsupported => Err(InfraError::invalid_input(
            NAME,
            format!(
                "cursor {after} was issued by an instance that a reload replaced, and this one \
                 cannot list the names it holds (no `list` feature): call `changes` with 0 and \
                 read again every secret you follow"
            ),
        )),
        Err(err) => Err(err),
    }
}

/// The `secrets` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __secrets_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "secrets",
            stability: Stable,
            version: (1, 0, 0),
            features: ["versions", "watch", "list"],
            ops: SecretsOps,
            future_bytes: $crate::secrets::FUTURE_BYTES,
            trait: {
                /// Secret values by name (see the [module docs](self) for the naming rule, the
                /// size limit and the errors).
                ///
                /// Every operation checks its name with [`check_name`](crate::secrets::check_name)
                /// first: a name that breaks the rule is `InvalidInput`, whatever the store holds.
                /// No operation, error or log line of a driver carries a value.
                ///
                /// ```
                /// use sandloom_sdk_infra::secrets::Secrets;
                /// use sandloom_sdk_infra::{InfraResult, Secret};
                ///
                /// async fn api_token(secrets: &dyn Secrets) -> InfraResult<Secret<Vec<u8>>> {
                ///     secrets.get("payments/api-token").await
                /// }
                /// ```
                pub trait Secrets: Send + Sync {
                    /// The current value of the secret `name`.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::secrets::Secrets;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn key_length(secrets: &dyn Secrets) -> InfraResult<usize> {
                    ///     Ok(secrets.get("signing/key").await?.expose().len())
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for a name that breaks the rule; `NotFound` naming the secret
                    /// when there is none; `Backend` for a value above the store's size limit;
                    /// `Unavailable` or `Timeout` when the backend cannot answer.
                    async fn get(&self, name: &str) -> $crate::InfraResult<$crate::Secret<::std::vec::Vec<u8>>>;

                    /// The value of version `version` (1, 2, 3…) of the secret `name`.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::secrets::Secrets;
                    /// use sandloom_sdk_infra::{InfraResult, Secret};
                    ///
                    /// /// The previous signing key, to verify what was signed before a rotation.
                    /// async fn previous_key(secrets: &dyn Secrets) -> InfraResult<Option<Secret<Vec<u8>>>> {
                    ///     let current = secrets.current_version("signing/key").await?;
                    ///     if current < 2 {
                    ///         return Ok(None);
                    ///     }
                    ///     secrets.get_version("signing/key", current - 1).await.map(Some)
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for version 0; `NotFound` naming the secret and the version
                    /// when that version does not exist (never written, or removed); else as `get`.
                    #[feature = "versions"]
                    async fn get_version(&self, name: &str, version: u64) -> $crate::InfraResult<$crate::Secret<::std::vec::Vec<u8>>>;

                    /// The version number of the secret's current value: what `get` answers is
                    /// `get_version` of it.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::secrets::Secrets;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn rotated_since(secrets: &dyn Secrets, seen: u64) -> InfraResult<bool> {
                    ///     Ok(secrets.current_version("db/password").await? > seen)
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As `get`.
                    #[feature = "versions"]
                    async fn current_version(&self, name: &str) -> $crate::InfraResult<u64>;

                    /// The names changed after `after`, waiting up to `wait` for one: the change
                    /// signal, as a long poll.
                    ///
                    /// `after` is a cursor from an earlier answer, or 0 for "from now": a call
                    /// with 0 answers the changes made after it began. A call answers as soon as
                    /// a name has changed after `after` (at once if one already has), or with no
                    /// names and the current cursor when `wait` has passed; a zero `wait` never
                    /// waits. A created, changed or removed secret counts; how soon a change is
                    /// seen is the driver's (a polling driver documents its interval). Cursors
                    /// belong to the instance that issued them and are never 0.
                    ///
                    /// The kernel's rotation report and live reconfiguration loop on this: the
                    /// loop below is the intended use. Holding the last cursor, a caller misses
                    /// no change, however long it spent between calls.
                    ///
                    /// ```
                    /// use std::time::Duration;
                    /// use sandloom_sdk_infra::secrets::Secrets;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn follow(secrets: &dyn Secrets, mut reload: impl FnMut(&str)) -> InfraResult<()> {
                    ///     let mut cursor = secrets.changes(0, Duration::ZERO).await?.cursor;
                    ///     loop {
                    ///         let changes = secrets.changes(cursor, Duration::from_secs(30)).await?;
                    ///         for name in &changes.names {
                    ///             reload(name); // read it again with `get`
                    ///         }
                    ///         cursor = changes.cursor;
                    ///     }
                    /// }
                    /// ```
                    ///
                    /// Across a reload that replaces the instance, handles stay valid but a cursor
                    /// does not: a call with a cursor of the replaced instance, waiting when the
                    /// reload came, answers at once from the new instance with every name it
                    /// holds and its cursor, marked [`relisted`](crate::secrets::Changes::relisted)
                    /// (see [`rebind_changes`](crate::secrets::rebind_changes)); the loop above
                    /// re-reads them and goes on.
                    ///
                    /// # Errors
                    /// `InvalidInput` for a cursor this instance never issued (ahead of its
                    /// history), or, after a reload, when the new instance cannot list its
                    /// names; `Unavailable` or `Timeout` when the backend cannot answer.
                    #[waits = "A cut changes nothing: call again with the same cursor, which still \
                        names every change since on the same instance. Run again by a reload on \
                        another instance, the cursor of the old one is not used there: the \
                        answer is a relist (`Changes::relisted`).",
                        rebind = $crate::secrets::rebind_changes]
                    #[feature = "watch"]
                    async fn changes(&self, after: u64, wait: ::std::time::Duration) -> $crate::InfraResult<$crate::secrets::Changes>;

                    /// The names that start with `prefix` (byte for byte; `""` for every name),
                    /// sorted, each once. Never values.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::secrets::Secrets;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn tls_names(secrets: &dyn Secrets) -> InfraResult<Vec<String>> {
                    ///     secrets.list("tls/").await
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for a prefix [`check_prefix`](crate::secrets::check_prefix)
                    /// refuses; `Unavailable` or `Timeout` when the backend cannot answer.
                    #[feature = "list"]
                    async fn list(&self, prefix: &str) -> $crate::InfraResult<::std::vec::Vec<::std::string::String>>;
                }
            }
        }
    };
}

crate::__secrets_contract!([crate::__operation_trait] []);
crate::__secrets_contract!([crate::__capability_constants] []);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_at_the_limits_of_the_rule() {
        for good in [
            "a",
            "A",
            "db/password",
            "a.b/c_d/e-f",
            "...",
            "a..b",
            ".hidden",
            "-",
            &"x".repeat(MAX_NAME_BYTES),
            &["ab"; 85].join("/"),
        ] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "/",
            "/a",
            "a/",
            "a//b",
            ".",
            "..",
            "a/./b",
            "a/..",
            "a b",
            "a\\b",
            "a\0b",
            "é",
            "a:b",
            &"x".repeat(MAX_NAME_BYTES + 1),
        ] {
            let err = check_name(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
            assert!(err.message().starts_with("invalid secret name"), "{err}");
        }
    }

    #[test]
    fn prefixes_are_checked_and_messages_stay_short() {
        assert!(check_prefix("").is_ok());
        assert!(check_prefix("a//").is_ok());
        assert!(check_prefix(&"x".repeat(MAX_NAME_BYTES + 1)).is_err());
        assert!(check_prefix("a*").is_err());
        let err = check_name(&"é".repeat(400)).unwrap_err();
        assert!(err.message().len() < 500, "{}", err.message().len());
        assert_eq!(FEATURES, [VERSIONS, WATCH, LIST]);
    }

    /// A store with one name and cursor 5, listing its names only when `lists`.
    struct Store {
        lists: bool,
    }

    impl SecretsOps for Store {
        async fn get(&self, name: &str) -> InfraResult<crate::Secret<Vec<u8>>> {
            Err(not_found(name))
        }

        async fn changes(&self, after: u64, _wait: std::time::Duration) -> InfraResult<Changes> {
            // Names changed after cursor 3; "from now" names nothing.
            let names = if after == 0 {
                Vec::new()
            } else {
                vec!["changed".to_owned()]
            };
            Ok(Changes::new(5, names))
        }

        async fn list(&self, prefix: &str) -> InfraResult<Vec<String>> {
            if self.lists {
                assert_eq!(prefix, "");
                Ok(vec!["a".to_owned(), "b".to_owned()])
            } else {
                Err(InfraError::unsupported(NAME, "list", LIST))
            }
        }
    }

    #[tokio::test]
    async fn a_rebound_cursor_is_a_relist_or_a_coded_error_never_a_rerun() {
        let wait = std::time::Duration::from_secs(1);
        let lists = Store { lists: true };
        assert_eq!(
            rebind_changes(&lists, 3, wait).await.unwrap(),
            Changes::relisted(5, vec!["a".to_owned(), "b".to_owned()])
        );
        // Cursor 0 is bound to no instance: run as-is.
        assert_eq!(
            rebind_changes(&lists, 0, wait).await.unwrap(),
            Changes::new(5, Vec::new())
        );
        let err = rebind_changes(&Store { lists: false }, 3, wait)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("call `changes` with 0"), "{err}");
    }
}
