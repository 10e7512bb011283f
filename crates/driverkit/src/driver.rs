//! What every driver implements, whatever its capability.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use std::future::Future;

use crate::Health;

/// A driver failed to build, start or stop. The message is shown to people in SANDLOOM-B022
/// and B030 errors: never put a secret in it (a password, a token, a URL with user-info).
///
/// ```
/// use sandloom_driverkit::DriverError;
/// let io = std::io::Error::other("connection refused");
/// let err = DriverError::new("cannot reach 127.0.0.1:6379").with_source(io);
/// assert_eq!(err.to_string(), "cannot reach 127.0.0.1:6379");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{}{message}", option_prefix(option))]
pub struct DriverError {
    message: Cow<'static, str>,
    /// The key path of the option the error is about, outermost first; empty when it is about
    /// no one option.
    option: Vec<String>,
    #[source]
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

fn option_prefix(option: &[String]) -> String {
    if option.is_empty() {
        String::new()
    } else {
        format!("option `{}`: ", option.join("."))
    }
}

impl DriverError {
    /// An error with a message for people.
    ///
    /// ```
    /// let e = sandloom_driverkit::DriverError::new("root is not a directory");
    /// assert_eq!(e.message(), "root is not a directory");
    /// ```
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            message: message.into(),
            option: Vec::new(),
            source: None,
        }
    }

    /// Say which option the error is about, so that SANDLOOM-B022 points at that key in
    /// `INFRA` (or at the override variable that set it) instead of at the instance's table.
    /// `key` is a top-level key of the instance's table, or a dotted path into a nested
    /// table (`tls.ca_file`). The message then need not repeat the key: it is shown as
    /// ``option `capacity`: must be at least 1``.
    ///
    /// Use it in [`Driver::validate`] for every error about one option.
    ///
    /// ```
    /// use sandloom_driverkit::DriverError;
    ///
    /// let err = DriverError::new("must be at least 1").at_option("capacity");
    /// assert_eq!(err.option(), ["capacity"]);
    /// assert_eq!(err.message(), "must be at least 1");
    /// assert_eq!(err.to_string(), "option `capacity`: must be at least 1");
    ///
    /// let nested = DriverError::new("is not a file").at_option("tls.ca_file");
    /// assert_eq!(nested.option(), ["tls", "ca_file"]);
    /// ```
    #[must_use]
    pub fn at_option(mut self, key: &str) -> Self {
        self.option = key.split('.').map(str::to_owned).collect();
        self
    }

    /// The error, about the option its message starts with: for a message written as
    /// ``"`pool_size` must be between 1 and 1000"`` (the key in backticks, then a space), the
    /// same as `DriverError::new("must be between 1 and 1000").at_option("pool_size")`. A
    /// message that does not start so is kept as it is, about no one option. For a driver whose
    /// option checks already word their errors that way: `validate` can end in
    /// `.map_err(DriverError::about_option_it_names)`.
    ///
    /// ```
    /// use sandloom_driverkit::DriverError;
    ///
    /// let err = DriverError::new("`pool_size` must be between 1 and 1000, not 0").about_option_it_names();
    /// assert_eq!(err.option(), ["pool_size"]);
    /// assert_eq!(err.to_string(), "option `pool_size`: must be between 1 and 1000, not 0");
    ///
    /// let other = DriverError::new("the URL names no host").about_option_it_names();
    /// assert!(other.option().is_empty());
    /// assert_eq!(other.message(), "the URL names no host");
    /// ```
    #[must_use]
    pub fn about_option_it_names(self) -> Self {
        let named = self
            .message
            .strip_prefix('`')
            .and_then(|rest| rest.split_once("` "))
            .filter(|(key, _)| {
                !key.is_empty() && !key.contains(char::is_whitespace) && !key.contains('`')
            })
            .map(|(key, rest)| (key.to_owned(), rest.to_owned()));
        match named {
            Some((key, rest)) if self.option.is_empty() => Self {
                message: rest.into(),
                ..self
            }
            .at_option(&key),
            _ => self,
        }
    }

    /// Attach the cause.
    ///
    /// ```
    /// use std::error::Error as _;
    /// let e = sandloom_driverkit::DriverError::new("x").with_source(std::io::Error::other("y"));
    /// assert!(e.source().is_some());
    /// ```
    #[must_use]
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The message, without the option it is about.
    ///
    /// ```
    /// assert_eq!(sandloom_driverkit::DriverError::new("m").message(), "m");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The key path of the option the error is about ([`at_option`](Self::at_option)), empty
    /// when it is about no one option.
    ///
    /// ```
    /// use sandloom_driverkit::DriverError;
    /// assert!(DriverError::new("cannot reach the server").option().is_empty());
    /// assert_eq!(DriverError::new("must not be empty").at_option("root").option(), ["root"]);
    /// ```
    pub fn option(&self) -> &[String] {
        &self.option
    }
}

