use sandloom_driverkit::{Driver, DriverError, NoOptions};

pub struct Engine;

impl Driver for Engine {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] { &[] }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Engine) }
}

// `fulltext` is not built in: the short form cannot name it.
sandloom_driverkit::register_driver!(fulltext, "engine", Engine);

fn main() {}
