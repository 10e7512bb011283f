//! Secret references in `INFRA`: an option written `password = { secret = "db/password" }`
//! (or `SANDLOOM__…__PASSWORD__SECRET=db/password`) takes its value from a `secrets` instance
//! at startup, so the value never sits in the file, the environment or the configuration.
//!
//! - [`SecretReference`] is what was written, kept apart from the options (a reference is never
//!   an option value a driver could see or show).
//! - `judge.rs` holds a configuration's references to the rules that need the linked drivers:
//!   the store exists and is a `secrets` instance, the option is `Secret`-typed, no cycle.
//! - `read.rs` starts nothing itself: given started stores, it reads each value and hands it
//!   to the options as text.
//! - `uses.rs` lists which instances use which secret (for the rotation report).
//!
//! Every problem is SANDLOOM-B025 ([`ReferenceReason`] says which), at the reference.

mod judge;
mod read;
mod reason;
mod syntax;
#[cfg(test)]
mod tests;
pub(crate) mod uses;

use std::fmt;

use crate::location::Location;

pub(crate) use judge::{SECRETS, instance_waves, judge};
pub(crate) use read::{Stores, read_wave};
pub use reason::ReferenceReason;
pub(crate) use reason::{act, describe};
pub(crate) use syntax::{REFERENCE_KEYS, Site, malformed, problem, read_table, reference};

/// The secrets instance a reference reads from when it names none.
///
/// ```
/// assert_eq!(sandloom_kernel::config::DEFAULT_SECRET_STORE, "default");
/// ```
pub const DEFAULT_STORE: &str = "default";

/// A secret reference as `INFRA` writes it: the value of an option is read, at startup, as
/// the secret [`secret`](Self::secret) of the `secrets` instance [`store`](Self::store).
///
/// It shows itself as it is written, never a value (it holds none):
///
/// ```
/// use sandloom_kernel::InfraConfig;
///
/// let text = "[secrets.default]\ndriver = \"env\"\nprefix = \"APP_\"\n\
///             [taskqueue.default]\ndriver = \"postgres\"\npassword = { secret = \"db/password\" }\n";
/// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
/// let queue = config.instance("taskqueue", "default").unwrap();
/// let (option, reference) = queue.references().next().unwrap();
/// assert_eq!(option, "password");
/// assert_eq!((reference.secret.as_str(), reference.store.as_str()), ("db/password", "default"));
/// assert_eq!(reference.to_string(), r#"{ secret = "db/password", store = "default" }"#);
/// assert_eq!(reference.location.to_string(), "infra.toml:6:12");
/// // Not an option: the driver gets the value, read at startup, and nothing else.
/// assert_eq!(queue.options.keys().count(), 0);
/// ```
///
/// # An option's own table with a key `secret` or `store`
///
/// An option whose value is a table is read as a reference when one of its keys is `secret` or
/// `store`, or when every key is a near miss of `secret` (`{ secert = "…" }`, a misspelled
/// reference). So a map option (HTTP headers, labels) cannot have an entry named `secret` or
/// `store` in `INFRA`: the table is refused as a malformed reference (SANDLOOM-B025), or, with
/// `secret` as its only key, read as a reference, which the option then refuses (it holds no
/// secret) or resolves. Use another key where the driver allows one (HTTP header names ignore
/// case: `Store` is not taken for a reference beside another key).
///
/// ```
/// use sandloom_kernel::InfraConfig;
///
/// let text = "[notifier.default]\ndriver = \"webhook\"\n\
///             headers = { store = \"eu-west\", \"X-Team\" = \"ops\" }\n";
/// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
/// let problem = &config.problems()[0];
/// assert_eq!(problem.code(), "SANDLOOM-B025");
/// assert_eq!(
///     problem.description(),
///     "the secret reference { secret = \"\", store = \"eu-west\" } in option `headers` of \
///      `notifier.default` cannot be resolved: a secret reference has the keys `secret` and \
///      `store` only, not `X-Team` (at infra.toml:3:11)"
/// );
/// // `Store` beside another key is an ordinary table, handed to the driver.
/// let text = text.replace("store =", "Store =");
/// let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
/// assert!(config.problems().is_empty());
/// assert_eq!(config.instance("notifier", "default").unwrap().references().count(), 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecretReference {
    /// The `secrets` instance it reads from (`default` when the reference names none).
    pub store: String,
    /// The secret's name in that store (`db/password`).
    pub secret: String,
    /// Where it is written: the reference's table in the file, or the `…__SECRET` variable.
    pub location: Location,
}

impl SecretReference {
    /// A reference to `secret` in `store`, written at `location`.
    ///
    /// ```
    /// use sandloom_kernel::{Location, config::SecretReference};
    /// let r = SecretReference::new("vault", "db/password", Location::Code);
    /// assert_eq!(r.to_string(), r#"{ secret = "db/password", store = "vault" }"#);
    /// ```
    #[must_use]
    pub fn new(store: impl Into<String>, secret: impl Into<String>, location: Location) -> Self {
        Self {
            store: store.into(),
            secret: secret.into(),
            location,
        }
    }
}

impl fmt::Display for SecretReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{ secret = {:?}, store = {:?} }}",
            self.secret, self.store
        )
    }
}
