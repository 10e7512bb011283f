//! The experimental `secrets` kit: [`SecretsConformance`], for contract 0.1.
//!
//! A secrets store is read-only to modules, so the kit cannot write the values it reads back
//! through the contract: the driver's test gives it a **seeder**, a closure that puts a value
//! into (or takes one out of) the store behind the instance the kit built for a [`KitRequest`].
//! Each driver's seeder writes where that driver reads:
//!
//! - `secrets.memory`: through its store handle, a store named after `request.scratch_dir`;
//! - `secrets.env`: process environment variables under a prefix made from `request.scratch_dir`'s
//!   name;
//! - `secrets.file`: files under `request.scratch_dir`, or a new `..data` directory swapped in.
//!
//! Name the seeder's store after `request.scratch_dir`, unique to each instance, rather than
//! `request.namespace`, which two kits in one test binary share for the same obligation.
//!
//! The seeder runs on a blocking thread (`spawn_blocking`), so it may block (a synchronous
//! HTTP client for a server). A kit without one fails every obligation, saying so.
//!
//! ```
//! use sandloom_conformance::secrets::{SecretsConformance, Seed};
//! use sandloom_embedded::{MemorySecretStore, MemorySecrets, MemorySecretsOptions};
//!
//! let kit = SecretsConformance::<MemorySecrets>::new(|request| MemorySecretsOptions {
//!     store: Some(request.scratch_dir.display().to_string()),
//!     ..Default::default()
//! })
//! .seeder(|request, seed| {
//!     let store = MemorySecretStore::named(&request.scratch_dir.display().to_string());
//!     let done = match seed {
//!         Seed::Set { name, value } => store.set(name, value.clone()).map(drop),
//!         Seed::Remove { name } => store.remove(name).map(drop),
//!         _ => return Err(format!("this seeder does not know {seed:?}")), // a newer kit's
//!     };
//!     done.map_err(|e| e.to_string())
//! });
//! assert!(kit.check("get_reads_values_exactly").is_ok());
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::secrets::{MAX_VALUE_BYTES, SecretsProvider};

use crate::KitRequest;
use crate::harness::{Instance, Kit, Tolerance};

mod features;
mod lifecycle;
mod names;
mod values;

use features::{
    changes_signal_every_change, changes_wait_their_time_and_refuse_unknown_cursors,
    list_answers_names_under_a_prefix, versions_are_read_by_number,
};
use lifecycle::{operations_after_stop_fail_with_stopped, secrets_never_show, values_never_show};
use names::{
    invalid_names_are_invalid_input, names_at_their_limits_are_served,
    names_that_look_alike_are_distinct,
};
use values::{
    a_missing_secret_is_not_found_naming_it, get_reads_values_exactly,
    not_found_and_unavailable_are_distinct, values_up_to_the_limit_and_none_past_it,
};

/// What the kit asks a seeder to do to the store behind an instance.
///
/// `Debug` never shows a value.
///
/// ```
/// use sandloom_conformance::secrets::Seed;
/// let seed = Seed::Set { name: "db/password".into(), value: b"hunter2".to_vec() };
/// assert_eq!(format!("{seed:?}"), r#"Set { name: "db/password", value: <7 bytes> }"#);
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seed {
    /// Make `value` the current value of `name` (a new version, where the store has versions).
    Set {
        /// The secret's name (valid by the contract's rule, and one the driver maps).
        name: String,
        /// The value, byte for byte.
        value: Vec<u8>,
    },
    /// Take `name` out of the store, every version of it.
    Remove {
        /// The secret's name.
        name: String,
    },
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Set { name, value } => write!(
                f,
                "Set {{ name: {name:?}, value: <{} bytes> }}",
                value.len()
            ),
            Self::Remove { name } => write!(f, "Remove {{ name: {name:?} }}"),
        }
    }
}

/// The seeder: puts into the store behind the instance made for a [`KitRequest`] what a
/// [`Seed`] says, or says why it could not.
pub type SeedFn = dyn Fn(&KitRequest, &Seed) -> Result<(), String> + Send + Sync;

/// Makes the backend of the instance made for a [`KitRequest`] fail (see
/// [`outage`](SecretsConformance::outage)).
pub type OutageFn = dyn Fn(&KitRequest) -> Result<(), String> + Send + Sync;

