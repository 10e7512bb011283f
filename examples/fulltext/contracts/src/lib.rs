//! # sandloom-example-fulltext-contracts — a capability defined by a package of its own
//!
//! `fulltext`: documents indexed by id, found by the words they contain. This crate is what a
//! package that defines a capability ships: the contract, and the kit that holds every driver of
//! it to the contract.
//!
//! - **Modules** depend on this crate and `sandloom-sdk-infra`, and reach the capability with
//!   [`FULLTEXT`] (`infra.capability(&FULLTEXT, "default")`), never through a driver.
//! - **Drivers** implement [`Fulltext`] and [`FulltextProvider`] and register with
//!   `sandloom_driverkit::register_driver!(capability = FulltextCapability, driver = "…",
//!   provider = MyDriver)`; their tests run [`fulltext_conformance!`] (feature `conformance`).
//! - **Applications** select a driver with `[fulltext.default] driver = "memory"` in `INFRA`.
//!
//! ## The contract (0.1.0, experimental)
//!
//! A document is split into words at every character that is not alphanumeric, and compared in
//! lowercase. [`Fulltext::search`] answers the ids of the documents that contain every word of
//! the query, sorted, at most `limit` of them; a query without a word is `InvalidInput`.
//! Indexing an id again replaces its text. Ids are non-empty. The optional feature `prefix`
//! adds [`Fulltext::search_prefix`]: the documents with a word that starts with the prefix.
//!
//! ```
//! use sandloom_example_fulltext_contracts::{FULLTEXT, PREFIX};
//! assert_eq!(FULLTEXT.name(), "fulltext");
//! assert_eq!(PREFIX, "prefix");
//! ```

use sandloom_driverkit::sdk::InfraResult;

/// Feature: [`Fulltext::search_prefix`].
pub const PREFIX: &str = "prefix";

sandloom_driverkit::define_capability! {
    /// The `fulltext` contract: documents indexed by id, found by their words.
    pub capability FulltextCapability {
        name: "fulltext",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: ["prefix"],
        key: FULLTEXT,
        provider: FulltextProvider,
        ops: FulltextOps,
        gate: FulltextGate,
    }
    /// What modules call. Every error is an `InfraError` of the module door.
    pub trait Fulltext {
        /// Index `text` under `id`, replacing what `id` had. An empty `id` is `InvalidInput`.
        async fn index(&self, id: &str, text: &str) -> InfraResult<()>;
        /// Remove `id`; `true` when it was indexed.
        async fn remove(&self, id: &str) -> InfraResult<bool>;
        /// The ids of the documents containing every word of `query`, sorted, at most `limit`.
        async fn search(&self, query: &str, limit: usize) -> InfraResult<Vec<String>>;
        /// The ids of the documents with a word starting with `prefix`, sorted, at most `limit`.
        #[feature = "prefix"]
        async fn search_prefix(&self, prefix: &str, limit: usize) -> InfraResult<Vec<String>>;
    }
}

/// The words of `text`, as the contract defines them: split at every character that is not
/// alphanumeric, lowercased, empty ones dropped.
///
/// ```
/// use sandloom_example_fulltext_contracts::words;
/// assert_eq!(words("Hello, World! héllo"), ["hello", "world", "héllo"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The conformance kit of `fulltext` (feature `conformance`).
#[cfg(feature = "conformance")]
pub mod kit;
