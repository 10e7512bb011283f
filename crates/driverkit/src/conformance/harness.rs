//! The kit harness: one obligation on one fresh instance, built as the kernel builds it, with
//! its panics and hangs contained. Every kit, built-in or written by the package that defines a
//! capability, is a [`Kit`] over this.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;

use std::any::Any;

use super::secrets::{KitSecrets, NoSecrets, SecretRules};
use crate::gate::Gate;
use crate::{Contract, Driver, ProvidedBy};

/// What a kit asks of the instance it is about to build. The closure passed to a kit maps it to
/// the driver's options.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::conformance::cache::CacheConformance;
/// use sandloom_driverkit::conformance::KitRequest;
/// use sandloom_driverkit::NoOptions;
/// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
/// # use sandloom_driverkit::cache::{Cache, CacheProvider};
/// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
/// # /// Stores nothing: a stand-in for a driver under test.
/// # pub struct ForgetfulCache;
/// # #[async_trait]
/// # impl Cache for ForgetfulCache {
/// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
/// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
/// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
/// # }
/// # impl Driver for ForgetfulCache {
/// #     type Options = sandloom_driverkit::NoOptions;
/// #     fn supported_features() -> &'static [&'static str] { &[] }
/// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
/// # }
/// # impl CacheProvider for ForgetfulCache {
/// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
/// # }
///
/// let kit = CacheConformance::<ForgetfulCache>::new(|request: &KitRequest| {
///     assert!(request.scratch_dir.is_dir()); // empty, and removed after the obligation
///     assert!(!request.namespace.is_empty()); // unique per obligation and process
///     assert!(request.visibility_timeout < Duration::from_secs(5));
///     assert!(request.max_attempts >= 2);
///     NoOptions {} // a real driver would build its options from these
/// });
/// assert!(kit.check("get_missing_key_returns_none").is_ok());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct KitRequest {
    /// An empty directory that lives as long as the instance (for file-backed drivers).
    pub scratch_dir: PathBuf,
    /// A unique name for this instance (for drivers on shared servers: a key prefix, a schema,
    /// a queue name), so obligations never see each other's data.
    pub namespace: String,
    /// Task queues: the visibility timeout the kit needs (short, so redelivery is observable).
    pub visibility_timeout: Duration,
    /// Task queues: deliveries before a task is dead-lettered.
    pub max_attempts: u32,
    /// Point the options at an address where nothing answers (say, port 1 of `127.0.0.1`),
    /// keeping every secret: set only for the second instance of the secrets obligation
    /// (see [`Kit::secrets`]), which checks the errors of a start that cannot connect. A driver
    /// without a server ignores it.
    pub unreachable: bool,
}

/// An obligation of a kit failed.
///
/// ```
/// let failure = sandloom_driverkit::conformance::Failure::new("get_missing_key_returns_none", "got Some");
/// assert_eq!(failure.to_string(), "obligation `get_missing_key_returns_none` failed: got Some");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The obligation's name.
    pub obligation: String,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// A failure of `obligation` (kits make these; a driver's own test helpers may too).
    ///
    /// ```
    /// use sandloom_driverkit::conformance::Failure;
    ///
    /// let failure = Failure::new("set_overwrites", "the second `set` was ignored");
    /// assert_eq!(failure.obligation, "set_overwrites");
    /// assert_eq!(failure.message, "the second `set` was ignored");
    /// ```
    pub fn new(obligation: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            obligation: obligation.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "obligation `{}` failed: {}",
            self.obligation, self.message
        )
    }
}

impl std::error::Error for Failure {}

/// A declared timing tolerance: how far past the moment the contract names a timed event may
/// come (an entry's expiry, the end of a `reserve`'s wait, of a lease or a visibility timeout, a
/// redelivery after `retry_after`), and how far a reported time (a lease's `expires_at`, a
/// receipt's `accepted_at`) may be off. Every timing obligation holds the driver to it as an
/// upper bound; lower bounds ("not before") stay as the kits state them.
///
/// The default, [`Tolerance::DEFAULT`], is tight: an in-memory driver keeps it. A driver for a
/// server may widen it through its kit's `tolerance` builder method, up to [`Tolerance::MAX`];
/// a kit given more answers every obligation with a failure saying so.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::conformance::Tolerance;
///
/// assert_eq!(Tolerance::default(), Tolerance::DEFAULT);
/// let widened = Tolerance::new(Duration::from_secs(1)).unwrap();
/// assert_eq!(widened.get(), Duration::from_secs(1));
/// let refused = Tolerance::new(Tolerance::MAX + Duration::from_millis(1)).unwrap_err();
/// assert!(refused.contains("above the maximum"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tolerance(Duration);

