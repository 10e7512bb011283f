//! Every built-in driver passes the conformance kit of its contract.

use sandloom_embedded::{MemoryCache, MemoryCacheOptions};

sandloom_conformance::cache_conformance!(MemoryCache, |_request| MemoryCacheOptions::default());