/// A driver: typed options, declared features, construction and lifecycle.
///
/// Implement this, then the provider trait of the capability (for example
/// [`CacheProvider`](crate::cache::CacheProvider)), then register the type with
/// [`register_driver!`](crate::register_driver).
///
/// ## Options
/// `Options` is deserialized from the instance's `INFRA` table (every key except `driver`). It
/// must refuse unknown fields (`#[serde(deny_unknown_fields)]`, checked by `sandloom-lint`), so a
/// misspelt option is SANDLOOM-B022 with a "did you mean", not a silently ignored setting.
/// Type its secrets as [`Secret`](crate::Secret) or [`SecretUrl`](crate::SecretUrl) and derive
/// `Debug`: they are redacted with no further code.
///
/// ## Features
/// [`supported_features`](Driver::supported_features) lists every optional feature the type may
/// declare; override [`features_for`](Driver::features_for) when some depend on the options. The
/// kernel refuses a driver that reports anything else, and checks module requirements against
/// `features_for` before anything starts.
///
/// ## Lifecycle
/// [`from_options`](Driver::from_options) must not do I/O or block: connect in
/// [`start`](Driver::start), which runs under the start timeout. [`stop`](Driver::stop) may be
/// called after a failed or timed-out `start` and must release whatever `start` acquired; after
/// `stop`, operations answer [`ErrorKind::Stopped`](sandloom_sdk_infra::ErrorKind::Stopped).
///
/// ```
/// use sandloom_driverkit::{Driver, DriverError};
///
/// #[derive(Debug, Default, serde::Deserialize)]
/// #[serde(deny_unknown_fields, default)]
/// pub struct Options { pub capacity: u64 }
///
/// pub struct Tiny { capacity: u64 }
///
/// impl Driver for Tiny {
///     type Options = Options;
///     fn supported_features() -> &'static [&'static str] { &[] }
///     fn from_options(options: Options) -> Result<Self, DriverError> {
///         if options.capacity == 0 {
///             return Err(DriverError::new("`capacity` must be at least 1"));
///         }
///         Ok(Tiny { capacity: options.capacity })
///     }
/// }
/// # assert!(Tiny::from_options(Options { capacity: 0 }).is_err());
/// ```
pub trait Driver: Send + Sync + Sized + 'static {
    /// The driver's options, deserialized from `INFRA`.
    ///
    /// Refuse unknown fields, give every option a default where one makes sense, and type
    /// secrets as [`Secret`](crate::Secret) or [`SecretUrl`](crate::SecretUrl), so that a derived
    /// `Debug` keeps them out of every log; [`NoOptions`](crate::NoOptions) is the type for a
    /// driver without options.
    ///
    /// **Describe the options' schema** by deriving `schemars::JsonSchema` on this type (with
    /// `schemars` as a dependency of the driver crate): `register_driver!` finds the impl and
    /// hands the schema, doc comments and defaults included, to `infra schema` and
    /// `infra drivers`, so editors complete and check `INFRA`. Nothing else is needed, and a
    /// type without the derive is listed as "schema unknown" (never guessed).
    ///
    /// ```
    /// use sandloom_driverkit::{Secret, SecretUrl};
    ///
    /// #[derive(Debug, Default, serde::Deserialize)]
    /// #[serde(deny_unknown_fields, default)]
    /// pub struct RedisOptions {
    ///     /// `redis://[user:password@]host:port`: its user-info is redacted wherever it is shown.
    ///     pub url: SecretUrl,
    ///     /// Read from `INFRA` or `SANDLOOM__CACHE__<INSTANCE>__PASSWORD`.
    ///     pub password: Option<Secret<String>>,
    /// }
    ///
    /// let options = RedisOptions {
    ///     url: "redis://ada:swordfish@cache:6379".into(),
    ///     password: Some("hunter2".into()),
    /// };
    /// let shown = format!("{options:?}");
    /// assert!(!shown.contains("hunter2") && !shown.contains("swordfish"));
    /// assert_eq!(options.password.as_ref().unwrap().expose(), "hunter2"); // where it is used
    /// ```
    type Options: DeserializeOwned + Send + 'static;

    /// Every optional feature this type may declare, for any options. The kernel refuses a
    /// driver that declares something that is not a feature of its capability.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions};
    /// use sandloom_driverkit::cache::{BULK, TTL};
    ///
    /// pub struct MyCache;
    ///
    /// impl Driver for MyCache {
    ///     type Options = NoOptions;
    ///     fn supported_features() -> &'static [&'static str] { &[TTL, BULK] }
    ///     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyCache) }
    /// }
    /// assert_eq!(MyCache::supported_features(), ["ttl", "bulk"]);
    /// assert_eq!(MyCache::features_for(&NoOptions {}), ["ttl", "bulk"]); // the default
    /// ```
    fn supported_features() -> &'static [&'static str];

    /// The features these options give; by default all of
    /// [`supported_features`](Driver::supported_features).
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError};
    /// use sandloom_driverkit::cache::{INCREMENT, TTL};
    ///
    /// #[derive(Debug, Default, serde::Deserialize)]
    /// #[serde(deny_unknown_fields, default)]
    /// pub struct Options { pub counters: bool }
    ///
    /// pub struct MyCache;
    ///
    /// impl Driver for MyCache {
    ///     type Options = Options;
    ///     fn supported_features() -> &'static [&'static str] { &[TTL, INCREMENT] }
    ///     // `increment` only when the options turn counters on.
    ///     fn features_for(options: &Options) -> Vec<&'static str> {
    ///         if options.counters { vec![TTL, INCREMENT] } else { vec![TTL] }
    ///     }
    ///     fn from_options(_: Options) -> Result<Self, DriverError> { Ok(MyCache) }
    /// }
    /// assert_eq!(MyCache::features_for(&Options { counters: false }), ["ttl"]);
    /// assert_eq!(MyCache::features_for(&Options { counters: true }), ["ttl", "increment"]);
    /// ```
    fn features_for(options: &Self::Options) -> Vec<&'static str> {
        let _ = options;
        Self::supported_features().to_vec()
    }

    /// Check options that deserialized but do not make sense (`capacity = 0`). Runs in the
    /// kernel's dry run (`check`) as well as before construction, so a bad value is reported
    /// before anything is built. Name the option an error is about with
    /// [`DriverError::at_option`]: the error is then placed at that key in `INFRA` (else at the
    /// instance's table), and the kernel goes on to check the other options. By default
    /// everything passes.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError};
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// pub struct Options { pub capacity: u64 }
    ///
    /// pub struct Bounded { capacity: u64 }
    ///
    /// impl Driver for Bounded {
    ///     type Options = Options;
    ///     fn supported_features() -> &'static [&'static str] { &[] }
    ///     fn validate(options: &Options) -> Result<(), DriverError> {
    ///         if options.capacity == 0 {
    ///             return Err(DriverError::new("must be at least 1").at_option("capacity"));
    ///         }
    ///         Ok(())
    ///     }
    ///     fn from_options(options: Options) -> Result<Self, DriverError> {
    ///         Ok(Bounded { capacity: options.capacity })
    ///     }
    /// }
    /// assert!(Bounded::validate(&Options { capacity: 100 }).is_ok());
    /// let err = Bounded::validate(&Options { capacity: 0 }).unwrap_err();
    /// assert_eq!(err.to_string(), "option `capacity`: must be at least 1");
    /// ```
    ///
    /// # Errors
    /// A [`DriverError`] saying which option is wrong and why (reported as SANDLOOM-B022).
    fn validate(options: &Self::Options) -> Result<(), DriverError> {
        let _ = options;
        Ok(())
    }

    /// Construct from options (already [validated](Driver::validate)). No I/O here.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use sandloom_driverkit::{Driver, DriverError};
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// pub struct Options { pub root: PathBuf }
    ///
    /// pub struct FileStore { root: PathBuf }
    ///
    /// impl Driver for FileStore {
    ///     type Options = Options;
    ///     fn supported_features() -> &'static [&'static str] { &[] }
    ///     fn from_options(options: Options) -> Result<Self, DriverError> {
    ///         // Keep the path; creating the directory is I/O, so it belongs in `start`.
    ///         if options.root.as_os_str().is_empty() {
    ///             return Err(DriverError::new("`root` must not be empty"));
    ///         }
    ///         Ok(FileStore { root: options.root })
    ///     }
    /// }
    /// let store = FileStore::from_options(Options { root: "data/objects".into() }).unwrap();
    /// assert_eq!(store.root, PathBuf::from("data/objects"));
    /// ```
    ///
    /// # Errors
    /// A [`DriverError`] when the options are unusable together (reported as SANDLOOM-B022).
    fn from_options(options: Self::Options) -> Result<Self, DriverError>;

    /// Connect, create, warm up. Runs under the start timeout.
    ///
    /// A backend that is still booting is waited for when `INFRA` sets `start_wait_ms`: the
    /// kernel calls `start` again on the same driver (not `stop`, which is final) while the
    /// error is transient. So a failed `start` must release what it acquired and leave the
    /// driver startable, and a transient failure says so by having an
    /// [`InfraError`](crate::sdk::InfraError) of kind `Unavailable` or `Timeout` as its source:
    /// `DriverError::new("cannot reach …").with_source(InfraError::unavailable("cache", "…"))`.
    /// (An `std::io::Error` saying the peer is not there — refused, reset, unreachable — counts
    /// as transient too.)
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions};
    ///
    /// pub struct Remote { connected: AtomicBool }
    ///
    /// impl Driver for Remote {
    ///     type Options = NoOptions;
    ///     fn supported_features() -> &'static [&'static str] { &[] }
    ///     fn from_options(_: NoOptions) -> Result<Self, DriverError> {
    ///         Ok(Remote { connected: AtomicBool::new(false) })
    ///     }
    ///     async fn start(&self) -> Result<(), DriverError> {
    ///         // Connect here (a real driver awaits its client), and report failure as an error.
    ///         self.connected.store(true, Ordering::Release);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let driver = Remote::from_options(NoOptions {}).unwrap();
    /// driver.start().await.unwrap();
    /// assert!(driver.connected.load(Ordering::Acquire));
    /// # }
    /// ```
    ///
    /// # Errors
    /// A [`DriverError`] naming what failed (reported as SANDLOOM-B022).
    fn start(&self) -> impl Future<Output = Result<(), DriverError>> + Send {
        async { Ok(()) }
    }

    /// Release everything. Afterwards operations answer `Stopped`.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions};
    /// use sandloom_driverkit::sdk::{InfraError, InfraResult};
    ///
    /// pub struct Remote { stopped: AtomicBool }
    ///
    /// impl Remote {
    ///     // Every operation starts with this check.
    ///     fn running(&self) -> InfraResult<()> {
    ///         if self.stopped.load(Ordering::Acquire) {
    ///             return Err(InfraError::stopped("cache"));
    ///         }
    ///         Ok(())
    ///     }
    /// }
    ///
    /// impl Driver for Remote {
    ///     type Options = NoOptions;
    ///     fn supported_features() -> &'static [&'static str] { &[] }
    ///     fn from_options(_: NoOptions) -> Result<Self, DriverError> {
    ///         Ok(Remote { stopped: AtomicBool::new(false) })
    ///     }
    ///     async fn stop(&self) -> Result<(), DriverError> {
    ///         // Close connections here; stopping twice must be harmless.
    ///         self.stopped.store(true, Ordering::Release);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let driver = Remote::from_options(NoOptions {}).unwrap();
    /// assert!(driver.running().is_ok());
    /// driver.stop().await.unwrap();
    /// assert_eq!(driver.running().unwrap_err().kind(), sandloom_driverkit::sdk::ErrorKind::Stopped);
    /// # }
    /// ```
    ///
    /// # Errors
    /// A [`DriverError`] naming what could not be released (reported as SANDLOOM-B030).
    fn stop(&self) -> impl Future<Output = Result<(), DriverError>> + Send {
        async { Ok(()) }
    }

    /// Report health. Called by `Running::health` (and the background probe, with
    /// `health_interval_ms`) under the instance's `health_timeout_ms`: a check still running then
    /// is cancelled at its next `await` and counts as unhealthy, so await, never block. By
    /// default [`Health::Healthy`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use sandloom_driverkit::{Driver, DriverError, Health, NoOptions};
    ///
    /// pub struct Remote { failed_calls: AtomicU32 }
    ///
    /// impl Driver for Remote {
    ///     type Options = NoOptions;
    ///     fn supported_features() -> &'static [&'static str] { &[] }
    ///     fn from_options(_: NoOptions) -> Result<Self, DriverError> {
    ///         Ok(Remote { failed_calls: AtomicU32::new(0) })
    ///     }
    ///     async fn health(&self) -> Health {
    ///         match self.failed_calls.load(Ordering::Relaxed) {
    ///             0 => Health::Healthy,
    ///             n => Health::Degraded(format!("{n} calls failed since start")),
    ///         }
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let driver = Remote::from_options(NoOptions {}).unwrap();
    /// assert!(driver.health().await.is_healthy());
    /// driver.failed_calls.store(3, Ordering::Relaxed);
    /// assert_eq!(driver.health().await, Health::Degraded("3 calls failed since start".into()));
    /// # }
    /// ```
    fn health(&self) -> impl Future<Output = Health> + Send {
        async { Health::Healthy }
    }
}

