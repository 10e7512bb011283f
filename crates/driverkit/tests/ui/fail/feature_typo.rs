use sandloom_driverkit::sdk::InfraResult;

sandloom_driverkit::define_capability! {
    /// Full-text search.
    pub capability FulltextCapability {
        name: "fulltext",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: ["prefix", "fuzzy"],
        key: FULLTEXT,
        provider: FulltextProvider,
        ops: FulltextOps,
        gate: FulltextGate,
    }
    /// Operations.
    pub trait Fulltext {
        /// Query.
        async fn query(&self, text: &str) -> InfraResult<Vec<String>>;
        /// Query, forgiving typos.
        #[feature = "fuzy"]
        async fn fuzzy_query(&self, text: &str) -> InfraResult<Vec<String>>;
    }
}

fn main() {}
