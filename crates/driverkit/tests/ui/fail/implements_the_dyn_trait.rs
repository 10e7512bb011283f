//! A driver author implements the trait modules call (`Cache`) instead of its native twin
//! (`CacheOps`), as drivers did with `#[async_trait]`: the provider trait asks for `CacheOps`.

use sandloom_driverkit::cache::{Cache, CacheProvider};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};

pub struct Old;

impl Cache for Old {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        Ok(None)
    }
    async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _key: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

impl Driver for Old {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Old)
    }
}

impl CacheProvider for Old {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

fn main() {}
