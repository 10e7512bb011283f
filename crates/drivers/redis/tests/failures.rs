//! `cache.redis` against real failures: a server that is not there at start, one that never
//! answers, one that is killed and restarted on the same port, one that freezes, one that
//! wants a password. Each test runs its own `redis-server` (it must be on PATH).

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraResult};
use support::{OwnRedis, free_port};

fn options(url: String) -> RedisCacheOptions {
    RedisCacheOptions {
        url: url.into(),
        connect_timeout_ms: 1000,
        response_timeout_ms: 500,
        ..RedisCacheOptions::default()
    }
}

/// A started driver against `server`; a failed start says whether the server was running.
async fn started(url: String, server: &mut OwnRedis) -> Arc<RedisCache> {
    let cache = RedisCache::from_options(options(url)).expect("options are valid");
    if let Err(err) = cache.start().await {
        panic!(
            "start against a running server: {err:?}; the server: {}; its log:\n{}",
            server.status(),
            server.log()
        );
    }
    Arc::new(cache)
}

/// Poll `get` until it answers, within `limit`; how long it took.
async fn wait_until_answering(cache: &RedisCache, limit: Duration) -> Duration {
    let begin = Instant::now();
    loop {
        match cache.get("probe").await {
            Ok(_) => return begin.elapsed(),
            Err(err) => {
                assert!(
                    matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
                    "while recovering: {:?} {err}",
                    err.kind()
                );
                assert!(
                    begin.elapsed() < limit,
                    "the driver did not recover within {limit:?}: {err}"
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn assert_retryable<T: std::fmt::Debug>(what: &str, result: &InfraResult<T>) {
    match result {
        Err(err) => assert!(
            matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
            "{what}: expected Unavailable or Timeout, got {:?}: {err}",
            err.kind()
        ),
        Ok(value) => panic!("{what} succeeded with {value:?} while the server was down"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_against_a_closed_port_fails_at_once_naming_the_redacted_address() {
    let port = free_port();
    let cache = RedisCache::from_options(RedisCacheOptions {
        url: format!("redis://admin:hunter2-secret@127.0.0.1:{port}/3").into(),
        connect_timeout_ms: 1000,
        ..RedisCacheOptions::default()
    })
    .unwrap();
    let begin = Instant::now();
    let err = cache.start().await.unwrap_err();
    assert!(
        begin.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        begin.elapsed()
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("redis://***@127.0.0.1:{port}/3")),
        "{message}"
    );
    assert!(message.contains("refused"), "{message}");
    assert!(!message.contains("hunter2-secret"), "{message}");
    assert!(!format!("{err:?}").contains("hunter2-secret"));
    // A failed start may be followed by stop, which must be harmless.
    cache.stop().await.unwrap();
    assert_eq!(cache.get("k").await.unwrap_err().kind(), ErrorKind::Stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_against_a_server_that_never_answers_fails_within_the_connect_timeout() {
    // A listener that never accepts: the kernel completes the handshake, nothing ever answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let cache = RedisCache::from_options(RedisCacheOptions {
        url: format!("redis://:hunter2-secret@127.0.0.1:{port}").into(),
        connect_timeout_ms: 700,
        response_timeout_ms: 5000,
        ..RedisCacheOptions::default()
    })
    .unwrap();
    let begin = Instant::now();
    let err = cache.start().await.unwrap_err();
    let took = begin.elapsed();
    assert!(
        took >= Duration::from_millis(600),
        "gave up early: {took:?}"
    );
    assert!(took < Duration::from_millis(2200), "took {took:?}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("redis://***@127.0.0.1:{port}")),
        "{message}"
    );
    assert!(!message.contains("hunter2-secret"), "{message}");
    drop(silent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_gives_typed_errors_and_the_driver_reconnects_after_restart() {
    let mut server = OwnRedis::start();
    let cache = started(server.url(), &mut server).await;
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
    assert!(cache.health().await.is_healthy());

    server.kill();
    // Every operation fails typed, quickly, without panicking; a few rounds, so both the call
    // that meets the dropped connection and those that try to reconnect are covered.
    for round in 0..3 {
        let begin = Instant::now();
        let got = cache.get("k").await;
        if let Err(err) = &got {
            eprintln!("round {round}, server down: {:?}: {err}", err.kind());
        }
        assert_retryable("get", &got);
        assert_retryable("set", &cache.set("k", Bytes::from_static(b"w")).await);
        assert_retryable("delete", &cache.delete("k").await);
        assert_retryable(
            "set_with_ttl",
            &cache
                .set_with_ttl("k", Bytes::new(), Duration::from_secs(1))
                .await,
        );
        assert_retryable("increment", &cache.increment("n", 1).await);
        assert_retryable("get_many", &cache.get_many(&["a", "b"]).await);
        assert_retryable("set_many", &cache.set_many(&[("a", Bytes::new())]).await);
        assert_retryable("delete_many", &cache.delete_many(&["a"]).await);
        assert!(
            begin.elapsed() < Duration::from_secs(3),
            "round {round} of failing calls took {:?}",
            begin.elapsed()
        );
        assert!(!cache.health().await.is_healthy());
    }
    // Concurrent callers during the outage fail typed as well.
    let calls = (0..16).map(|n| {
        let cache = Arc::clone(&cache);
        tokio::spawn(async move { cache.get(&format!("k{n}")).await })
    });
    for call in calls {
        assert_retryable("concurrent get", &call.await.expect("no panic"));
    }

    server.restart();
    let took = wait_until_answering(&cache, Duration::from_secs(10)).await;
    eprintln!("the driver answered again {took:?} after the server listened");
    // The restarted server is empty (no persistence): the old value is gone, new ones work.
    assert_eq!(cache.get("k").await.unwrap(), None);
    cache.set("k", Bytes::from_static(b"again")).await.unwrap();
    assert_eq!(
        cache.get("k").await.unwrap().as_deref(),
        Some(&b"again"[..])
    );
    assert_eq!(cache.increment("n", 2).await.unwrap(), 2);
    assert!(cache.health().await.is_healthy());
    cache.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_server_gives_timeouts_and_the_driver_works_once_it_thaws() {
    let mut server = OwnRedis::start();
    let cache = started(server.url(), &mut server).await;
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();

    server.signal("-STOP");
    let begin = Instant::now();
    let err = cache.get("k").await.unwrap_err();
    let took = begin.elapsed();
    server.signal("-CONT");
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    eprintln!("server frozen: {err}");
    assert!(
        took >= Duration::from_millis(400),
        "timed out early: {took:?}"
    );
    assert!(took < Duration::from_millis(2500), "took {took:?}");

    wait_until_answering(&cache, Duration::from_secs(10)).await;
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
    cache.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_a_password_accepts_the_right_one_and_the_wrong_one_never_leaks() {
    let mut server = OwnRedis::start_with(free_port(), &["--requirepass", "right-secret-pw"]);
    let port = server.port;

    let good = started(
        format!("redis://:right-secret-pw@127.0.0.1:{port}"),
        &mut server,
    )
    .await;
    good.set("k", Bytes::from_static(b"v")).await.unwrap();
    assert_eq!(good.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
    assert!(!format!("{good:?}").contains("right-secret-pw"));

    for url in [
        format!("redis://:wrong-secret-pw@127.0.0.1:{port}"),
        format!("redis://default:wrong-secret-pw@127.0.0.1:{port}"),
        format!("redis://127.0.0.1:{port}"),
    ] {
        let cache = RedisCache::from_options(options(url)).unwrap();
        let err = cache.start().await.unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
        for secret in ["wrong-secret-pw", "right-secret-pw"] {
            assert!(!message.contains(secret), "{message}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                assert!(!cause.to_string().contains(secret), "{cause}");
                source = cause.source();
            }
        }
    }
    good.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_of_other_redis_types_are_typed_errors_not_panics() {
    let mut server = OwnRedis::start();
    let cache = started(server.url(), &mut server).await;
    // Make `list` a Redis list with the client crate directly, as another application might.
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("RPUSH")
        .arg("list")
        .arg("x")
        .exec_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(
        cache.get("list").await.unwrap_err().kind(),
        ErrorKind::Backend
    );
    assert_eq!(
        cache.increment("list", 1).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    // Counters are Redis's canonical integers; anything else is not a counter.
    for text in ["abc", "05", " 5", "+5", "1.5"] {
        cache.set("c", Bytes::from(text)).await.unwrap();
        let err = cache.increment("c", 1).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{text:?}: {err}");
        assert_eq!(
            cache.get("c").await.unwrap().as_deref(),
            Some(text.as_bytes())
        );
    }
    cache
        .set("c", Bytes::from(i64::MAX.to_string()))
        .await
        .unwrap();
    assert_eq!(
        cache.increment("c", 1).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(cache.increment("c", -1).await.unwrap(), i64::MAX - 1);
    cache.stop().await.unwrap();
}
