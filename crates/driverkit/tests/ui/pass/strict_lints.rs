#![deny(warnings, unsafe_code, missing_docs, unreachable_pub, rust_2018_idioms)]
#![deny(clippy::all, clippy::pedantic)]
//! Macro output is clean under strict user lints.
#![allow(missing_docs)]
use sandloom_driverkit::cache::CacheOps;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, NoOptions};

/// A cache.
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

sandloom_driverkit::register_driver!(cache, "strict", MyCache);

sandloom_driverkit::define_capability! {
    /// A capability of this package.
    pub capability StrictCapability {
        name: "strict_capability",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: ["fast", "wide"],
        key: STRICT,
        provider: StrictProvider,
        ops: StrictOps,
        gate: StrictGate,
    }
    /// Its operations.
    pub trait Strict {
        /// Run.
        #[feature = "wide", when = count > 10, operation = "run more than 10 times"]
        #[feature = "fast", when = input.is_empty(), operation = "run on nothing"]
        async fn run(&self, input: &str, count: u32) -> InfraResult<String>;
        /// Run fast.
        #[feature = "fast"]
        async fn run_fast(&self, input: &str) -> InfraResult<String>;
    }
}

impl StrictOps for MyCache {
    async fn run(&self, input: &str, _count: u32) -> InfraResult<String> { Ok(input.to_owned()) }
}

impl StrictProvider for MyCache {
    const CONTRACT_VERSION: sandloom_driverkit::Version = sandloom_driverkit::Version::new(0, 1, 0);
}

sandloom_driverkit::register_driver!(capability = StrictCapability, driver = "strict", provider = MyCache);

fn main() {}
