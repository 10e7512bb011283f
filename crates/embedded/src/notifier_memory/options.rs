//! Options of `notifier.memory`.

use serde::Deserialize;

/// Options of `notifier.memory`.
///
/// ```toml
/// [notifier.default]
/// driver = "memory"
/// capacity = 100   # messages kept, newest; default 1000
/// outbox = "orders" # read from tests with MemoryNotifier::outbox("orders"); default none
/// ```
///
/// ```
/// assert_eq!(sandloom_embedded::MemoryNotifierOptions::default().capacity, 1000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryNotifierOptions {
    /// How many of the most recent messages are kept; older ones are dropped. At least 1.
    pub capacity: usize,
    /// A name under which `MemoryNotifier::outbox` reads this instance's messages, for tests
    /// of code that reaches the notifier only as a `&dyn Notifier` through `Infra`.
    pub outbox: Option<String>,
}

impl Default for MemoryNotifierOptions {
    fn default() -> Self {
        Self {
            capacity: 1000,
            outbox: None,
        }
    }
}
