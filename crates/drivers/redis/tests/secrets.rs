//! The password of the `url` never shows: not in `Debug` of the options or the driver, not in
//! the errors of `validate`, `start` or operations, not in what the driver logs.

mod support;

use std::fmt::Write as _;

use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_test_support::LogCapture;
use support::{OwnRedis, free_port};

const SECRET: &str = "hunter2-secret";

/// Everything `error` says, its causes included.
fn full_text(error: &dyn std::error::Error) -> String {
    let mut text = format!("{error} / {error:?}");
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(text, " / {cause} / {cause:?}");
        source = cause.source();
    }
    text
}

#[test]
fn debug_output_redacts_the_password() {
    for url in [
        format!("redis://:{SECRET}@127.0.0.1:1"),
        format!("redis://admin:{SECRET}@127.0.0.1:6379/2"),
        format!("rediss://admin:{SECRET}@cache.internal:6380"),
        format!("redis+unix:///run/redis.sock?pass={SECRET}"),
    ] {
        let options = RedisCacheOptions {
            url: url.clone().into(),
            ..RedisCacheOptions::default()
        };
        let shown = format!("{options:?} {options:#?}");
        assert!(!shown.contains(SECRET), "{shown}");
        let cache = RedisCache::from_options(options).unwrap();
        let shown = format!("{cache:?} {cache:#?}");
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(shown.contains("***"), "{shown}");
    }
}

#[test]
fn validation_errors_never_echo_the_password() {
    for url in [
        format!("redis://:{SECRET}@127.0.0.1:1/not-a-db"),
        format!("redis://:{SECRET}@/"),
        format!("rediss://:{SECRET}@127.0.0.1/#insecure"),
        format!("http://:{SECRET}@127.0.0.1"),
        format!(":{SECRET}@127.0.0.1"),
    ] {
        let options = RedisCacheOptions {
            url: url.into(),
            ..RedisCacheOptions::default()
        };
        let err = RedisCache::validate(&options).unwrap_err();
        let text = full_text(&err);
        assert!(!text.contains(SECRET), "{text}");
        assert!(RedisCache::from_options(options).is_err());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn start_errors_operation_errors_and_logs_never_show_the_password() {
    let captured = LogCapture::new();
    let _guard = captured.set_default(tracing::Level::TRACE);

    // Unreachable at start: a closed port.
    let url = format!("redis://:{SECRET}@127.0.0.1:{}", free_port());
    let cache = RedisCache::from_options(RedisCacheOptions {
        url: url.into(),
        ..RedisCacheOptions::default()
    })
    .unwrap();
    let err = cache.start().await.unwrap_err();
    let text = full_text(&err);
    assert!(text.contains("***@127.0.0.1"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    let err = cache.get("k").await.unwrap_err();
    assert!(!full_text(&err).contains(SECRET));
    assert!(!format!("{:?}", cache.health().await).contains(SECRET));

    // Reachable, with the password, then gone: the operation errors and health.
    let mut server = OwnRedis::start_with(free_port(), &["--requirepass", SECRET]);
    let cache = RedisCache::from_options(RedisCacheOptions {
        url: format!("redis://:{SECRET}@127.0.0.1:{}", server.port).into(),
        connect_timeout_ms: 1000,
        response_timeout_ms: 500,
        ..RedisCacheOptions::default()
    })
    .unwrap();
    cache.start().await.unwrap();
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();
    server.kill();
    for _ in 0..2 {
        let err = cache.get("k").await.unwrap_err();
        assert!(!full_text(&err).contains(SECRET), "{}", full_text(&err));
        let health = format!("{:?}", cache.health().await);
        assert!(!health.contains(SECRET), "{health}");
    }
    cache.stop().await.unwrap();

    let logs = captured.text();
    assert!(
        logs.contains("cache.redis connected"),
        "nothing was logged: {logs}"
    );
    assert!(logs.contains("***@127.0.0.1"), "{logs}");
    assert!(!logs.contains(SECRET), "{logs}");
}