/// The conformance kit of the `secrets` contract. See [`OBLIGATIONS`] for what
/// it holds a driver to; run it with [`secrets_conformance!`](crate::secrets_conformance).
pub type SecretsConformance<T> = Kit<T, SecretsSettings>;

/// What the `secrets` kit's obligations are given besides the instance: the seeder, the
/// driver's value limit and alphabet, the outage, and the timing tolerance, each set with a
/// builder method of the kit.
///
/// ```
/// use sandloom_conformance::secrets::SecretsSettings;
/// let settings = SecretsSettings::default();
/// assert_eq!(settings.max_value_bytes(), 1024 * 1024);
/// assert!(settings.nul_bytes());
/// ```
pub struct SecretsSettings {
    seeder: Option<Arc<SeedFn>>,
    outage: Option<Arc<OutageFn>>,
    max_value_bytes: usize,
    nul_bytes: bool,
    tolerance: Tolerance,
}

impl Default for SecretsSettings {
    fn default() -> Self {
        Self {
            seeder: None,
            outage: None,
            max_value_bytes: MAX_VALUE_BYTES,
            nul_bytes: true,
            tolerance: Tolerance::DEFAULT,
        }
    }
}

impl fmt::Debug for SecretsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretsSettings")
            .field("seeder", &self.seeder.is_some())
            .field("outage", &self.outage.is_some())
            .field("max_value_bytes", &self.max_value_bytes)
            .field("nul_bytes", &self.nul_bytes)
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

impl SecretsSettings {
    /// The value limit the kit holds the instances to.
    ///
    /// ```
    /// let settings = sandloom_conformance::secrets::SecretsSettings::default();
    /// assert_eq!(settings.max_value_bytes(), sandloom_driverkit::secrets::MAX_VALUE_BYTES);
    /// ```
    #[must_use]
    pub fn max_value_bytes(&self) -> usize {
        self.max_value_bytes
    }

    /// Whether values with NUL bytes are stored and read (not in an environment variable).
    ///
    /// ```
    /// assert!(sandloom_conformance::secrets::SecretsSettings::default().nul_bytes());
    /// ```
    #[must_use]
    pub fn nul_bytes(&self) -> bool {
        self.nul_bytes
    }

    pub(crate) fn late(&self) -> Duration {
        self.tolerance.get()
    }
}

