use sandloom_driverkit::{Driver, DriverError, NoOptions};

pub struct Searcher;

impl Driver for Searcher {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Searcher) }
}

// `search` is reserved by the runtime but has no operation trait yet: no marker type to name.
sandloom_driverkit::register_driver!(capability = "search", driver = "mine", provider = Searcher);
sandloom_driverkit::register_driver!(workflow, "mine", Searcher);
// `cache` is built in: the short form names it.
sandloom_driverkit::register_driver!(capability = "cache", driver = "mine", provider = Searcher);

fn main() {}