impl Tolerance {
    /// The tolerance a kit holds a driver to unless told otherwise: 250 ms.
    pub const DEFAULT: Self = Self(Duration::from_millis(250));
    /// The most a driver may declare: 5 s. Beyond it a timing obligation would say too little
    /// (a 300 ms TTL kept for seconds is not "expired").
    pub const MAX: Duration = Duration::from_secs(5);

    /// A tolerance of `late`.
    ///
    /// # Errors
    /// When `late` is above [`Tolerance::MAX`]: what was asked, and the maximum.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_driverkit::conformance::Tolerance;
    /// assert!(Tolerance::new(Duration::from_millis(800)).is_ok());
    /// assert!(Tolerance::new(Duration::from_secs(60)).is_err());
    /// ```
    pub fn new(late: Duration) -> Result<Self, String> {
        if late > Self::MAX {
            return Err(format!(
                "a timing tolerance of {late:?} is above the maximum of {:?}: a driver that \
                 needs more does not keep the contract's timing",
                Self::MAX
            ));
        }
        Ok(Self(late))
    }

    /// The tolerance as a duration.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_driverkit::conformance::Tolerance;
    /// assert_eq!(Tolerance::DEFAULT.get(), Duration::from_millis(250));
    /// ```
    #[must_use]
    pub const fn get(self) -> Duration {
        self.0
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How long one obligation may take before it fails as hung.
pub(crate) const OBLIGATION_TIME_LIMIT: Duration = Duration::from_mins(1);

/// A started instance under test and what the kit knows of it: what an obligation is given.
///
/// The instance was built as the kernel builds one: options from the kit's closure,
/// `validate`, `features_for`, `from_options`, the contract's feature gate around it, then
/// `start`; the kit stops it afterwards. An obligation reaches the driver itself with
/// [`driver`](Self::driver) (its own behaviour, undeclared features included), and what a module
/// gets with [`served`](Self::served) (through the gate, as the kernel serves it).
///
/// ```
/// use sandloom_driverkit::conformance::Instance;
/// use sandloom_driverkit::cache::{CacheCapability, CacheProvider, TTL};
///
/// // An obligation of a kit: checks what it can, and says what went wrong otherwise.
/// async fn remembers<T: CacheProvider>(i: &Instance<T>, _: &()) -> Result<(), String> {
///     let cache = i.served::<CacheCapability>(); // what modules get
///     cache.set("k", "v".into()).await.map_err(|e| format!("set failed: {e}"))?;
///     if i.declares(TTL) {
///         // … exercise the feature; otherwise check that it answers `Unsupported`.
///     }
///     Ok(())
/// }
/// ```
pub struct Instance<T> {
    /// The driver, inside its gate; shared, so obligations can spawn tasks on several threads.
    pub(crate) driver: Shared<T>,
    /// `Arc<C::Operations>` of the kit's contract `C`: the gated driver as modules get it.
    operations: Box<dyn Any + Send + Sync>,
    pub(crate) features: Vec<&'static str>,
    pub(crate) request: KitRequest,
    /// The kit's declared secrets, for the secrets obligation.
    pub(crate) secrets: Arc<dyn SecretRules<T>>,
}

/// The driver under test, shared: clone it into the tasks an obligation spawns.
///
/// ```
/// # use sandloom_driverkit::conformance::Instance;
/// # use sandloom_driverkit::cache::CacheProvider;
/// fn spawn_writer<T: CacheProvider>(i: &Instance<T>) -> tokio::task::JoinHandle<()> {
///     let driver = i.shared();
///     tokio::spawn(async move { let _ = driver.set("k", "v".into()).await; })
/// }
/// ```
pub struct Shared<T>(Arc<dyn Gated<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.driver()
    }
}

/// A gate, whatever its contract: the driver inside it.
trait Gated<T>: Send + Sync {
    fn driver(&self) -> &T;
}

impl<T: Driver, G: Gate<T>> Gated<T> for G {
    fn driver(&self) -> &T {
        Gate::driver(self)
    }
}

impl<T: 'static> Instance<T> {
    /// The driver under test, itself (not through the gate).
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// # use sandloom_driverkit::cache::CacheProvider;
    /// async fn empty<T: CacheProvider>(i: &Instance<T>) -> bool {
    ///     matches!(i.driver().get("never-written").await, Ok(None))
    /// }
    /// ```
    pub fn driver(&self) -> &T {
        &self.driver
    }