impl<T: SecretsProvider> Kit<T, SecretsSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance. Give it a [`seeder`](Self::seeder) too.
    ///
    /// ```
    /// use sandloom_conformance::secrets::SecretsConformance;
    /// use sandloom_embedded::MemorySecrets;
    ///
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_request| Default::default());
    /// let failure = kit.check("get_reads_values_exactly").unwrap_err();
    /// assert!(failure.message.contains("seeder"), "{failure}");
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<sandloom_driverkit::secrets::SecretsCapability>(
            obligations::<T>(),
            options,
            SecretsSettings::default(),
        )
    }

    /// How the kit puts values into the store behind an instance (see the [module docs](self)).
    /// In a driver crate's `tests/conformance.rs`, a builder method of the test macro:
    /// `secrets_conformance!(MyDriver, |request| …, .seeder(|request, seed| …))`.
    ///
    /// ```
    /// # use sandloom_conformance::secrets::{SecretsConformance, Seed};
    /// # use sandloom_embedded::MemorySecrets;
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_| Default::default())
    ///     .seeder(|_request, seed: &Seed| Err(format!("cannot store {seed:?}")));
    /// assert!(kit.check("get_reads_values_exactly").is_err());
    /// ```
    #[must_use]
    pub fn seeder(
        mut self,
        seeder: impl Fn(&KitRequest, &Seed) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.settings_mut().seeder = Some(Arc::new(seeder));
        self
    }

    /// The `max_value_bytes` the options closure configures, when below the contract's 1 MiB:
    /// the kit reads a value of exactly that size, and expects one byte more to be refused.
    ///
    /// ```
    /// # use sandloom_conformance::secrets::SecretsConformance;
    /// # use sandloom_embedded::{MemorySecrets, MemorySecretsOptions};
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_| MemorySecretsOptions {
    ///     max_value_bytes: 4096,
    ///     ..Default::default()
    /// })
    /// .max_value_bytes(4096);
    /// assert_eq!(kit.obligations()[0], "get_reads_values_exactly");
    /// ```
    #[must_use]
    pub fn max_value_bytes(mut self, limit: usize) -> Self {
        if limit == 0 || limit > MAX_VALUE_BYTES {
            self.refuse(format!(
                "a value limit of {limit} bytes is outside the contract's 1 to {MAX_VALUE_BYTES}"
            ));
        } else {
            self.settings_mut().max_value_bytes = limit;
        }
        self
    }

    /// The backend cannot hold a NUL byte in a value (an environment variable): the kit's
    /// binary values then have every other byte, and no NUL.
    ///
    /// ```
    /// # use sandloom_conformance::secrets::SecretsConformance;
    /// # use sandloom_embedded::MemorySecrets;
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_| Default::default()).without_nul_bytes();
    /// # let _ = kit;
    /// ```
    #[must_use]
    pub fn without_nul_bytes(mut self) -> Self {
        self.settings_mut().nul_bytes = false;
        self
    }

    /// How to make the backend of an instance fail (a mount taken away, a server's proxy cut):
    /// `not_found_and_unavailable_are_distinct` then checks that a failing backend answers
    /// `Unavailable` or `Timeout`, never `NotFound`. A driver with no backend that can fail
    /// (memory, environment) gives none, and the obligation checks the `NotFound` half only.
    ///
    /// ```
    /// # use sandloom_conformance::secrets::SecretsConformance;
    /// # use sandloom_embedded::MemorySecrets;
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_| Default::default())
    ///     .outage(|_request| Err("memory cannot fail".to_owned()));
    /// # let _ = kit;
    /// ```
    #[must_use]
    pub fn outage(
        mut self,
        outage: impl Fn(&KitRequest) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.settings_mut().outage = Some(Arc::new(outage));
        self
    }

    /// How late a change may be signalled by `changes` (a polling driver: its poll interval
    /// and then some). Default [`Tolerance::DEFAULT`], at most [`Tolerance::MAX`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use sandloom_conformance::secrets::SecretsConformance;
    /// # use sandloom_embedded::MemorySecrets;
    /// let kit = SecretsConformance::<MemorySecrets>::new(|_| Default::default())
    ///     .tolerance(Duration::from_millis(500));
    /// # let _ = kit;
    /// ```
    #[must_use]
    pub fn tolerance(self, late: Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }
}

/// Apply `seed` to the store behind `i`, through the kit's seeder, on a blocking thread.
pub(crate) async fn seed<T: 'static>(
    i: &Instance<T>,
    s: &SecretsSettings,
    seed: Seed,
) -> Result<(), String> {
    let Some(seeder) = s.seeder.clone() else {
        return Err(
            "the kit has no seeder: give it one with `.seeder(|request, seed| …)`, which puts \
             values into the store the instance reads (see the kit's docs)"
                .to_owned(),
        );
    };
    let request = i.request().clone();
    let what = format!("{seed:?}");
    tokio::task::spawn_blocking(move || seeder(&request, &seed))
        .await
        .map_err(|e| format!("the seeder panicked on {what}: {e}"))?
        .map_err(|e| format!("the seeder could not apply {what}: {e}"))
}

/// Set `name` to `value` through the seeder.
pub(crate) async fn set<T: 'static>(
    i: &Instance<T>,
    s: &SecretsSettings,
    name: &str,
    value: &[u8],
) -> Result<(), String> {
    seed(
        i,
        s,
        Seed::Set {
            name: name.to_owned(),
            value: value.to_vec(),
        },
    )
    .await
}

