use sandloom_driverkit::sdk::{requires, CACHE};

// `__` separates the levels of a `SANDLOOM__…` override: INFRA refuses these names, so
// `requires!` does too.
requires!(CACHE, "eu_");
requires!(CACHE, "eu__west");
// A leading `_` is unambiguous, and fine.
requires!(CACHE, "_local");

fn main() {}
