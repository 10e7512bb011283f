//! What the server tests share: where the S3 server is, and options for it.

#![allow(dead_code)] // each test binary uses a part of it

use std::time::{SystemTime, UNIX_EPOCH};

use sandloom_driver_s3::S3ObjectStoreOptions;

/// The S3 endpoint, read at run time (falling back to the value at build time).
pub(crate) fn endpoint() -> String {
    std::env::var("SANDLOOM_TEST_S3_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_S3_URL").map(str::to_owned))
        .unwrap_or_else(|| "http://127.0.0.1:5077".to_owned())
}

/// The test bucket.
pub(crate) fn bucket() -> String {
    std::env::var("SANDLOOM_TEST_S3_BUCKET")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_S3_BUCKET").map(str::to_owned))
        .unwrap_or_else(|| "sandloom-test".to_owned())
}

/// A name no earlier run used: the bucket outlives test runs.
pub(crate) fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{name}-{}-{nanos}", std::process::id())
}

/// Options for the test server with every key under `prefix`.
pub(crate) fn options(prefix: &str) -> S3ObjectStoreOptions {
    S3ObjectStoreOptions {
        endpoint: Some(endpoint().into()),
        bucket: bucket(),
        access_key_id: Some("test".into()),
        secret_access_key: Some("test".into()),
        prefix: Some(prefix.to_owned()),
        // moto lists by walking the whole bucket without a lock: a delete in a concurrent
        // obligation makes it answer 500 now and then, and only a retry gets through. Enough
        // retries to outlast the busiest obligation's churn.
        max_retries: 10,
        retry_timeout_ms: 30_000,
        retry_max_backoff_ms: 1000,
        ..Default::default()
    }
}