crate::define_kit! {
    /// Run the whole experimental `secrets` kit from a driver crate's tests: one `#[test]` per
    /// obligation, in a module `secrets_conformance` (or `name`, with a leading `name:`). Give
    /// the kit its seeder as a builder method.
    ///
    /// ```
    /// use sandloom_conformance::secrets::Seed;
    /// use sandloom_embedded::{MemorySecretStore, MemorySecrets, MemorySecretsOptions};
    ///
    /// sandloom_conformance::secrets_conformance!(
    ///     MemorySecrets,
    ///     |request| MemorySecretsOptions { store: Some(request.scratch_dir.display().to_string()), ..Default::default() },
    ///     .seeder(|request, seed| {
    ///         let store = MemorySecretStore::named(&request.scratch_dir.display().to_string());
    ///         let done = match seed {
    ///             Seed::Set { name, value } => store.set(name, value.clone()).map(drop),
    ///             Seed::Remove { name } => store.remove(name).map(drop),
    ///             _ => return Err(format!("this seeder does not know {seed:?}")),
    ///         };
    ///         done.map_err(|e| e.to_string())
    ///     })
    /// );
    /// # fn main() {}
    /// ```
    macro secrets_conformance;
    kit crate::secrets::SecretsConformance::new;
    provider SecretsProvider;
    settings SecretsSettings;
    /// Every obligation of the (experimental) secrets contract, in the order the kit runs them.
    ///
    /// - `get_reads_values_exactly`: values seeded are read back byte for byte: text, UTF-8,
    ///   a trailing newline and spaces kept, an empty value, every byte value (no NUL where
    ///   the kit was told `without_nul_bytes`), and a new value replacing the old.
    /// - `values_up_to_the_limit_and_none_past_it`: a value of exactly the declared limit (1 MiB
    ///   by default) is read exactly; one byte more answers `Backend`, naming the secret.
    /// - `a_missing_secret_is_not_found_naming_it`: a name never seeded, and one seeded then
    ///   removed, answer `NotFound` whose message names the secret.
    /// - `not_found_and_unavailable_are_distinct`: with an [`outage`](SecretsConformance::outage)
    ///   declared, after it a seeded name and a missing one both answer `Unavailable` or
    ///   `Timeout`, never `NotFound` (nor a value).
    /// - `invalid_names_are_invalid_input`: names breaking the rule (empty, 257 bytes, `/a`,
    ///   `a/`, `a//b`, `.`, `a/../b`, a space, a backslash, NUL, non-ASCII in NFC and NFD)
    ///   answer `InvalidInput` from every operation the instance declares.
    /// - `names_at_their_limits_are_served`: a name of exactly 256 bytes, one of 128 segments,
    ///   and one-character names are read back, each its own value.
    /// - `names_that_look_alike_are_distinct`: names differing in case, by `/` vs `_`, by a
    ///   suffix or a segment each hold their own value; names the driver cannot map (`.`, `-`,
    ///   `__` for the environment) may be refused with `InvalidInput`, never confused.
    /// - `versions_are_read_by_number` (feature `versions`; else `Unsupported`): after two
    ///   values, the current version is one more than the first's, each version reads its own
    ///   value, version 0 is `InvalidInput`, a version past the current one `NotFound`.
    /// - `changes_signal_every_change` (feature `watch`; else `Unsupported`): a cursor from
    ///   `changes(0, 0)` answers at once with no names; a created, a changed and a removed
    ///   secret each wake a waiting `changes` within the tolerance, naming exactly it; an old
    ///   cursor still answers every name changed since.
    /// - `changes_wait_their_time_and_refuse_unknown_cursors` (feature `watch`): with no
    ///   change, `changes(cursor, 600 ms)` answers no names no sooner than 600 ms and within
    ///   the tolerance after; a cursor ahead of the store's answers `InvalidInput`.
    /// - `list_answers_names_under_a_prefix` (feature `list`; else `Unsupported`): names under
    ///   `kit/list/`, sorted, each once, nothing else; `""` includes them; a removed name is
    ///   gone; a prefix with a space is `InvalidInput`.
    /// - `values_never_show`: a value seeded and read does not appear in the `Debug` or
    ///   `Display` of what operations answer (values, versions, changes, lists, errors), nor in
    ///   any span or event recorded at TRACE while they ran.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, every operation (the
    ///   declared features') answers `Stopped`.
    /// - `secrets_never_show`: the harness's obligation: secrets planted in `writeOnly`
    ///   options, and those declared with [`Kit::secrets`](crate::Kit::secrets), never show in
    ///   `Debug` or errors.
    ///
    /// ```
    /// use sandloom_conformance::secrets::OBLIGATIONS;
    /// assert_eq!(OBLIGATIONS.len(), 14);
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
    /// ```
    obligations [
        get_reads_values_exactly,
        values_up_to_the_limit_and_none_past_it,
        a_missing_secret_is_not_found_naming_it,
        not_found_and_unavailable_are_distinct,
        invalid_names_are_invalid_input,
        names_at_their_limits_are_served,
        names_that_look_alike_are_distinct,
        versions_are_read_by_number,
        changes_signal_every_change,
        changes_wait_their_time_and_refuse_unknown_cursors,
        list_answers_names_under_a_prefix,
        values_never_show,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}
