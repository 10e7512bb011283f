use sandloom_driverkit::{Driver, DriverError, NoOptions};

pub struct Searcher;

impl Driver for Searcher {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Searcher) }
}

// A capability named by a string: the long form takes the contract's marker type.
sandloom_driverkit::register_driver!(capability = "fulltext", driver = "mine", provider = Searcher);

fn main() {}
