//! What the server tests share: where the server is, fresh names, a driver with short
//! timeouts, and a `sandloom_test_support::TcpProxy` in front of the server to cut it off.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;

/// The table the server tests share (each test uses its own namespace in it).
pub(crate) const TABLE: &str = "sandloom_test_tasks";

/// `SANDLOOM_TEST_POSTGRES_URL` at run time, else at build time.
pub(crate) fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_POSTGRES_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_POSTGRES_URL").map(str::to_owned))
        .unwrap_or_default()
}

/// A name no other test, test binary or earlier run uses.
pub(crate) fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Options for the test server with short timeouts, in `namespace` of the shared table.
pub(crate) fn options(url: &str, namespace: &str) -> PostgresTaskQueueOptions {
    PostgresTaskQueueOptions {
        url: url.into(),
        table: TABLE.to_owned(),
        namespace: namespace.to_owned(),
        visibility_timeout_ms: 500,
        max_attempts: 3,
        connect_timeout_ms: 1_000,
        operation_timeout_ms: 2_000,
        poll_interval_ms: 50,
        ..Default::default()
    }
}

/// A started driver.
pub(crate) async fn started(options: PostgresTaskQueueOptions) -> PostgresTaskQueue {
    let queue = PostgresTaskQueue::from_options(options).expect("valid options");
    queue.start().await.expect("start");
    queue
}

/// A plain client on the test server, for looking at and cleaning up tables.
pub(crate) async fn raw_client() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&server_url(), tokio_postgres::NoTls)
        .await
        .expect("connect to the test server");
    tokio::spawn(connection);
    client
}

/// A proxy to the test server, and the server's URL through it.
pub(crate) async fn proxied() -> (std::sync::Arc<sandloom_test_support::TcpProxy>, String) {
    let config: tokio_postgres::Config = server_url().parse().expect("a server URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        other => panic!("the crash campaigns need a TCP server, not {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let upstream: std::net::SocketAddr =
        std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .expect("resolve")
            .next()
            .expect("an address");
    let proxy = sandloom_test_support::TcpProxy::start(upstream)
        .await
        .expect("a proxy");
    let url = format!(
        "postgres://{}@{}/{}",
        config.get_user().unwrap_or("postgres"),
        proxy.address(),
        config.get_dbname().unwrap_or("postgres")
    );
    (std::sync::Arc::new(proxy), url)
}
