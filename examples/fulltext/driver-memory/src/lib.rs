//! # sandloom-example-fulltext-memory — `fulltext.memory`
//!
//! A driver for a capability that another package defines (`fulltext`, from
//! `sandloom-example-fulltext-contracts`): an in-memory inverted index. It has the shape of any
//! driver crate — options, provider, registration — and registers with the long form of
//! `register_driver!`, naming the contract's marker type.
//!
//! Options: `prefix` (bool, default `true`) declares the feature `prefix`.
//!
//! ```
//! use sandloom_example_fulltext_memory::{MemoryFulltext, MemoryOptions};
//! use sandloom_example_fulltext_contracts::{Fulltext, PREFIX};
//! use sandloom_driverkit::Driver;
//!
//! assert_eq!(MemoryFulltext::features_for(&MemoryOptions { prefix: false }), [] as [&str; 0]);
//! assert_eq!(MemoryFulltext::features_for(&MemoryOptions::default()), [PREFIX]);
//! ```

mod options;
mod provider;

pub use options::MemoryOptions;
pub use provider::MemoryFulltext;

sandloom_driverkit::register_driver!(
    capability = sandloom_example_fulltext_contracts::FulltextCapability,
    driver = "memory",
    provider = MemoryFulltext,
);
