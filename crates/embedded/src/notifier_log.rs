//! `notifier.log`: messages written to the application's `tracing` subscriber.

mod options;
mod provider;

pub use options::{LogLevel, LogNotifierOptions};
pub use provider::LogNotifier;
pub(crate) use provider::validate_message;
