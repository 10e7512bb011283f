use sandloom_driverkit::cache::CacheOps;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, NoOptions};

pub struct MyCache;

impl CacheOps for MyCache {
    async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
}

impl Driver for MyCache {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyCache) }
}


impl sandloom_driverkit::cache::CacheProvider for MyCache {
    const CONTRACT_VERSION: sandloom_driverkit::Version = sandloom_driverkit::Version::new(1, 0, 0);
}

// A cache registered as a notifier.
sandloom_driverkit::register_driver!(notifier, "mine", MyCache);

fn main() {}
