//! One provider trait per built-in capability: the operation trait, plus [`Driver`], plus a
//! required contract version. Each is generated from the capability's one declaration in
//! sdk-infra (name, stability, version, features, operation signatures), which the operation
//! trait and the kernel's spec are generated from too, by the same macros as a third-party
//! capability's (`__contract!` and `__gate!`, behind
//! [`define_capability!`](crate::define_capability)): adding an operation to a built-in touches
//! its declaration alone.
//!
//! [`Driver`]: crate::Driver

macro_rules! provider_module {
    (
        $(#[$doc:meta])*
        $module:ident, $provider:ident, $marker:ident, $gate:ident, $declaration:ident
        $(, helpers: [$($helpers:item)*])?
    ) => {
        $(#[$doc])*
        pub mod $module {
            pub use sandloom_sdk_infra::$module::*;
            $($($helpers)*)?

            sandloom_sdk_infra::$declaration!(
                [crate::providers::builtin_contract]
                [$module, $marker, $provider, $gate]
            );
        }
    };
}

// The marker, contract, provider trait and gate of a built-in capability, from its one
// declaration in sdk-infra (the callback of `sandloom_sdk_infra::__parse_operations!`).
macro_rules! builtin_contract {
    ([$module:ident, $marker:ident, $provider:ident, $gate:ident] {
        name: $name:literal, stability: $stability:ident,
        version: ($major:literal, $minor:literal, $patch:literal),
        features: [$($feature:literal),*], required: [$($required:expr),*],
        trait: [$(#[$attr:meta])*] $vis:vis $ops:ident $bounds:tt,
        native: $native:ident,
        bytes: $bytes:tt,
        operations: $operations:tt,
    }) => {
        #[doc = concat!(
            "The `", $name, "` contract as a type, at version ", stringify!($major), ".",
            stringify!($minor), ".", stringify!($patch), ": what `register_driver!` and the ",
            "conformance harness are given.\n\n",
            "```\n",
            "use sandloom_driverkit::Contract;\n",
            "use sandloom_driverkit::", stringify!($module), "::", stringify!($marker), ";\n",
            "assert_eq!(", stringify!($marker), "::NAME, \"", $name, "\");\n",
            "assert_eq!(", stringify!($marker), "::VERSION.major, ", stringify!($major), ");\n",
            "```"
        )]
        #[derive(Debug, Clone, Copy)]
        pub struct $marker;

        const _: () = assert!(
            crate::__private::disjoint(&[$($required),*], &[$($feature),*]),
            "a required operation is never a feature"
        );

        crate::__contract! {
            marker: $marker,
            name: $name,
            version: ($major, $minor, $patch),
            features: &[$($feature),*],
            operations: $ops,
            native: $native,
            provider: $provider,
            gate: $gate,
            provider_doc: [
                #[doc = concat!(
                    "\n```\n",
                    "use sandloom_driverkit::{", stringify!($module), "::", stringify!($provider), ", Version};\n",
                    "fn contract<P: ", stringify!($provider), ">() -> Version { P::CONTRACT_VERSION }\n",
                    "```"
                )]
            ],
        }

        crate::__gate! {
            [
                #[doc = concat!("A `", $name, "` driver behind its feature gate.")]
                // What `ProvidedBy::Gate` names; never written by a driver author.
                #[doc(hidden)]
                pub struct $gate for $marker
            ] {
                name: $name, stability: $stability, version: ($major, $minor, $patch),
                features: [$($feature),*], required: [$($required),*],
                trait: [$(#[$attr])*] $vis $ops $bounds,
                native: $native,
                bytes: $bytes,
                operations: $operations,
            }
        }
    };
}
pub(crate) use builtin_contract;

provider_module!(
    /// The `cache` contract for driver authors.
    ///
    /// Everything of `sandloom_driverkit::sdk::cache` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::cache::{self, CacheProvider};
    /// # use sandloom_driverkit::cache::CacheOps;
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyCache;
    /// # impl CacheOps for MyCache {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for MyCache {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyCache) }
    /// # }
    ///
    /// impl CacheProvider for MyCache {
    ///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// }
    ///
    /// assert_eq!(<MyCache as CacheProvider>::CONTRACT_VERSION, Version::new(1, 0, 0));
    /// assert_eq!(cache::NAME, "cache");
    /// assert_eq!(cache::FEATURES, [cache::TTL, cache::INCREMENT, cache::BULK]);
    /// ```
    cache, CacheProvider, CacheCapability, CacheGate, __cache_contract
);
provider_module!(
    /// The `notifier` contract for driver authors.
    ///
    /// Everything of `sandloom_driverkit::sdk::notifier` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::notifier::{self, NotifierProvider};
    /// # use sandloom_driverkit::notifier::{Message, NotifierOps, Receipt};
    /// # use sandloom_driverkit::sdk::InfraResult;
    ///
    /// pub struct MyNotifier;
    /// # impl NotifierOps for MyNotifier {
    /// #     async fn send(&self, _: &Message) -> InfraResult<Receipt> { Ok(Receipt::new("1")) }
    /// # }
    /// # impl Driver for MyNotifier {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyNotifier) }
    /// # }
    ///
    /// impl NotifierProvider for MyNotifier {
    ///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// }
    ///
    /// assert_eq!(<MyNotifier as NotifierProvider>::CONTRACT_VERSION, Version::new(1, 0, 0));
    /// assert_eq!(notifier::NAME, "notifier");
    /// assert_eq!(notifier::FEATURES, [notifier::BATCH]);
    /// ```
    notifier, NotifierProvider, NotifierCapability, NotifierGate, __notifier_contract
);
provider_module!(
    /// The `objectstore` contract for driver authors.
    ///
    /// Everything of `sandloom_driverkit::sdk::objectstore` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::objectstore::{self, ObjectStoreProvider};
    /// # use sandloom_driverkit::objectstore::{ListOptions, ListPage, ObjectMeta, ObjectStoreOps};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyStore;
    /// # impl ObjectStoreOps for MyStore {
    /// #     async fn put(&self, _: &str, _: Bytes) -> InfraResult<ObjectMeta> { unimplemented!() }
    /// #     async fn get(&self, _: &str) -> InfraResult<Bytes> { unimplemented!() }
    /// #     async fn head(&self, _: &str) -> InfraResult<ObjectMeta> { unimplemented!() }
    /// #     async fn delete(&self, _: &str) -> InfraResult<()> { unimplemented!() }
    /// #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { unimplemented!() }
    /// # }
    /// # impl Driver for MyStore {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyStore) }
    /// # }
    ///
    /// impl ObjectStoreProvider for MyStore {
    ///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// }
    ///
    /// assert_eq!(<MyStore as ObjectStoreProvider>::CONTRACT_VERSION, Version::new(1, 0, 0));
    /// assert_eq!(objectstore::NAME, "objectstore");
    /// assert_eq!(objectstore::FEATURES, [objectstore::ETAG, objectstore::CONDITIONAL_PUT]);
    /// assert!(objectstore::validate_key("a/../b").is_err()); // the key rule every store applies
    /// ```
    objectstore, ObjectStoreProvider, ObjectStoreCapability, ObjectStoreGate, __objectstore_contract
);
provider_module!(
    /// The `taskqueue` contract for driver authors.
    ///
    /// Everything of `sandloom_driverkit::sdk::taskqueue` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::taskqueue::{self, TaskQueueProvider};
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueueOps};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyQueue;
    /// # impl TaskQueueOps for MyQueue {
    /// #     async fn enqueue(&self, _: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> { unimplemented!() }
    /// #     async fn reserve(&self, _: &str, _: Duration) -> InfraResult<Option<Reservation>> { unimplemented!() }
    /// #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { unimplemented!() }
    /// #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { unimplemented!() }
    /// # }
    /// # impl Driver for MyQueue {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyQueue) }
    /// # }
    ///
    /// impl TaskQueueProvider for MyQueue {
    ///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// }
    ///
    /// assert_eq!(<MyQueue as TaskQueueProvider>::CONTRACT_VERSION, Version::new(1, 0, 0));
    /// assert_eq!(taskqueue::NAME, "taskqueue");
    /// assert_eq!(
    ///     taskqueue::FEATURES,
    ///     [taskqueue::DELAY, taskqueue::DEAD_LETTER, taskqueue::FIFO, taskqueue::DEDUPE]
    /// );
    /// ```
    taskqueue, TaskQueueProvider, TaskQueueCapability, TaskQueueGate, __taskqueue_contract
);
provider_module!(
    /// The `lock` contract for driver authors (stable since 1.0.0).
    ///
    /// Everything of `sandloom_driverkit::sdk::lock` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::lock::{self, LockProvider};
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::lock::{Lease, LockOps};
    /// # use sandloom_driverkit::sdk::InfraResult;
    ///
    /// pub struct MyLock;
    /// # impl LockOps for MyLock {
    /// #     async fn acquire(&self, _: &str, _: Duration) -> InfraResult<Option<Lease>> { unimplemented!() }
    /// #     async fn acquire_wait(&self, _: &str, _: Duration, _: Duration) -> InfraResult<Option<Lease>> { unimplemented!() }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { unimplemented!() }
    /// #     async fn refresh(&self, _: &Lease, _: Duration) -> InfraResult<Lease> { unimplemented!() }
    /// # }
    /// # impl Driver for MyLock {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyLock) }
    /// # }
    ///
    /// impl LockProvider for MyLock {
    ///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// }
    ///
    /// assert_eq!(<MyLock as LockProvider>::CONTRACT_VERSION, Version::new(1, 0, 0));
    /// assert_eq!(lock::NAME, "lock");
    /// assert_eq!(lock::FEATURES, [] as [&str; 0]);
    /// ```
    lock, LockProvider, LockCapability, LockGate, __lock_contract
);
provider_module!(
    /// The `secrets` contract for driver authors (1.0, stable).
    ///
    /// Everything of `sandloom_driverkit::sdk::secrets` (the operation trait, its values, the
    /// naming rule [`check_name`](sandloom_sdk_infra::secrets::check_name) and feature names)
    /// is re-exported here, next to the provider trait.
    /// A driver whose backend does not number its changes keeps the cursors of `changes` with
    /// [`ChangeLog`](secrets::ChangeLog), and, when it finds changes by polling, compares
    /// scans with [`PolledChanges`](secrets::PolledChanges).
    ///
    /// ```
    /// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::secrets::{self, SecretsProvider};
    /// # use sandloom_driverkit::secrets::SecretsOps;
    /// # use sandloom_driverkit::sdk::{InfraResult, Secret};
    ///
    /// pub struct MySecrets;
    /// # impl SecretsOps for MySecrets {
    /// #     async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
    /// #         secrets::check_name(name)?;
    /// #         Err(secrets::not_found(name))
    /// #     }
    /// # }
    /// # impl Driver for MySecrets {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MySecrets) }
    /// # }
    ///
    /// impl SecretsProvider for MySecrets {
    ///     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
    /// }
    ///
    /// assert_eq!(<MySecrets as SecretsProvider>::CONTRACT_VERSION, Version::new(0, 1, 0));
    /// assert_eq!(secrets::NAME, "secrets");
    /// assert_eq!(secrets::FEATURES, [secrets::VERSIONS, secrets::WATCH, secrets::LIST]);
    /// ```
    secrets, SecretsProvider, SecretsCapability, SecretsGate, __secrets_contract,
    // What a driver whose backend does not number its changes needs for `changes`.
    helpers: [pub use crate::changes::{ChangeLog, PolledChanges};]
);
