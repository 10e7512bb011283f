//! A driver written with plain `async fn`: no `#[async_trait]` on the operations, on `Driver`'s
//! lifecycle, or anywhere. Modules call it through `&dyn Cache`.

use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, Health, NoOptions, Version};

pub struct Plain(std::sync::Mutex<Option<Bytes>>);

impl CacheOps for Plain {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        Ok(self.0.lock().unwrap().clone())
    }

    async fn set(&self, _key: &str, value: Bytes) -> InfraResult<()> {
        *self.0.lock().unwrap() = Some(value);
        Ok(())
    }

    async fn delete(&self, _key: &str) -> InfraResult<bool> {
        Ok(self.0.lock().unwrap().take().is_some())
    }

    // An optional operation, overridden like any other.
    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        let value = self.0.lock().unwrap().clone();
        Ok(keys.iter().map(|_| value.clone()).collect())
    }
}

impl Driver for Plain {
    type Options = NoOptions;

    fn supported_features() -> &'static [&'static str] {
        &["bulk"]
    }

    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Plain(std::sync::Mutex::new(None)))
    }

    async fn start(&self) -> Result<(), DriverError> {
        Ok(())
    }

    async fn health(&self) -> Health {
        Health::Healthy
    }
}

impl CacheProvider for Plain {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

sandloom_driverkit::register_driver!(cache, "plain", Plain);

// What a module holds.
async fn remember(cache: &dyn Cache) -> InfraResult<Option<Bytes>> {
    cache.set("k", Bytes::from_static(b"v")).await?;
    cache.get("k").await
}

fn main() {
    let driver = Plain::from_options(NoOptions {}).unwrap();
    let _ = remember(&driver);
}