    /// The driver under test, shared, for tasks an obligation spawns.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// # use sandloom_driverkit::cache::CacheProvider;
    /// fn spawn_writer<T: CacheProvider>(i: &Instance<T>) -> tokio::task::JoinHandle<()> {
    ///     let driver = i.shared();
    ///     tokio::spawn(async move { let _ = driver.set("k", "v".into()).await; })
    /// }
    /// ```
    pub fn shared(&self) -> Shared<T> {
        self.driver.clone()
    }

    /// The driver as modules get it: behind the feature gate of the kit's contract `C`, so an
    /// operation of an undeclared feature answers `Unsupported` whatever the driver implements.
    ///
    /// # Panics
    /// When `C` is not the contract the kit was built for (a bug in the kit).
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// use sandloom_driverkit::cache::{CacheCapability, CacheProvider};
    /// async fn served_empty<T: CacheProvider>(i: &Instance<T>) -> bool {
    ///     matches!(i.served::<CacheCapability>().get("never-written").await, Ok(None))
    /// }
    /// ```
    pub fn served<C: Contract>(&self) -> &C::Operations {
        match self.operations.downcast_ref::<Arc<C::Operations>>() {
            Some(operations) => operations,
            None => panic!(
                "the kit was not built for the contract `{}`: pass that contract to `Kit::build`",
                C::NAME
            ),
        }
    }

    /// Whether the instance declared `feature` (its `features_for` of its options).
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// fn bulk<T: 'static>(i: &Instance<T>) -> bool { i.declares("bulk") }
    /// ```
    pub fn declares(&self, feature: &str) -> bool {
        self.features.contains(&feature)
    }

    /// Every feature the instance declared.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// fn none<T: 'static>(i: &Instance<T>) -> bool { i.features().is_empty() }
    /// ```
    pub fn features(&self) -> &[&'static str] {
        &self.features
    }

    /// What the kit asked of this instance.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Instance;
    /// fn scratch<T: 'static>(i: &Instance<T>) -> &std::path::Path { &i.request().scratch_dir }
    /// ```
    pub fn request(&self) -> &KitRequest {
        &self.request
    }
}

