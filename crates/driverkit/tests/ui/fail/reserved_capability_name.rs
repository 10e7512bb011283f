use sandloom_driverkit::sdk::InfraResult;

// `cache` is the runtime's: defining it again would collide at startup (B021).
sandloom_driverkit::define_capability! {
    /// Another cache.
    pub capability MyCacheCapability {
        name: "cache",
        stability: Stable,
        contract_version: (1, 0, 0),
        features: [],
        key: MY_CACHE,
        provider: MyCacheProvider,
        ops: MyCacheOps,
        gate: MyCacheGate,
    }
    /// Operations.
    pub trait MyCache {
        /// Read.
        async fn get(&self, key: &str) -> InfraResult<Option<String>>;
    }
}

// `search` is reserved too (defined, not public).
sandloom_driverkit::define_capability! {
    /// Search.
    pub capability MySearchCapability {
        name: "search",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: [],
        key: MY_SEARCH,
        provider: MySearchProvider,
        ops: MySearchOps,
        gate: MySearchGate,
    }
    /// Operations.
    pub trait MySearch {
        /// Query.
        async fn query(&self, text: &str) -> InfraResult<Vec<String>>;
    }
}

fn main() {}
