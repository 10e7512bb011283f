//! Shared helpers for the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use sandloom::{InfraConfig, Kernel, LinkedDrivers, Problem, Running, StartupError};

/// Long enough for something a test waits for to happen on a busy machine; a test that passes
/// never waits this long.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Wait until `done` holds, looking every 20 ms; panics naming `what` after [`PATIENCE`].
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The configuration version `capability.instance` runs (`Running::versions`).
pub fn version(running: &Running, capability: &str, instance: &str) -> u64 {
    running
        .versions()
        .into_iter()
        .find(|(c, i, _)| c == capability && i == instance)
        .map_or_else(
            || panic!("no instance {capability}.{instance}"),
            |(_, _, v)| v,
        )
}

/// Parse INFRA text, panicking with the error if it is malformed (tests of valid configs).
pub fn config(text: &str) -> InfraConfig {
    InfraConfig::from_toml_str(text, "infra.toml").unwrap_or_else(|err| panic!("{err}"))
}

/// Start a kernel on `text`.
pub async fn start(text: &str, linked: LinkedDrivers) -> Result<Running, StartupError> {
    Kernel::new(config(text), linked).start().await
}

/// Start, expecting a refusal; returns the error.
pub async fn refused(text: &str, linked: LinkedDrivers) -> StartupError {
    match start(text, linked).await {
        Ok(running) => {
            let report = running.report().to_string();
            let _ = running.shutdown().await;
            panic!("startup should have been refused, but started:\n{report}")
        }
        Err(err) => err,
    }
}

/// The only problem of `err`, asserting there is exactly one.
pub fn only(err: &StartupError) -> &Problem {
    assert_eq!(err.problems().len(), 1, "expected one problem, got:\n{err}");
    &err.problems()[0]
}
