//! Helpers for tests that make a driver entry by hand, as driverkit's `register_driver!` would
//! make it: the entry, parsing the options, building the lifecycle from them; a lifecycle that
//! only answers health; and a log of what drivers did. The kernel's tests declare `mod support;`;
//! `crates/integration-tests/tests/test_health_http.rs` includes this file by `#[path]`.
//!
//! Each test binary compiles its own copy, so the event log is that binary's own.

#![allow(dead_code, unreachable_pub)] // each test binary uses its own part of the helpers

use std::sync::Mutex;

use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, DriverEntry, ErasedLifecycle, ParsedOptions,
    accepts_unknown_keys,
};
use sandloom_kernel::semver::Version;
use sandloom_kernel::{Health, OptionsError, RawOptions};
use serde::de::DeserializeOwned;

/// What builds a driver from its parsed options: [`DriverEntry::build`].
pub type Build = fn(ParsedOptions, &BuildContext<'_>) -> Result<BuiltDriver, BoxError>;

/// The entry of driver `name` of the `cache` capability, from `package`, written against
/// contract 1.0.0, declaring no feature, with options `O` (see [`parse`]) and built by `build`
/// (usually with [`build_with`]). Place it with `#[distributed_slice(DRIVERS)]`.
pub const fn cache_entry<O: DeserializeOwned + Send + 'static>(
    name: &'static str,
    package: &'static str,
    build: Build,
) -> DriverEntry {
    DriverEntry {
        capability: "cache",
        name,
        package,
        contract_version: Version::new(1, 0, 0),
        supported_features: no_features,
        parse_options: parse::<O>,
        accepts_unknown_keys: accepts_unknown_keys::<O>,
        options_schema: no_schema,
        build,
    }
}

/// A driver whose options describe no schema.
pub fn no_schema() -> Option<String> {
    None
}

/// A driver that declares no feature.
pub fn no_features() -> &'static [&'static str] {
    &[]
}

/// Deserialize options `O`, which give no feature.
pub fn parse<O: DeserializeOwned + Send + 'static>(
    raw: &RawOptions,
) -> Result<ParsedOptions, OptionsError> {
    let options: O = raw.deserialize()?;
    Ok(ParsedOptions {
        value: Box::new(options),
        features: Vec::new(),
    })
}

/// A driver whose lifecycle `lifecycle` makes from its options `O` (parsed by [`parse`]), with
/// no operations.
///
/// # Errors
/// When the parsed options are not an `O`.
pub fn build_with<O: 'static, L: ErasedLifecycle + 'static>(
    parsed: ParsedOptions,
    lifecycle: impl FnOnce(O) -> L,
) -> Result<BuiltDriver, BoxError> {
    let options = parsed
        .value
        .downcast::<O>()
        .map_err(|_| "options of another type")?;
    Ok(BuiltDriver {
        lifecycle: std::sync::Arc::new(lifecycle(*options)),
        operations: Box::new(()),
        route: None,
    })
}

/// A lifecycle whose `start` and `stop` succeed doing nothing and whose health is what `check`
/// answers for `id`.
pub struct HealthOnly {
    /// What `check` is asked about (an instance name, an id in the options).
    pub id: String,
    /// The health check.
    pub check: fn(&str) -> BoxFuture<'_, Health>,
}

impl ErasedLifecycle for HealthOnly {
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async { Ok(()) })
    }

    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async { Ok(()) })
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        (self.check)(&self.id)
    }
}

/// What each driver did, in order, by id.
static EVENTS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Log that the driver `id` did `event`.
pub fn record(id: &str, event: impl Into<String>) {
    EVENTS.lock().unwrap().push((id.to_owned(), event.into()));
}

/// What the driver `id` did, in order.
pub fn events(id: &str) -> Vec<String> {
    EVENTS
        .lock()
        .unwrap()
        .iter()
        .filter(|(of, _)| of == id)
        .map(|(_, event)| event.clone())
        .collect()
}
