//! `cache.redis` passes the conformance kit of the `cache` contract against a real Redis: once
//! with plain entries, once with `default_ttl_ms` (which changes how `set`, `set_many` and the
//! first `increment` write). Each obligation gets its own key prefix, so runs never collide.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sandloom_conformance::KitRequest;
use sandloom_driver_redis::{RedisCache, RedisCacheOptions};

fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_REDIS_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_REDIS_URL").map(str::to_owned))
        .unwrap_or_else(|| "redis://127.0.0.1:6379".to_owned())
}

// No `.secrets(…)`: the kit plants a password of its own in `url` (a `SecretUrl`, described
// as a `redis://` address) and checks it shows nowhere; the test server takes no password, so
// a declared one could only go where the planted one already does.

/// The kit's namespace is unique per obligation and process; the time and a counter make it
/// unique across runs too, since process ids are reused and the server outlives the tests.
fn prefix(request: &KitRequest) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("sandloom-test:{}:{nanos}-{n}", request.namespace)
}

sandloom_conformance::cache_conformance!(
    #[cfg_attr(
        not(sandloom_test_redis),
        ignore = "needs a real server: set SANDLOOM_TEST_REDIS_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    plain: RedisCache,
    |request| RedisCacheOptions {
        url: server_url().into(),
        prefix: Some(prefix(request)),
        ..RedisCacheOptions::default()
    }
);

sandloom_conformance::cache_conformance!(
    #[cfg_attr(
        not(sandloom_test_redis),
        ignore = "needs a real server: set SANDLOOM_TEST_REDIS_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    with_default_ttl: RedisCache,
    |request| RedisCacheOptions {
        url: server_url().into(),
        prefix: Some(prefix(request)),
        // Long enough for every obligation, short enough that the kit's keys do not pile up
        // on a shared server.
        default_ttl_ms: Some(120_000),
        ..RedisCacheOptions::default()
    }
);
