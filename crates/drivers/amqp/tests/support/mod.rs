//! What the server tests share: the broker's address, unique queue prefixes and a
//! [`TcpProxy`] in front of the broker that can cut or stall the driver's connections to it.

#![allow(dead_code, unreachable_pub)]

use std::net::{SocketAddr, ToSocketAddrs as _};

use sandloom_test_support::TcpProxy;

/// The broker the server tests use: `SANDLOOM_TEST_AMQP_URL`, read at run time first.
pub fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_AMQP_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_AMQP_URL").map(str::to_owned))
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

/// `host:port` of [`server_url`].
pub fn server_addr() -> String {
    let url = server_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:5672")
    }
}

/// [`server_url`] with its host and port replaced by `addr`.
pub fn url_via(addr: SocketAddr) -> String {
    let url = server_url();
    url.replacen(&server_addr(), &addr.to_string(), 1)
}

/// A prefix no other test run uses.
pub fn unique_prefix(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("sandloom-test.{test}-{}-{nanos}.", std::process::id())
}

/// A [`TcpProxy`] in front of the broker, which a test cuts, stalls and restores.
pub async fn proxy() -> TcpProxy {
    let upstream = server_addr()
        .to_socket_addrs()
        .expect("resolve the broker")
        .next()
        .expect("an address of the broker");
    TcpProxy::start(upstream).await.expect("a proxy")
}
