//! Failure behaviour against real parts: a closed port and a silent listener at start, and an
//! S3 server that goes away while the driver runs (a TCP proxy between the driver and the
//! server, cut and restored by the test).

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::{ListOptions, ObjectStore};
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::sdk::bytes::Bytes;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

const SECRET: &str = "hunter2-secret";

/// A port on 127.0.0.1 where nothing listens.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

fn options_at(endpoint: &str) -> S3ObjectStoreOptions {
    S3ObjectStoreOptions {
        endpoint: Some(endpoint.to_owned()),
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

/// What the proxy does with connections.
const FORWARD: u8 = 0;
/// Closed: the port refuses connections, open ones are dropped.
const CUT: u8 = 1;
/// Accepts connections and never forwards a byte.
const STALL: u8 = 2;

/// A TCP proxy on a free port of 127.0.0.1 in front of `upstream`.
struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    mode: Arc<AtomicU8>,
    acceptor: Mutex<Option<JoinHandle<()>>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Self {
            addr: listener.local_addr().unwrap(),
            upstream,
            mode: Arc::new(AtomicU8::new(FORWARD)),
            acceptor: Mutex::new(None),
            connections: Arc::new(Mutex::new(Vec::new())),
        };
        proxy.accept_on(listener);
        proxy
    }

    fn accept_on(&self, listener: TcpListener) {
        let (upstream, mode, connections) = (
            self.upstream,
            Arc::clone(&self.mode),
            Arc::clone(&self.connections),
        );
        let acceptor = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mode = Arc::clone(&mode);
                let connection = tokio::spawn(async move {
                    if mode.load(Ordering::Acquire) == STALL {
                        // Hold the socket open, silent, until the test restores or cuts.
                        let _client = client;
                        std::future::pending::<()>().await;
                        return;
                    }
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                connections.lock().unwrap().push(connection);
            }
        });
        *self.acceptor.lock().unwrap() = Some(acceptor);
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn drop_connections(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }

    /// Stop accepting (the port then refuses connections) and drop every open connection.
    async fn cut(&self) {
        self.mode.store(CUT, Ordering::Release);
        if let Some(acceptor) = self.acceptor.lock().unwrap().take() {
            acceptor.abort();
        }
        self.drop_connections();
        // Let the aborted tasks drop their sockets and the listener.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    /// Accept connections but never answer them.
    async fn stall(&self) {
        self.restore().await;
        self.mode.store(STALL, Ordering::Release);
    }

    /// Forward again, on the same port.
    async fn restore(&self) {
        self.drop_connections();
        self.mode.store(FORWARD, Ordering::Release);
        if self.acceptor.lock().unwrap().is_none() {
            let listener = TcpListener::bind(self.addr).await.unwrap();
            self.accept_on(listener);
        }
    }
}

fn upstream() -> SocketAddr {
    let endpoint = common::endpoint();
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
    ignore = "needs a real server: set SANDLOOM_TEST_S3_ENDPOINT (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_that_goes_away_gives_typed_errors_and_comes_back() {
    let proxy = Proxy::start(upstream()).await;
    let options = S3ObjectStoreOptions {
        endpoint: Some(proxy.endpoint()),
        bucket: common::bucket(),
        secret_access_key: Some(SECRET.into()),
        prefix: Some(format!("failures/{}", common::unique("away"))),
        request_timeout_ms: 500,
        max_retries: 1,
        retry_timeout_ms: 500,
        retry_initial_backoff_ms: 10,
        retry_max_backoff_ms: 50,
        ..common::options("")
    };
    let store = S3ObjectStore::from_options(options).unwrap();
    store.start().await.unwrap();
    store.put("k", Bytes::from_static(b"before")).await.unwrap();
    assert!(store.health().await.is_healthy());

    proxy.cut().await;
    every_operation_fails_retryably(&store, &[ErrorKind::Unavailable]).await;
    assert!(!store.health().await.is_healthy());

    proxy.stall().await;
    every_operation_fails_retryably(&store, &[ErrorKind::Timeout, ErrorKind::Unavailable]).await;
    let get = store.get("k").await.unwrap_err();
    assert_eq!(get.kind(), ErrorKind::Timeout, "{get}");

    proxy.restore().await;
    assert_eq!(store.get("k").await.unwrap(), "before");
    store.put("k", Bytes::from_static(b"after")).await.unwrap();
    assert_eq!(store.get("k").await.unwrap(), "after");
    assert!(store.health().await.is_healthy());
    let page = store.list("", ListOptions::default()).await.unwrap();
    assert_eq!(page.objects.len(), 1);
    store.delete("k").await.unwrap();

    // A driver whose server is gone at start refuses to start, naming the proxy's address.
    proxy.cut().await;
    let late = S3ObjectStore::from_options(S3ObjectStoreOptions {
        endpoint: Some(proxy.endpoint()),
        secret_access_key: Some(SECRET.into()),
        ..common::options("x")
    })
    .unwrap();
    let err = late.start().await.unwrap_err();
    assert!(err.to_string().contains(&proxy.endpoint()), "{err}");
    assert!(!err.to_string().contains(SECRET), "{err}");
    store.stop().await.unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_s3),
    ignore = "needs a real server: set SANDLOOM_TEST_S3_ENDPOINT (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn start_on_a_missing_bucket_names_it() {
    let bucket = common::unique("no-such-bucket");
    let store = S3ObjectStore::from_options(S3ObjectStoreOptions {
        bucket: bucket.clone(),
        secret_access_key: Some(SECRET.into()),
        ..common::options("x")
    })
    .unwrap();
    let err = store.start().await.unwrap_err().to_string();
    assert!(err.contains(&format!("`{bucket}`")), "{err}");
    assert!(err.contains("the bucket does not exist"), "{err}");
    assert!(err.contains(&common::endpoint()), "{err}");
    assert!(!err.contains(SECRET), "{err}");
}
