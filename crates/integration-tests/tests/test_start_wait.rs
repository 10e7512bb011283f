//! Waiting for a backend at startup, with a real driver (`cache.redis`) against the machine's
//! Redis behind `TcpProxy` (sandloom-test-support): a server that appears after startup began is waited for
//! (`start_wait_ms`), one that never appears is SANDLOOM-B022 after the wait, listing the
//! attempts, the time spent and the last error, with nothing left running.
//!
//! Needs Redis: `SANDLOOM_TEST_REDIS_URL` (`eval "$(scripts/test-services up)"`), else the
//! standard `127.0.0.1:6379`. When no Redis answers these tests fail, saying so: they are never
//! skipped in silence. No assertion depends on how long anything took.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use sandloom::sdk::CACHE;
use sandloom::{LinkedDrivers, Problem, UnusableReason};
use sandloom_fixture_support::events;
use sandloom_test_support::TcpProxy;

fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(sandloom_driver_redis, sandloom_fixture_good)
}

/// The machine's Redis, which must answer.
async fn redis() -> SocketAddr {
    let url = std::env::var("SANDLOOM_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let authority = url
        .split_once("://")
        .map_or(url.as_str(), |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let address = tokio::net::lookup_host(host_port)
        .await
        .ok()
        .and_then(|mut found| found.next())
        .unwrap_or_else(|| panic!("cannot resolve the Redis address of `{url}`"));
    if let Err(err) = tokio::net::TcpStream::connect(address).await {
        panic!(
            "these tests need a Redis server, and none answers at {address} ({err}): run \
             `eval \"$(scripts/test-services up)\"` (or set SANDLOOM_TEST_REDIS_URL)"
        );
    }
    address
}

/// A proxy to Redis that starts cut: the server "is not there yet".
async fn cut_proxy() -> TcpProxy {
    let proxy = TcpProxy::start(redis().await)
        .await
        .expect("a loopback port");
    proxy.cut();
    proxy
}

fn redis_instance(name: &str, proxy: &TcpProxy, extra: &str) -> String {
    format!(
        "[cache.{name}]\ndriver = \"redis\"\nurl = \"redis://{}\"\nconnect_timeout_ms = 500\n{extra}\n",
        proxy.address()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_appears_two_seconds_after_start_is_waited_for() {
    let proxy = std::sync::Arc::new(cut_proxy().await);
    let restorer = {
        let proxy = std::sync::Arc::clone(&proxy);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            proxy.restore();
        })
    };
    let text = format!(
        "start_wait_ms = 30000\n{}",
        redis_instance("default", &proxy, "")
    );
    let running = common::start(&text, linked())
        .await
        .unwrap_or_else(|err| panic!("startup should have waited for Redis:\n{err}"));
    restorer.await.unwrap();

    let line = &running.report().lines[0];
    assert_eq!(line.driver, "redis");
    assert!(
        line.start_attempts > 1,
        "the proxy was cut at start, so the first attempt cannot have succeeded: {line:?}"
    );
    let cache = running.infra().capability(&CACHE, "default").unwrap();
    cache
        .set("sandloom-start-wait", "here".into())
        .await
        .unwrap();
    assert_eq!(
        cache.get("sandloom-start-wait").await.unwrap().as_deref(),
        Some(&b"here"[..])
    );
    cache.delete("sandloom-start-wait").await.unwrap();
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_appears_is_b022_after_the_wait_with_nothing_left_running() {
    let proxy = cut_proxy().await;
    // `cache.a` starts first (instances start by capability, then name); `cache.b` waits.
    let text = format!(
        "[cache.a]\ndriver = \"fixture\"\nlabel = \"startwait-a\"\n{}",
        redis_instance("b", &proxy, "start_wait_ms = 1500")
    );
    let err = common::refused(&text, linked()).await;
    let problem = common::only(&err);
    let Problem::Unusable {
        instance,
        reason: UnusableReason::StartFailed {
            message, attempts, ..
        },
        ..
    } = problem
    else {
        panic!("expected a failed start:\n{err}")
    };
    assert_eq!(instance, "b");
    assert!(attempts.count > 1, "{attempts:?}\n{err}");
    assert!(attempts.transient, "{err}");
    assert_eq!(attempts.wait, Duration::from_millis(1500));
    let address = proxy.address().to_string();
    assert!(message.contains(&address), "{message}");

    let shown = err.to_string();
    assert!(shown.contains("SANDLOOM-B022"), "{shown}");
    for expected in [
        format!(
            "start failed on each of {} attempts over {} ms",
            attempts.count,
            attempts.spent.as_millis()
        ),
        "(`start_wait_ms` is 1500); the last error: cannot connect to Redis at".to_owned(),
        address,
        "raise `start_wait_ms` (now 1500 ms)".to_owned(),
    ] {
        assert!(
            shown.contains(&expected),
            "missing {expected:?} in:\n{shown}"
        );
    }
    // All or nothing: what had started was stopped.
    assert_eq!(
        events("startwait-a"),
        ["startwait-a:build", "startwait-a:start", "startwait-a:stop"]
    );
}
