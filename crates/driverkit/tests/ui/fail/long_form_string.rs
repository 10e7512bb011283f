use sandloom_driverkit::{async_trait, Driver, DriverError, NoOptions};

pub struct Searcher;

#[async_trait]
impl Driver for Searcher {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Searcher) }
}

// `search` is defined by the runtime but has no operation trait yet: no driver can serve it.
sandloom_driverkit::register_driver!(capability = "search", driver = "mine", provider = Searcher);

fn main() {}
