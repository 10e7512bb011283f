//! Options of `taskqueue.memory`.

use serde::Deserialize;

/// Options of `taskqueue.memory`.
///
/// ```toml
/// [taskqueue.default]
/// driver = "memory"
/// visibility_timeout_ms = 30000   # default 30 000
/// max_attempts = 5                # default 5
/// dedupe_window_ms = 86400000     # default 86 400 000 (24 hours)
/// ```
///
/// ```
/// let options = sandloom_embedded::MemoryTaskQueueOptions::default();
/// assert_eq!((options.visibility_timeout_ms, options.max_attempts), (30_000, 5));
/// assert_eq!(options.dedupe_window_ms, 24 * 3600 * 1000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryTaskQueueOptions {
    /// How long a reserved task stays invisible to other consumers before it is delivered
    /// again, in milliseconds. At least 1.
    pub visibility_timeout_ms: u64,
    /// How many deliveries a task gets: after the last one is nacked or times out, the task
    /// is dead-lettered. At least 1.
    pub max_attempts: u32,
    /// How long the idempotency key of an acked task is remembered (feature `dedupe`), in
    /// milliseconds: until then an enqueue with the key returns the acked task's id and creates
    /// nothing; afterwards it creates a new task. 0 forgets the key as soon as the task is
    /// acked. Keys of tasks still in the queue, dead letters included, are always remembered.
    pub dedupe_window_ms: u64,
}

impl Default for MemoryTaskQueueOptions {
    fn default() -> Self {
        Self {
            visibility_timeout_ms: 30_000,
            max_attempts: 5,
            dedupe_window_ms: 24 * 3600 * 1000,
        }
    }
}
