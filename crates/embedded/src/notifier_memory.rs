//! `notifier.memory`: keeps sent messages in memory, for tests and local runs.

mod options;
mod provider;

pub use options::MemoryNotifierOptions;
pub use provider::MemoryNotifier;
