//! A kit: a contract's obligations against one driver type, and its builder methods.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sandloom_driverkit::{Driver, ProvidedBy};

use super::instance::Instance;
use super::plant::plan;
use super::probe::Described;
use super::request::{Failure, KitRequest, OptionsFn, Tolerance};
use super::secrets::KitSecrets;
use super::shared::{ServeFn, serve};

/// How an obligation runs: an `async fn(&Instance<T>, &S) -> Result<(), String>`, boxed.
///
/// ```
/// use sandloom_conformance::{Check, Instance};
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
/// use sandloom_conformance::{Instance, Obligation};
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
    /// use sandloom_conformance::Obligation;
    /// let always: Obligation<(), ()> = Obligation::new("always", |_, _| Box::pin(async { Ok(()) }));
    /// assert_eq!(always.name(), "always");
    /// ```
    pub const fn new(name: &'static str, check: Check<T, S>) -> Self {
        Self { name, check }
    }

    /// Its name.
    ///
    /// ```
    /// use sandloom_conformance::Obligation;
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

/// A conformance kit: a contract's obligations, run against one driver type, each on a fresh
/// instance. The built-in kits (`CacheConformance`, …) are `Kit`s, and a package that defines a
/// capability builds its own with [`define_kit!`](crate::define_kit).
///
/// `S` holds what the obligations need besides the instance (a recipient the driver must
/// accept, a tolerance); it is the kit's, set through the kit's own builder methods.
///
/// ```
/// use sandloom_conformance::cache::CacheConformance;
/// use sandloom_driverkit::NoOptions;
/// # use sandloom_driverkit::{Driver, DriverError, Version};
/// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
/// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
/// # pub struct ForgetfulCache;
/// # impl CacheOps for ForgetfulCache {
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
    /// The contract's name: the kernel's spec of it is what instances are checked against.
    pub(super) name: &'static str,
    obligations: Vec<Obligation<T, S>>,
    pub(super) options: Arc<OptionsFn<T>>,
    pub(super) serve: ServeFn<T>,
    /// The values declared secret, the planted ones, and how to show the driver and options.
    pub(super) secrets: Arc<KitSecrets<T>>,
    settings: Arc<S>,
    /// Why the kit's settings were refused: every obligation then fails with it.
    refused: Option<String>,
}

impl<T: Driver, S: Send + Sync + 'static> Kit<T, S> {
    /// A kit called `name` (the contract's name) with `obligations`, whose instances are built
    /// from the options `options` returns, and whose obligations are given `settings`.
    ///
    /// ```
    /// use sandloom_conformance::{Kit, Obligation};
    /// use sandloom_driverkit::cache::CacheProvider;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct ForgetfulCache;
    /// # impl CacheOps for ForgetfulCache {
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
        let options: Arc<OptionsFn<T>> = Arc::new(options);
        Self {
            name: C::NAME,
            obligations,
            secrets: Arc::new(KitSecrets::none(
                Arc::clone(&options),
                serve::<C, T>,
                C::NAME,
            )),
            options,
            serve: serve::<C, T>,
            settings: Arc::new(settings),
            refused: None,
        }
    }

    /// The kit's name (its contract's).
    ///
    /// ```
    /// # use sandloom_conformance::Kit;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
    /// # use sandloom_conformance::Kit;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
    /// Not needed for the obligation to run: made by its test macro, the kit plants secrets of
    /// its own in every `writeOnly` option of the options' schema (each `Secret` and
    /// `SecretUrl`). Declare what that cannot reach: a secret in the shape the driver really
    /// takes (a password inside a URL whose scheme the option's description does not name, a
    /// `PostgreSQL` key/value string), checked on the closure's own instances.
    ///
    /// ```
    /// use sandloom_conformance::cache::CacheConformance;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// #[derive(Debug, Clone, serde::Deserialize)]
    /// pub struct Options { url: String }
    /// /// Puts its whole url, password and all, in its errors.
    /// #[derive(Debug)]
    /// pub struct Leaky { url: String }
    /// # impl CacheOps for Leaky {
    /// #     async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
    /// #         if key.is_empty() {
    /// #             return Err(InfraError::invalid_input("cache", format!("empty key at {}", self.url)));
    /// #         }
    /// #         Ok(None)
    /// #     }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
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
        let mut secrets = (*self.secrets).clone();
        for value in values {
            let value = value.into();
            if value.is_empty() {
                self.refuse("an empty value was declared secret: it shows in every text".into());
            } else if !secrets.values.contains(&value) {
                secrets.values.push(value);
            }
        }
        secrets.debug_driver = Some(|driver: &T| format!("{driver:?}"));
        secrets.debug_options = Some(|options: &T::Options| format!("{options:?}"));
        self.secrets = Arc::new(secrets);
        self
    }

    /// What the test macros (`cache_conformance!`, …) tell the kit of the driver type, found
    /// where it is concrete: the options' JSON Schema, from which the secrets obligation plants
    /// secrets of its own with no declaration, and the driver's and options' `Debug`. Not
    /// public API: `__describe!(Driver)` makes the argument.
    #[doc(hidden)]
    #[must_use]
    pub fn __described(mut self, described: Described<T>) -> Self {
        let mut secrets = (*self.secrets).clone();
        secrets.debug_driver = secrets.debug_driver.or(described.debug_driver);
        secrets.debug_options = secrets.debug_options.or(described.debug_options);
        if let Some(schema) = described.schema {
            match plan(&schema) {
                Ok(planned) => secrets.plan = planned,
                Err(reason) => self.refuse(reason),
            }
        }
        self.secrets = Arc::new(secrets);
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
    /// # use sandloom_conformance::Kit;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
    /// # use sandloom_conformance::Kit;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
    /// # use sandloom_conformance::Kit;
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
    /// # use sandloom_conformance::{Kit, Obligation};
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::cache::{Cache, CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// # pub struct D;
    /// # impl CacheOps for D {
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
}