/// Whether an options type describes its own JSON Schema, found at the registration site (where
/// the type is concrete) without a trait bound on `Driver::Options`: a method call on
/// `&SchemaProbe<T>` picks [`DescribedOptions`] when `T: JsonSchema`, an inherent method for
/// [`NoOptions`](crate::NoOptions), and otherwise falls back to [`UndescribedOptions`] on the
/// autoref. Not public API: what `register_driver!` expands to.
#[doc(hidden)]
pub struct SchemaProbe<T>(pub PhantomData<fn() -> T>);

/// The probe's answer for an options type that derives `JsonSchema`.
#[doc(hidden)]
pub trait DescribedOptions {
    /// The options' JSON Schema, as JSON text.
    fn options_schema(&self) -> Option<String>;
}

/// The probe's answer for any other options type: no schema.
#[doc(hidden)]
pub trait UndescribedOptions {
    /// `None`: the options describe no schema.
    fn options_schema(&self) -> Option<String>;
}

impl<T: schemars::JsonSchema> DescribedOptions for SchemaProbe<T> {
    fn options_schema(&self) -> Option<String> {
        // Sub-schemas inlined: the schema is embedded in `infra schema`'s document, where a
        // `$ref` into its own `$defs` would point nowhere.
        let mut settings = schemars::generate::SchemaSettings::draft2020_12();
        settings.inline_subschemas = true;
        let schema = settings.into_generator().into_root_schema_for::<T>();
        Some(schema.as_value().to_string())
    }
}

