//! Failure behaviour against real parts: a closed port and a silent listener at start, and an
//! S3 server that goes away or hangs while the driver runs (`TcpProxy` (sandloom-test-support) between the
//! driver and the server, cut, stalled and restored by the test).

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::{ListOptions, ObjectStore};
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_test_support::TcpProxy;
use tokio::net::TcpListener;

const SECRET: &str = "hunter2-secret";

/// A port on 127.0.0.1 where nothing listens.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

fn options_at(endpoint: &str) -> S3ObjectStoreOptions {
    S3ObjectStoreOptions {
        endpoint: Some(endpoint.into()),
        bucket: "sandloom-test".into(),
        access_key_id: Some("test".into()),
        secret_access_key: Some(SECRET.into()),
        connect_timeout_ms: 1000,
        ..Default::default()
    }
}

#[tokio::test]
async fn start_on_a_closed_port_fails_at_once_naming_the_endpoint() {
    let endpoint = format!("http://127.0.0.1:{}", closed_port().await);
    let store = S3ObjectStore::from_options(options_at(&endpoint)).unwrap();
    let started = Instant::now();
    let err = store.start().await.unwrap_err();
    let elapsed = started.elapsed();
    let message = err.to_string();
    assert!(
        elapsed < Duration::from_secs(1),
        "took {elapsed:?}: {message}"
    );
    assert!(message.contains(&endpoint), "{message}");
    assert!(message.contains("sandloom-test"), "{message}");
    assert!(message.contains("cannot be reached"), "{message}");
    assert!(!message.contains(SECRET), "{message}");
    assert!(!format!("{err:?}").contains(SECRET));
    // Not started: operations say so instead of hanging or panicking.
    let put = store.put("k", Bytes::from_static(b"v")).await.unwrap_err();
    assert_eq!(put.kind(), ErrorKind::Unavailable, "{put}");
}

#[tokio::test]
async fn start_on_a_silent_server_fails_within_the_connect_timeout() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            sockets.push(socket);
        }
    });
    let store = S3ObjectStore::from_options(options_at(&endpoint)).unwrap();
    let started = Instant::now();
    let err = store.start().await.unwrap_err();
    let elapsed = started.elapsed();
    held.abort();
    let message = err.to_string();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_millis(2500),
        "took {elapsed:?}: {message}"
    );
    assert!(
        message.contains(&endpoint) && message.contains("1000 ms"),
        "{message}"
    );
    assert!(!message.contains(SECRET), "{message}");
}

fn upstream() -> SocketAddr {
    let endpoint = support::endpoint();
    let authority = endpoint
        .split_once("://")
        .map_or(endpoint.as_str(), |(_, rest)| rest)
        .trim_end_matches('/');
    std::net::ToSocketAddrs::to_socket_addrs(authority)
        .unwrap()
        .next()
        .unwrap()
}

/// Every operation fails with a retryable kind, quickly, without panicking.
async fn every_operation_fails_retryably(store: &dyn ObjectStore, expected: &[ErrorKind]) {
    let started = Instant::now();
    let outcomes = [
        (
            "put",
            store.put("k", Bytes::from_static(b"new")).await.err(),
        ),
        ("get", store.get("k").await.err()),
        ("head", store.head("k").await.err()),
        ("delete", store.delete("other").await.err()),
        ("list", store.list("", ListOptions::default()).await.err()),
    ];
    for (operation, outcome) in outcomes {
        let err = outcome.unwrap_or_else(|| panic!("{operation} succeeded with no server"));
        assert!(
            expected.contains(&err.kind()),
            "{operation}: {} {err}",
            err.kind()
        );
        assert!(err.kind().is_retryable());
        assert!(!err.to_string().contains(SECRET), "{err}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_s3),
    ignore = "needs a real server: set SANDLOOM_TEST_S3_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_that_goes_away_gives_typed_errors_and_comes_back() {
    let proxy = TcpProxy::start(upstream()).await.unwrap();
    let endpoint = format!("http://{}", proxy.address());
    let options = S3ObjectStoreOptions {
        endpoint: Some(endpoint.clone().into()),
        bucket: support::bucket(),
        secret_access_key: Some(SECRET.into()),
        prefix: Some(format!("failures/{}", support::unique("away"))),
        request_timeout_ms: 500,
        max_retries: 1,
        retry_timeout_ms: 500,
        retry_initial_backoff_ms: 10,
        retry_max_backoff_ms: 50,
        ..support::options("")
    };
    let store = S3ObjectStore::from_options(options).unwrap();
    store.start().await.unwrap();
    store.put("k", Bytes::from_static(b"before")).await.unwrap();
    assert!(store.health().await.is_healthy());

    proxy.cut();
    every_operation_fails_retryably(&store, &[ErrorKind::Unavailable]).await;
    assert!(!store.health().await.is_healthy());

    // The server hangs: connections are accepted and nothing comes back.
    proxy.stall();
    every_operation_fails_retryably(&store, &[ErrorKind::Timeout, ErrorKind::Unavailable]).await;
    let get = store.get("k").await.unwrap_err();
    assert_eq!(get.kind(), ErrorKind::Timeout, "{get}");

    // Back, without the requests it held (they die with their connections, so the server never
    // sees the writes that timed out and "before" is still there).
    proxy.cut();
    proxy.restore();
    assert_eq!(store.get("k").await.unwrap(), "before");
    store.put("k", Bytes::from_static(b"after")).await.unwrap();
    assert_eq!(store.get("k").await.unwrap(), "after");
    assert!(store.health().await.is_healthy());
    let page = store.list("", ListOptions::default()).await.unwrap();
    assert_eq!(page.objects.len(), 1);
    store.delete("k").await.unwrap();

    // A driver whose server is gone at start refuses to start, naming the proxy's address.
    proxy.cut();
    let late = S3ObjectStore::from_options(S3ObjectStoreOptions {
        endpoint: Some(endpoint.clone().into()),
        secret_access_key: Some(SECRET.into()),
        ..support::options("x")
    })
    .unwrap();
    let err = late.start().await.unwrap_err();
    assert!(err.to_string().contains(&endpoint), "{err}");
    assert!(!err.to_string().contains(SECRET), "{err}");
    store.stop().await.unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_s3),
    ignore = "needs a real server: set SANDLOOM_TEST_S3_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn start_on_a_missing_bucket_names_it() {
    let bucket = support::unique("no-such-bucket");
    let store = S3ObjectStore::from_options(S3ObjectStoreOptions {
        bucket: bucket.clone(),
        secret_access_key: Some(SECRET.into()),
        ..support::options("x")
    })
    .unwrap();
    let err = store.start().await.unwrap_err().to_string();
    assert!(err.contains(&format!("`{bucket}`")), "{err}");
    assert!(err.contains("the bucket does not exist"), "{err}");
    assert!(err.contains(&support::endpoint()), "{err}");
    assert!(!err.contains(SECRET), "{err}");
}
