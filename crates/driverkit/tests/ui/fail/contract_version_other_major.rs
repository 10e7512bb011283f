use sandloom_driverkit::sdk::InfraResult;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};

sandloom_driverkit::define_capability! {
    /// Full-text search.
    pub capability FulltextCapability {
        name: "fulltext",
        stability: Stable,
        contract_version: (1, 2, 0),
        features: [],
        key: FULLTEXT,
        provider: FulltextProvider,
        ops: FulltextOps,
        gate: FulltextGate,
    }
    /// Operations.
    pub trait Fulltext {
        /// Query.
        async fn query(&self, text: &str) -> InfraResult<Vec<String>>;
    }
}

pub struct Engine;

impl FulltextOps for Engine {
    async fn query(&self, _: &str) -> InfraResult<Vec<String>> { Ok(Vec::new()) }
}

impl Driver for Engine {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Engine) }
}

// The contract this crate compiles against is 1.2.0; the driver says 2.0.0.
impl FulltextProvider for Engine {
    const CONTRACT_VERSION: Version = Version::new(2, 0, 0);
}

sandloom_driverkit::register_driver!(capability = FulltextCapability, driver = "engine", provider = Engine);

fn main() {}
