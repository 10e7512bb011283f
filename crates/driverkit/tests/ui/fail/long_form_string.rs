use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions};

pub struct MyCache;

#[async_trait]
impl Cache for MyCache {
    async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
}

#[async_trait]
impl Driver for MyCache {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyCache) }
}

// A built-in capability registered with the long form would bypass its provider trait.
sandloom_driverkit::register_driver!(
    capability = "cache",
    driver = "sneaky",
    provider = MyCache,
    operations = dyn Cache,
    contract = sandloom_driverkit::Version::new(1, 0, 0),
);

fn main() {}
