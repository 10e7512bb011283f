//! `taskqueue.memory` passes the task queue conformance kit.

use sandloom_embedded::{MemoryTaskQueue, MemoryTaskQueueOptions};

sandloom_driverkit::taskqueue_conformance!(MemoryTaskQueue, |request| MemoryTaskQueueOptions {
    visibility_timeout_ms: u64::try_from(request.visibility_timeout.as_millis())
        .unwrap_or(u64::MAX),
    max_attempts: request.max_attempts,
    ..MemoryTaskQueueOptions::default()
});
