//! Helpers shared by driverkit's integration tests; each test binary declares `mod support;` and
//! uses what it needs.

#![allow(unreachable_pub)] // public to the test binaries that declare the module

pub mod gate;
