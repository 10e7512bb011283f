//! One provider trait per built-in capability: the operation trait, plus [`Driver`], plus a
//! required contract version.

macro_rules! provider_module {
    (
        $(#[$doc:meta])*
        $module:ident, $ops:ident, $provider:ident, $version:literal
    ) => {
        $(#[$doc])*
        pub mod $module {
            pub use sandloom_sdk_infra::$module::*;

            use crate::{Driver, Version};

            #[doc = concat!(
                "A driver of the `", stringify!($module), "` capability: [`", stringify!($ops),
                "`] plus [`Driver`] plus the contract version it was written against.\n\n",
                "`CONTRACT_VERSION` has no default: a provider without one does not compile. ",
                "The current contract is ", $version, "; a driver targeting another major is ",
                "refused at startup with SANDLOOM-B022.\n\n",
                "```\n",
                "use sandloom_driverkit::{", stringify!($module), "::", stringify!($provider), ", Version};\n",
                "fn contract<P: ", stringify!($provider), ">() -> Version { P::CONTRACT_VERSION }\n",
                "```"
            )]
            pub trait $provider: $ops + Driver {
                /// The contract version this driver implements.
                const CONTRACT_VERSION: Version;
            }
        }
    };
}

provider_module!(
    /// The `cache` contract for driver authors: contract 1.0.0.
    ///
    /// Everything of `sandloom_driverkit::sdk::cache` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::cache::{self, CacheProvider};
    /// # use sandloom_driverkit::cache::Cache;
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyCache;
    /// # #[async_trait]
    /// # impl Cache for MyCache {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # #[async_trait]
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
    cache, Cache, CacheProvider, "1.0.0"
);
provider_module!(
    /// The `notifier` contract for driver authors: contract 1.0.0.
    ///
    /// Everything of `sandloom_driverkit::sdk::notifier` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::notifier::{self, NotifierProvider};
    /// # use sandloom_driverkit::notifier::{Message, Notifier, Receipt};
    /// # use sandloom_driverkit::sdk::InfraResult;
    ///
    /// pub struct MyNotifier;
    /// # #[async_trait]
    /// # impl Notifier for MyNotifier {
    /// #     async fn send(&self, _: &Message) -> InfraResult<Receipt> { Ok(Receipt::new("1")) }
    /// # }
    /// # #[async_trait]
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
    notifier, Notifier, NotifierProvider, "1.0.0"
);
provider_module!(
    /// The `objectstore` contract for driver authors: contract 1.0.0.
    ///
    /// Everything of `sandloom_driverkit::sdk::objectstore` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::objectstore::{self, ObjectStoreProvider};
    /// # use sandloom_driverkit::objectstore::{ListOptions, ListPage, ObjectMeta, ObjectStore};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyStore;
    /// # #[async_trait]
    /// # impl ObjectStore for MyStore {
    /// #     async fn put(&self, _: &str, _: Bytes) -> InfraResult<ObjectMeta> { unimplemented!() }
    /// #     async fn get(&self, _: &str) -> InfraResult<Bytes> { unimplemented!() }
    /// #     async fn head(&self, _: &str) -> InfraResult<ObjectMeta> { unimplemented!() }
    /// #     async fn delete(&self, _: &str) -> InfraResult<()> { unimplemented!() }
    /// #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { unimplemented!() }
    /// # }
    /// # #[async_trait]
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
    objectstore, ObjectStore, ObjectStoreProvider, "1.0.0"
);
provider_module!(
    /// The `taskqueue` contract for driver authors: contract 1.0.0.
    ///
    /// Everything of `sandloom_driverkit::sdk::taskqueue` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::taskqueue::{self, TaskQueueProvider};
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueue};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    ///
    /// pub struct MyQueue;
    /// # #[async_trait]
    /// # impl TaskQueue for MyQueue {
    /// #     async fn enqueue(&self, _: &str, _: Bytes, _: EnqueueOptions) -> InfraResult<String> { unimplemented!() }
    /// #     async fn reserve(&self, _: &str, _: Duration) -> InfraResult<Option<Reservation>> { unimplemented!() }
    /// #     async fn ack(&self, _: &Reservation) -> InfraResult<()> { unimplemented!() }
    /// #     async fn nack(&self, _: &Reservation, _: Option<Duration>) -> InfraResult<()> { unimplemented!() }
    /// # }
    /// # #[async_trait]
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
    /// assert_eq!(taskqueue::FEATURES, [taskqueue::DELAY, taskqueue::DEAD_LETTER, taskqueue::FIFO]);
    /// ```
    taskqueue, TaskQueue, TaskQueueProvider, "1.0.0"
);
provider_module!(
    /// The experimental `lock` contract for driver authors: contract 0.1.0, which may change in a
    /// minor release.
    ///
    /// Everything of `sandloom_driverkit::sdk::lock` (the operation trait, its values and
    /// feature names) is re-exported here, next to the provider trait.
    ///
    /// ```
    /// use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions, Version};
    /// use sandloom_driverkit::lock::{self, LockProvider};
    /// # use std::time::Duration;
    /// # use sandloom_driverkit::lock::{Lease, Lock};
    /// # use sandloom_driverkit::sdk::InfraResult;
    ///
    /// pub struct MyLock;
    /// # #[async_trait]
    /// # impl Lock for MyLock {
    /// #     async fn acquire(&self, _: &str, _: Duration) -> InfraResult<Option<Lease>> { unimplemented!() }
    /// #     async fn release(&self, _: &Lease) -> InfraResult<bool> { unimplemented!() }
    /// #     async fn refresh(&self, _: &Lease, _: Duration) -> InfraResult<Lease> { unimplemented!() }
    /// # }
    /// # #[async_trait]
    /// # impl Driver for MyLock {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyLock) }
    /// # }
    ///
    /// impl LockProvider for MyLock {
    ///     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
    /// }
    ///
    /// assert_eq!(<MyLock as LockProvider>::CONTRACT_VERSION, Version::new(0, 1, 0));
    /// assert_eq!(lock::NAME, "lock");
    /// assert_eq!(lock::FEATURES, [] as [&str; 0]);
    /// ```
    lock, Lock, LockProvider, "0.1.0"
);
