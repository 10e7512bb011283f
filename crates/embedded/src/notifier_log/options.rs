//! Options of `notifier.log`.

use serde::Deserialize;

/// The `tracing` level `notifier.log` writes at. Written in `INFRA` as `"debug"`, `"info"` or
/// `"warn"`.
///
/// ```
/// assert_eq!(sandloom_embedded::LogLevel::default(), sandloom_embedded::LogLevel::Info);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `tracing::Level::DEBUG`.
    Debug,
    /// `tracing::Level::INFO` (the default).
    #[default]
    Info,
    /// `tracing::Level::WARN`.
    Warn,
}

/// Options of `notifier.log`.
///
/// ```toml
/// [notifier.default]
/// driver = "log"
/// level = "warn"   # "debug" | "info" (default) | "warn"
/// ```
///
/// ```
/// use sandloom_embedded::{LogLevel, LogNotifierOptions};
/// assert_eq!(LogNotifierOptions::default().level, LogLevel::Info);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LogNotifierOptions {
    /// The level of the events written for messages.
    #[schemars(extend("default" = "info"))]
    pub level: LogLevel,
}
