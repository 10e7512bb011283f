//! `taskqueue.memory` passes the task queue conformance kit, with a dedupe window short enough
//! for the kit to see it end.

use std::time::Duration;

use sandloom_embedded::{MemoryTaskQueue, MemoryTaskQueueOptions};

/// The dedupe window the kit run configures, and declares to the kit.
const DEDUPE_WINDOW: Duration = Duration::from_secs(1);

sandloom_conformance::taskqueue_conformance!(
    MemoryTaskQueue,
    |request| MemoryTaskQueueOptions {
        visibility_timeout_ms: u64::try_from(request.visibility_timeout.as_millis())
            .unwrap_or(u64::MAX),
        max_attempts: request.max_attempts,
        dedupe_window_ms: u64::try_from(DEDUPE_WINDOW.as_millis()).unwrap_or(u64::MAX),
    },
    .dedupe_window(DEDUPE_WINDOW)
);
