//! Shared helpers for the integration tests.
#![allow(dead_code, unreachable_pub)]

use sandloom::{InfraConfig, Kernel, LinkedDrivers, Problem, Running, StartupError};

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