/// Put `driver` behind the gate of contract `C`, as the kernel does.
fn serve<C: ProvidedBy<T>, T: Driver>(
    driver: T,
    features: &[&'static str],
) -> (Shared<T>, Box<dyn Any + Send + Sync>) {
    // Telemetry on, as the kernel builds instances by default: the kit exercises that path too.
    let context = crate::gate::GateContext {
        features,
        instance: "kit",
        driver: "under-test",
        telemetry: true,
    };
    let gated = Arc::new(C::Gate::wrap(driver, &context));
    let operations: Arc<C::Operations> = C::upcast(Arc::clone(&gated));
    (Shared(gated), Box::new(operations))
}

/// How a kit puts a driver behind its contract's gate.
pub(crate) type ServeFn<T> = fn(T, &[&'static str]) -> (Shared<T>, Box<dyn Any + Send + Sync>);

/// How an obligation runs: an `async fn(&Instance<T>, &S) -> Result<(), String>`, boxed.
///
/// ```
/// use sandloom_driverkit::conformance::{Check, Instance};
/// # use sandloom_driverkit::cache::CacheProvider;
/// async fn starts<T: CacheProvider>(_: &Instance<T>, _: &()) -> Result<(), String> {
///     Ok(())
/// }
/// fn check<T: CacheProvider>() -> Check<T, ()> {
///     |i, s| Box::pin(starts(i, s))
/// }
/// ```
pub type Check<T, S> = for<'a> fn(&'a Instance<T>, &'a S) -> BoxFuture<'a, Result<(), String>>;

/// One obligation of a kit: its name (the name of its test) and its check.
///
/// Make them with [`define_kit!`](crate::define_kit), which names each after its function.
///
/// ```
/// use sandloom_driverkit::conformance::{Instance, Obligation};
/// use sandloom_driverkit::cache::CacheProvider;
///
/// async fn get_missing_key_returns_none<T: CacheProvider>(
///     i: &Instance<T>,
///     _: &(),
/// ) -> Result<(), String> {
///     match i.driver().get("never-written").await {
///         Ok(None) => Ok(()),
///         other => Err(format!("`get` of a key never written answered {other:?}")),
///     }
/// }
///
/// fn obligation<T: CacheProvider>() -> Obligation<T, ()> {
///     Obligation::new("get_missing_key_returns_none", |i, s| {
///         Box::pin(get_missing_key_returns_none(i, s))
///     })
/// }
/// ```
pub struct Obligation<T, S> {
    name: &'static str,
    check: Check<T, S>,
}

impl<T, S> Obligation<T, S> {
    /// An obligation called `name`, checked by `check`.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::Obligation;
    /// let always: Obligation<(), ()> = Obligation::new("always", |_, _| Box::pin(async { Ok(()) }));
    /// assert_eq!(always.name(), "always");
    /// ```
    pub const fn new(name: &'static str, check: Check<T, S>) -> Self {
        Self { name, check }
    }

    /// Its name.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::Obligation;
    /// let o: Obligation<(), ()> = Obligation::new("x", |_, _| Box::pin(async { Ok(()) }));
    /// assert_eq!(o.name(), "x");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T, S> Clone for Obligation<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, S> Copy for Obligation<T, S> {}

/// Builds the options of each instance from the driver author's closure.
pub(crate) type OptionsFn<T> = dyn Fn(&KitRequest) -> <T as Driver>::Options + Send + Sync;

/// A conformance kit: a contract's obligations, run against one driver type, each on a fresh
/// instance. The built-in kits (`CacheConformance`, …) are `Kit`s, and a package that defines a
/// capability builds its own with [`define_kit!`](crate::define_kit).
///
/// `S` holds what the obligations need besides the instance (a recipient the driver must
/// accept, a tolerance); it is the kit's, set through the kit's own builder methods.
///
/// ```
/// use sandloom_driverkit::conformance::cache::CacheConformance;
/// use sandloom_driverkit::NoOptions;
/// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
/// # use sandloom_driverkit::cache::{Cache, CacheProvider};
/// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
/// # pub struct ForgetfulCache;
/// # #[async_trait]
/// # impl Cache for ForgetfulCache {
/// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
/// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
/// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
/// # }
/// # impl Driver for ForgetfulCache {
/// #     type Options = sandloom_driverkit::NoOptions;
/// #     fn supported_features() -> &'static [&'static str] { &[] }
/// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
/// # }
/// # impl CacheProvider for ForgetfulCache {
/// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
/// # }
///
/// // `ForgetfulCache` (hidden) stores nothing.
/// let kit = CacheConformance::<ForgetfulCache>::new(|_request| NoOptions {});
/// assert_eq!(kit.name(), "cache");
/// assert!(kit.obligations().contains(&"set_overwrites"));
/// assert!(kit.check("get_missing_key_returns_none").is_ok());
/// assert!(kit.check("set_overwrites").is_err());
/// ```
pub struct Kit<T: Driver, S> {
    name: &'static str,
    /// The contract's features: an instance may declare no other.
    contract_features: &'static [&'static str],
    obligations: Vec<Obligation<T, S>>,
    options: Arc<OptionsFn<T>>,
    serve: ServeFn<T>,
    /// The values declared secret, and how to show the driver and its options.
    secrets: Arc<dyn SecretRules<T>>,
    settings: Arc<S>,
    /// Why the kit's settings were refused: every obligation then fails with it.
    refused: Option<String>,
}

impl<T: Driver, S: Send + Sync + 'static> Kit<T, S> {
    /// A kit called `name` (the contract's name) with `obligations`, whose instances are built
    /// from the options `options` returns, and whose obligations are given `settings`.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::{Kit, Obligation};
    /// use sandloom_driverkit::cache::CacheProvider;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::Cache;
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct ForgetfulCache;
    /// # #[async_trait]
    /// # impl Cache for ForgetfulCache {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for ForgetfulCache {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
    /// # }
    /// # impl CacheProvider for ForgetfulCache {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// fn starts<T: CacheProvider>() -> Obligation<T, ()> {
    ///     Obligation::new("starts", |_, _| Box::pin(async { Ok(()) }))
    /// }
    /// let kit = Kit::build::<sandloom_driverkit::cache::CacheCapability>(
    ///     vec![starts::<ForgetfulCache>()],
    ///     |_| NoOptions {},
    ///     (),
    /// );
    /// assert_eq!(kit.check("starts"), Ok(()));
    /// ```
    pub fn build<C: ProvidedBy<T>>(
        obligations: Vec<Obligation<T, S>>,
        options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static,
        settings: S,
    ) -> Self {
        Self {
            name: C::NAME,
            contract_features: C::FEATURES,
            obligations,
            options: Arc::new(options),
            secrets: Arc::new(NoSecrets),
            serve: serve::<C, T>,
            settings: Arc::new(settings),
            refused: None,
        }
    }

    /// The kit's name (its contract's).
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Kit;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let kit: Kit<D, ()> = Kit::build::<CacheCapability>(Vec::new(), |_| NoOptions {}, ());
    /// assert_eq!(kit.name(), "cache");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The obligations' names, in the order the kit runs them.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Kit;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let kit: Kit<D, ()> = Kit::build::<CacheCapability>(Vec::new(), |_| NoOptions {}, ());
    /// assert!(kit.obligations().is_empty());
    /// ```
    pub fn obligations(&self) -> Vec<&'static str> {
        self.obligations.iter().map(Obligation::name).collect()
    }

    /// The kit's settings, for its builder methods.
    ///
    /// # Panics
    /// Never: a kit shares its settings only while an obligation runs.
    #[doc(hidden)]
    pub fn settings_mut(&mut self) -> &mut S {
        Arc::get_mut(&mut self.settings).expect("settings are shared only while a check runs")
    }

    /// Declare the kit's timing tolerance in the settings slot `slot` picks, or refuse the
    /// settings when `late` is above [`Tolerance::MAX`]; for the kits' `tolerance` methods.
    #[doc(hidden)]
    #[must_use]
    pub fn declare_tolerance(mut self, late: Duration, slot: fn(&mut S) -> &mut Tolerance) -> Self {
        match Tolerance::new(late) {
            Ok(tolerance) => *slot(self.settings_mut()) = tolerance,
            Err(reason) => self.refuse(reason),
        }
        self
    }

    /// Declare values that are secret in the options the kit's closure builds (a password, a
    /// token, an access key): the kit's secrets obligation (`secrets_never_show`) then fails
    /// when one shows in the options' `Debug`, the driver's `Debug`, or the `Display` or
    /// `Debug` of an error the kit provokes, also from an instance whose options point at an
    /// unreachable address ([`KitRequest::unreachable`]). An empty value is refused (it shows
    /// everywhere): every obligation then fails saying so.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::cache::CacheConformance;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// #[derive(Debug, Clone, serde::Deserialize)]
    /// pub struct Options { url: String }
    /// /// Puts its whole url, password and all, in its errors.
    /// #[derive(Debug)]
    /// pub struct Leaky { url: String }
    /// # #[async_trait]
    /// # impl Cache for Leaky {
    /// #     async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
    /// #         if key.is_empty() {
    /// #             return Err(InfraError::invalid_input("cache", format!("empty key at {}", self.url)));
    /// #         }
    /// #         Ok(None)
    /// #     }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # #[async_trait]
    /// # impl Driver for Leaky {
    /// #     type Options = Options;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(o: Options) -> Result<Self, DriverError> { Ok(Leaky { url: o.url }) }
    /// # }
    /// # impl CacheProvider for Leaky { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    ///
    /// let kit = CacheConformance::<Leaky>::new(|_| Options { url: "redis://:hunter2@db".into() })
    ///     .secrets(["hunter2"]);
    /// let failure = kit.check("secrets_never_show").unwrap_err();
    /// assert!(failure.message.contains("declared secret #1 shows in"));
    /// assert!(!failure.message.contains("hunter2")); // the failure does not repeat it
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `cache_conformance!(MyCache, |request| …, .secrets([PASSWORD]));`.
    #[must_use]
    pub fn secrets<V: Into<String>>(mut self, values: impl IntoIterator<Item = V>) -> Self
    where
        T: fmt::Debug,
        T::Options: fmt::Debug,
    {
        let mut declared: Vec<String> = self.secrets.values().to_vec();
        for value in values {
            let value = value.into();
            if value.is_empty() {
                self.refuse("an empty value was declared secret: it shows in every text".into());
            } else if !declared.contains(&value) {
                declared.push(value);
            }
        }
        self.secrets = Arc::new(KitSecrets {
            values: declared,
            debug_driver: Some(|driver: &T| format!("{driver:?}")),
            debug_options: Some(|options: &T::Options| format!("{options:?}")),
            options: Arc::clone(&self.options),
            serve: self.serve,
        });
        self
    }

    /// Refuse the kit's settings, for its builder methods: every obligation then fails with
    /// `reason` (a test cannot pass on settings the kit does not accept).
    #[doc(hidden)]
    pub fn refuse(&mut self, reason: String) {
        self.refused.get_or_insert(reason);
    }

    /// Run one obligation on a fresh instance.
    ///
    /// # Errors
    /// The [`Failure`] of the obligation: what the check reported, a panic of the driver, a
    /// check that did not finish within a minute, a driver that could not be built or started,
    /// or an obligation of another name.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Kit;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let kit: Kit<D, ()> = Kit::build::<CacheCapability>(Vec::new(), |_| NoOptions {}, ());
    /// let unknown = kit.check("no_such_obligation").unwrap_err();
    /// assert!(unknown.message.contains("no such obligation in the cache kit"));
    /// ```
    pub fn check(&self, obligation: &str) -> Result<(), Failure> {
        if let Some(reason) = &self.refused {
            return Err(Failure::new(
                obligation,
                format!("the {} kit's settings were refused: {reason}", self.name),
            ));
        }
        let Some(found) = self.obligations.iter().find(|o| o.name == obligation) else {
            return Err(Failure::new(
                obligation,
                format!("no such obligation in the {} kit", self.name),
            ));
        };
        let check = found.check;
        let settings = Arc::clone(&self.settings);
        self.run(found.name, move |instance| {
            Box::pin(async move { check(instance, &settings).await })
        })
    }

    /// Run every obligation; the failures, in order.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Kit;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let kit: Kit<D, ()> = Kit::build::<CacheCapability>(Vec::new(), |_| NoOptions {}, ());
    /// assert!(kit.check_all().is_empty());
    /// ```
    pub fn check_all(&self) -> Vec<Failure> {
        self.obligations
            .iter()
            .filter_map(|obligation| self.check(obligation.name).err())
            .collect()
    }

    /// Run one obligation and panic with its failure (what the generated tests call).
    ///
    /// # Panics
    /// When the obligation fails.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::Kit;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let kit: Kit<D, ()> = Kit::build::<CacheCapability>(Vec::new(), |_| NoOptions {}, ());
    /// let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| kit.assert("x")));
    /// assert!(outcome.is_err());
    /// ```
    pub fn assert(&self, obligation: &str) {
        if let Err(failure) = self.check(obligation) {
            panic!("{failure}");
        }
    }

    /// The self-test of a kit against a deliberately broken driver: panics unless the
    /// obligation fails, and returns the failure so the test can check what it says.
    ///
    /// # Panics
    /// When the obligation passes: the kit does not catch the flaw.
    ///
    /// ```
    /// # use sandloom_driverkit::conformance::{Kit, Obligation};
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # #[async_trait]
    /// # impl Cache for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(D) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// let never: Obligation<D, ()> =
    ///     Obligation::new("never", |_, _| Box::pin(async { Err("it never works".to_owned()) }));
    /// let kit = Kit::build::<CacheCapability>(vec![never], |_| NoOptions {}, ());
    /// let failure = kit.assert_catches("never");
    /// assert_eq!(failure.message, "it never works");
    /// ```
    pub fn assert_catches(&self, obligation: &str) -> Failure {
        match self.check(obligation) {
            Err(failure) => failure,
            Ok(()) => panic!(
                "the {} kit does not catch this driver's flaw: `{obligation}` passed",
                self.name
            ),
        }
    }

    #[doc(hidden)]
    pub fn assert_names(&self, generated: &[&str]) {
        let known = self.obligations();
        let missing: Vec<&&str> = known.iter().filter(|n| !generated.contains(n)).collect();
        let unknown: Vec<&&str> = generated.iter().filter(|n| !known.contains(n)).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "{} kit: the test macro and the kit disagree; without a test: {missing:?}; unknown: {unknown:?}",
            self.name
        );
    }

    async fn instance(&self, scratch: &Path, namespace: String) -> Result<Instance<T>, String> {
        let request = KitRequest {
            scratch_dir: scratch.to_path_buf(),
            namespace,
            visibility_timeout: Duration::from_millis(400),
            max_attempts: 3,
            unreachable: false,
        };
        // The kernel's order: options, validate, features, construct, start.
        let options = (self.options)(&request);
        T::validate(&options).map_err(|err| format!("the kit's options were refused: {err}"))?;
        let features = T::features_for(&options);
        // Every obligation fails for such a driver: a module's `declares` of that name, and the
        // gate, would answer for a feature no contract document describes.
        if let Some(unknown) = features
            .iter()
            .find(|feature| !self.contract_features.contains(feature))
        {
            return Err(format!(
                "the instance declares the feature {unknown:?}, which the `{}` contract does not \
                 define (its features: {:?})",
                self.name, self.contract_features
            ));
        }
        let driver =
            T::from_options(options).map_err(|err| format!("construction failed: {err}"))?;
        let (driver, operations) = (self.serve)(driver, &features);
        driver
            .start()
            .await
            .map_err(|err| format!("start failed: {err}"))?;
        Ok(Instance {
            driver,
            operations,
            features,
            request,
            secrets: Arc::clone(&self.secrets),
        })
    }

    /// Run `check` on a fresh, started instance; stop it afterwards (unless the check did).
    fn run<F>(&self, obligation: &str, check: F) -> Result<(), Failure>
    where
        F: for<'a> FnOnce(&'a Instance<T>) -> BoxFuture<'a, Result<(), String>>,
    {
        let fail = |message: String| Failure::new(obligation, message);
        let scratch = tempfile::tempdir()
            .map_err(|err| fail(format!("cannot create a scratch directory: {err}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|err| fail(format!("cannot start a Tokio runtime: {err}")))?;
        let namespace = format!("kit-{obligation}-{}", std::process::id());
        runtime.block_on(async {
            let instance = AssertUnwindSafe(self.instance(scratch.path(), namespace))
                .catch_unwind()
                .await
                .map_err(|payload| fail(format!("the driver panicked: {}", panic_text(&*payload))))?
                .map_err(fail)?;
            let outcome = tokio::time::timeout(
                OBLIGATION_TIME_LIMIT,
                AssertUnwindSafe(check(&instance)).catch_unwind(),
            )
            .await;
            // Stopping twice must be harmless; the stop obligation stops on its own.
            let _ = AssertUnwindSafe(instance.driver.stop())
                .catch_unwind()
                .await;
            match outcome {
                Ok(Ok(Ok(()))) => Ok(()),
                Ok(Ok(Err(message))) => Err(fail(message)),
                Ok(Err(payload)) => Err(fail(format!(
                    "the driver panicked: {}",
                    panic_text(&*payload)
                ))),
                Err(_) => Err(fail(format!(
                    "did not finish within {} s",
                    OBLIGATION_TIME_LIMIT.as_secs()
                ))),
            }
        })
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
