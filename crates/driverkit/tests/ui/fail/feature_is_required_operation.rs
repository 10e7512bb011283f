use sandloom_driverkit::sdk::InfraResult;

// `get` is listed as a feature but written without #[feature]: a required operation.
sandloom_driverkit::define_capability! {
    /// A key-value store.
    pub capability KvCapability {
        name: "kv",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: ["get"],
        key: KV,
        provider: KvProvider,
        ops: KvOps,
        gate: KvGate,
    }
    /// Operations.
    pub trait Kv {
        /// Read.
        async fn get(&self, key: &str) -> InfraResult<Option<String>>;
        /// Write.
        async fn put(&self, key: &str, value: String) -> InfraResult<()>;
    }
}

fn main() {}
