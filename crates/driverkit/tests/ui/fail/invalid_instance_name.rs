use sandloom_driverkit::sdk::{requires, CACHE};

// Instance names are checked where they are declared.
requires!(CACHE, "Bad Name");

fn main() {}
