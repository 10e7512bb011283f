//! `lock.redis` passes the conformance kit of the `lock` contract against a real Redis. Each
//! obligation gets its own key prefix, so runs never collide.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sandloom_conformance::KitRequest;
use sandloom_driver_redis::{RedisLock, RedisLockOptions};

fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_REDIS_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_REDIS_URL").map(str::to_owned))
        .unwrap_or_else(|| "redis://127.0.0.1:6379".to_owned())
}

/// The password of the kit's instance pointed at an unreachable address (the test server has
/// none); the kit checks it shows nowhere.
const PASSWORD: &str = "sandloom-kit-redis-lock-password";

/// Unique per obligation, process and run: the server outlives the tests.
fn prefix(request: &KitRequest) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("sandloom-test:{}:{nanos}-{n}", request.namespace)
}

sandloom_conformance::lock_conformance!(
    #[cfg_attr(
        not(sandloom_test_redis),
        ignore = "needs a real server: set SANDLOOM_TEST_REDIS_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    RedisLock,
    |request| RedisLockOptions {
        url: if request.unreachable {
            format!("redis://:{PASSWORD}@127.0.0.1:1").into()
        } else {
            server_url().into()
        },
        prefix: prefix(request),
        ..RedisLockOptions::default()
    },
    .secrets([PASSWORD])
);
