//! `register_driver!` and `define_capability!`.

/// Register a driver type under `capability.name`. One call per driver; no `register()`
/// function, no order, nothing runs before `main`, and nothing is constructed until `INFRA`
/// selects the name.
///
/// Built-in capabilities: `cache`, `notifier`, `objectstore`, `taskqueue`, `lock`. The type must
/// implement that capability's provider trait (`CacheProvider` for `cache`): registering it under
/// another capability does not compile. Names are lowercase ASCII letters, digits, `_` and `-`,
/// checked at compile time.
///
/// ```
/// use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
/// use sandloom_driverkit::cache::{Cache, CacheProvider};
/// use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
///
/// pub struct NullCache;
///
/// #[async_trait]
/// impl Cache for NullCache {
///     async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
///     async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> { Ok(()) }
///     async fn delete(&self, _key: &str) -> InfraResult<bool> { Ok(false) }
/// }
///
/// #[async_trait]
/// impl Driver for NullCache {
///     type Options = sandloom_driverkit::NoOptions;
///     fn supported_features() -> &'static [&'static str] { &[] }
///     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(NullCache) }
/// }
///
/// impl CacheProvider for NullCache {
///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
/// }
///
/// sandloom_driverkit::register_driver!(cache, "null", NullCache);
/// # fn main() {}
/// ```
///
/// A third-party capability (see [`define_capability!`](crate::define_capability)) uses the
/// long form, naming the operation trait object and the contract version:
///
/// ```
/// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
///
/// // In the package that defines the capability (its `contracts` crate):
/// sandloom_driverkit::define_capability! {
///     name: "translate",
///     stability: Experimental,
///     contract_version: (0, 1, 0),
///     required_operations: ["translate"],
///     features: [],
/// }
/// pub trait Translate: Send + Sync {
///     fn translate(&self, text: &str) -> String;
/// }
///
/// // In a driver crate:
/// pub struct Echo;
/// impl Translate for Echo {
///     fn translate(&self, text: &str) -> String { text.to_owned() }
/// }
/// #[async_trait]
/// impl Driver for Echo {
///     type Options = NoOptions;
///     fn supported_features() -> &'static [&'static str] { &[] }
///     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Echo) }
/// }
/// sandloom_driverkit::register_driver!(
///     capability = "translate",
///     driver = "echo",
///     provider = Echo,
///     operations = dyn Translate,
///     contract = Version::new(0, 1, 0),
/// );
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! register_driver {
    (cache, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::cache::NAME, $name, $driver,
            $crate::__private::CacheGate<$driver>, dyn $crate::cache::Cache, <$driver as $crate::cache::CacheProvider>::CONTRACT_VERSION);
    };
    (notifier, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::notifier::NAME, $name, $driver,
            $crate::__private::NotifierGate<$driver>, dyn $crate::notifier::Notifier, <$driver as $crate::notifier::NotifierProvider>::CONTRACT_VERSION);
    };
    (objectstore, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::objectstore::NAME, $name, $driver,
            $crate::__private::ObjectStoreGate<$driver>, dyn $crate::objectstore::ObjectStore, <$driver as $crate::objectstore::ObjectStoreProvider>::CONTRACT_VERSION);
    };
    (taskqueue, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::taskqueue::NAME, $name, $driver,
            $crate::__private::TaskQueueGate<$driver>, dyn $crate::taskqueue::TaskQueue, <$driver as $crate::taskqueue::TaskQueueProvider>::CONTRACT_VERSION);
    };
    (lock, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::lock::NAME, $name, $driver,
            $driver, dyn $crate::lock::Lock, <$driver as $crate::lock::LockProvider>::CONTRACT_VERSION);
    };
    (
        capability = $capability:literal,
        driver = $name:literal,
        provider = $driver:ty,
        operations = $ops:ty,
        contract = $version:expr $(,)?
    ) => {
        const _: () = ::core::assert!(
            !$crate::__private::has_builtin_trait($capability),
            "built-in capabilities are registered with the short form, e.g. `register_driver!(cache, \"name\", Type)`"
        );
        $crate::register_driver!(@entry $capability, $name, $driver, $driver, $ops, $version);
    };
    (@entry $capability:expr, $name:literal, $driver:ty, $gate:ty, $ops:ty, $version:expr) => {
        const _: () = {
            ::core::assert!(
                $crate::__private::valid_name($name),
                "driver names are non-empty lowercase ASCII letters, digits, `_` or `-`"
            );

            fn build(
                options: $crate::__private::ParsedOptions,
            ) -> ::core::result::Result<$crate::__private::BuiltDriver, $crate::__private::BoxError> {
                $crate::__private::build::<$driver, $gate, $ops>(options, |driver| driver)
            }

            #[$crate::__private::linkme::distributed_slice($crate::__private::DRIVERS)]
            #[linkme(crate = $crate::__private::linkme)]
            #[allow(unsafe_code)] // linkme places the element with #[link_section]
            static ENTRY: $crate::__private::DriverEntry = $crate::__private::DriverEntry {
                capability: $capability,
                name: $name,
                package: ::core::env!("CARGO_PKG_NAME"),
                contract_version: $version,
                supported_features: <$driver as $crate::Driver>::supported_features,
                parse_options: $crate::__private::parse_options::<$driver>,
                accepts_unknown_keys:
                    $crate::__private::accepts_unknown_keys::<<$driver as $crate::Driver>::Options>,
                build,
            };
        };
    };
}

/// Define a new capability: its name, stability, contract version, required operations and
/// optional features. A required operation is never a feature; that is checked at compile time.
///
/// Define the operation trait, its `CapabilityRef` and a provider trait next to it in a
/// `contracts` crate of your own, so modules can depend on it without depending on any driver.
///
/// ```
/// sandloom_driverkit::define_capability! {
///     name: "geocoder",
///     stability: Experimental,
///     contract_version: (0, 1, 0),
///     required_operations: ["lookup"],
///     features: ["reverse"],
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! define_capability {
    (
        name: $name:literal,
        stability: $stability:ident,
        contract_version: ($major:literal, $minor:literal, $patch:literal),
        required_operations: [$($required:literal),* $(,)?],
        features: [$($feature:literal),* $(,)?] $(,)?
    ) => {
        const _: () = {
            ::core::assert!(
                $crate::__private::valid_name($name),
                "capability names are non-empty lowercase ASCII letters, digits, `_` or `-`"
            );
            ::core::assert!(
                $crate::__private::disjoint(&[$($required),*], &[$($feature),*]),
                "a required operation is never a feature"
            );

            #[$crate::__private::linkme::distributed_slice($crate::__private::CAPABILITIES)]
            #[linkme(crate = $crate::__private::linkme)]
            #[allow(unsafe_code)] // linkme places the element with #[link_section]
            static SPEC: $crate::__private::CapabilitySpec = $crate::__private::CapabilitySpec {
                name: $name,
                stability: $crate::Stability::$stability,
                contract_version: $crate::Version::new($major, $minor, $patch),
                required_operations: &[$($required),*],
                features: &[$($feature),*],
                package: ::core::env!("CARGO_PKG_NAME"),
            };
        };
    };
}
