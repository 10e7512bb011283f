//! `cache.memory`: an in-process cache on moka, bounded by entry count, with per-entry expiry.

mod options;
mod provider;

pub use options::MemoryCacheOptions;
pub use provider::MemoryCache;
