use std::rc::Rc;

use sandloom_driverkit::cache::CacheOps;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::InfraResult;
// Providers are shared across threads; an `Rc` inside one must be refused.
pub struct RcCache(Rc<()>);

impl CacheOps for RcCache {
    async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
    async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
}

fn main() {}
