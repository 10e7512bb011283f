//! `taskqueue.memory`: named in-process queues with visibility timeouts, dead letters and
//! idempotency keys.

mod options;
mod provider;

pub use options::MemoryTaskQueueOptions;
pub use provider::MemoryTaskQueue;