impl<T> UndescribedOptions for &SchemaProbe<T> {
    fn options_schema(&self) -> Option<String> {
        None
    }
}

impl SchemaProbe<crate::NoOptions> {
    /// No options at all: an object that accepts no key.
    #[must_use]
    pub fn options_schema(&self) -> Option<String> {
        let schema = schemars::json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "NoOptions",
            "description": "This driver takes no options.",
            "type": "object",
            "properties": {},
            "additionalProperties": false
        });
        Some(schema.as_value().to_string())
    }
}

/// For an entry made by hand, whose options describe no schema.
#[doc(hidden)]
#[must_use]
pub fn options_schema_unknown() -> Option<String> {
    None
}

#[cfg(test)]
mod schema_tests {
    use super::{DescribedOptions as _, SchemaProbe, UndescribedOptions as _};
    use std::marker::PhantomData;

    /// Documented options.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Described {
        /// How many.
        count: u32,
    }

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Undescribed {
        count: u32,
    }

    #[test]
    // The borrow is the probe: it is what lets a missing impl fall back to the autoref.
    #[allow(clippy::needless_borrow)]
    fn a_type_deriving_json_schema_describes_its_options_and_others_do_not() {
        let described = (&SchemaProbe::<Described>(PhantomData))
            .options_schema()
            .expect("JsonSchema is derived");
        assert!(
            described.contains(r#""additionalProperties":false"#),
            "{described}"
        );
        assert!(
            described.contains(r#""description":"How many.""#),
            "{described}"
        );
        assert!(described.contains(r#""required":["count"]"#), "{described}");
        assert_eq!(
            (&SchemaProbe::<Undescribed>(PhantomData)).options_schema(),
            None
        );
        let none = (&SchemaProbe::<crate::NoOptions>(PhantomData))
            .options_schema()
            .expect("NoOptions has a schema");
        assert!(none.contains(r#""additionalProperties":false"#), "{none}");
    }
}
