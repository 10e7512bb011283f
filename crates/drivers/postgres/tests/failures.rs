//! Failure behaviour against real parts: a closed port and a server that never answers at
//! start; a server that goes away while the driver runs (a TCP proxy that is cut) and comes
//! back.

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraResult};
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
use sandloom_test_support::TcpProxy;

const SECRET: &str = "hunter2-secret";

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

fn unreachable_options(port: u16) -> PostgresTaskQueueOptions {
    PostgresTaskQueueOptions {
        url: format!("postgres://postgres:{SECRET}@127.0.0.1:{port}/test").into(),
        connect_timeout_ms: 1_000,
        ..Default::default()
    }
}

#[tokio::test]
async fn a_closed_port_at_start_is_an_error_naming_the_address_without_the_password() {
    let port = closed_port();
    let queue = PostgresTaskQueue::from_options(unreachable_options(port)).unwrap();
    let begun = Instant::now();
    let err = queue.start().await.unwrap_err();
    let elapsed = begun.elapsed();
    let message = err.to_string();
    eprintln!(
        "start against a closed port: {message}: {:?} (after {elapsed:?})",
        std::error::Error::source(&err).map(ToString::to_string)
    );
    assert!(
        elapsed < Duration::from_millis(1_500),
        "took {elapsed:?}, connect timeout 1 s"
    );
    assert!(
        message.contains(&format!("postgres://***@127.0.0.1:{port}/test")),
        "{message}"
    );
    assert!(!message.contains(SECRET), "{message}");
    assert!(!format!("{err:?}").contains(SECRET));
    queue.stop().await.unwrap();
}

#[tokio::test]
async fn a_server_that_never_answers_fails_start_within_the_connect_timeout() {
    // Accepts connections and holds them without a word: the handshake never completes.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let queue = PostgresTaskQueue::from_options(unreachable_options(port)).unwrap();
    let begun = Instant::now();
    let err = queue.start().await.unwrap_err();
    let elapsed = begun.elapsed();
    let message = err.to_string();
    eprintln!("start against a silent server: {message} (after {elapsed:?})");
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(3),
        "took {elapsed:?}, connect timeout 1 s"
    );
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("1000 ms"), "{message}");
    assert!(!message.contains(SECRET), "{message}");
    queue.stop().await.unwrap();
    holder.abort();
}

/// The test server's address, for the proxy to forward to.
fn upstream() -> (SocketAddr, tokio_postgres::Config) {
    let config: tokio_postgres::Config = support::server_url().parse().expect("a server URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        other => panic!("the failure tests need a TCP server, not {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
        .expect("resolve")
        .next()
        .expect("an address");
    (addr, config)
}

/// The error `op` gave while the server was away: a typed, retryable kind, promptly.
async fn fails_while_cut<T: std::fmt::Debug>(
    what: &str,
    op: impl Future<Output = InfraResult<T>>,
) -> ErrorKind {
    let begun = Instant::now();
    let outcome = op.await;
    let elapsed = begun.elapsed();
    let err = match outcome {
        Ok(value) => panic!("{what} succeeded with the server away: {value:?}"),
        Err(err) => err,
    };
    eprintln!("{what} while the server was away, after {elapsed:?}: {err}");
    assert!(
        matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
        "{what} answered {:?}: {err}",
        err.kind()
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "{what} took {elapsed:?} to fail"
    );
    err.kind()
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_that_goes_away_gives_typed_errors_and_the_driver_recovers_when_it_is_back() {
    let (addr, config) = upstream();
    let proxy = TcpProxy::start(addr)
        .await
        .expect("a loopback port for the proxy");
    let url = format!(
        "postgres://{}@{}/{}",
        config.get_user().unwrap_or("postgres"),
        proxy.address(),
        config.get_dbname().unwrap_or("postgres")
    );
    let namespace = support::unique("gone");
    let queue = support::started(support::options(&url, &namespace)).await;
    let q: &dyn TaskQueue = &queue;
    let before = q
        .enqueue(
            "jobs",
            Bytes::from_static(b"before"),
            EnqueueOptions::default(),
        )
        .await
        .unwrap();

    proxy.cut();
    let mut kinds = Vec::new();
    for round in 0..3 {
        kinds.push(
            fails_while_cut(
                &format!("enqueue (round {round})"),
                q.enqueue(
                    "jobs",
                    Bytes::from_static(b"lost"),
                    EnqueueOptions::default(),
                ),
            )
            .await,
        );
        kinds.push(fails_while_cut("reserve", q.reserve("jobs", Duration::ZERO)).await);
        // A waiting reserve does not sit out its wait on a dead server.
        kinds.push(
            fails_while_cut("waiting reserve", q.reserve("jobs", Duration::from_secs(3))).await,
        );
        kinds.push(fails_while_cut("dead_letters", q.dead_letters("jobs", 10)).await);
    }
    eprintln!("error kinds while the server was away: {kinds:?}");
    assert!(!queue.health().await.is_healthy());

    proxy.restore();
    // Broken connections left the pool: the very first operation works again.
    let after = q
        .enqueue(
            "jobs",
            Bytes::from_static(b"after"),
            EnqueueOptions::default(),
        )
        .await
        .expect("enqueue once the server is back");
    assert!(queue.health().await.is_healthy());
    for (id, payload) in [(&before, "before"), (&after, "after")] {
        let r = q
            .reserve("jobs", Duration::from_secs(2))
            .await
            .unwrap()
            .expect("the task survived the outage");
        assert_eq!((&r.task.id, &r.task.payload[..]), (id, payload.as_bytes()));
        q.ack(&r).await.unwrap();
    }
    assert!(q.reserve("jobs", Duration::ZERO).await.unwrap().is_none());
    queue.stop().await.unwrap();
}
