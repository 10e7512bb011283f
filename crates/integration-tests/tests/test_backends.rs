//! The backend drivers (`crates/drivers/`) through the kernel, as an application meets them:
//! a server that does not answer at start is SANDLOOM-B022 naming the address, with the
//! credentials of the INFRA file nowhere in the error, well inside the start timeout; options
//! are checked before anything connects.
//!
//! These need no server: the address is a loopback port nothing listens on. Each driver's own
//! tests run its conformance kit against the real server (`scripts/test-services up`).

mod common;

use std::time::{Duration, Instant};

use sandloom::{LinkedDrivers, Problem};

/// The secret every INFRA below carries; it must never be printed.
const SECRET: &str = "hunter2-secret";

/// Every backend driver crate, linked.
fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(
        sandloom_driver_redis,
        sandloom_driver_postgres,
        sandloom_driver_amqp,
        sandloom_driver_s3,
        sandloom_driver_webhook,
        sandloom_driver_smtp
    )
}

/// A loopback port nothing listens on: bound once by the OS, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Start `instance` (an INFRA table naming an unreachable server) and check the refusal: one
/// SANDLOOM-B022 for `capability.default`, naming `address`, without the secret, in time.
async fn refused_naming(instance: &str, address: &str) {
    let start_timeout = Duration::from_secs(10);
    let text = format!(
        "start_timeout_ms = {}\n{instance}",
        start_timeout.as_millis()
    );
    let began = Instant::now();
    let err = common::refused(&text, linked()).await;
    let elapsed = began.elapsed();
    let shown = err.to_string();
    let debug = format!("{err:?}");
    assert!(
        matches!(common::only(&err), Problem::Unusable { .. }),
        "expected one unusable driver, got:\n{shown}"
    );
    assert!(shown.contains("SANDLOOM-B022"), "{shown}");
    assert!(
        shown.contains(address),
        "the error must name the address {address}:\n{shown}"
    );
    assert!(
        !shown.contains(SECRET) && !debug.contains(SECRET),
        "the error shows a secret:\n{shown}\n{debug}"
    );
    assert!(
        !shown.contains("timed out after"),
        "the driver's own connect timeout must fire before the kernel's start timeout:\n{shown}"
    );
    assert!(
        elapsed < start_timeout,
        "refused after {elapsed:?}, not within the start timeout {start_timeout:?}"
    );
}

#[tokio::test]
async fn redis_unreachable_at_start_is_b022_naming_the_address() {
    let port = closed_port();
    refused_naming(
        &format!(
            "[cache.default]\ndriver = \"redis\"\nurl = \"redis://user:{SECRET}@127.0.0.1:{port}/0\"\nconnect_timeout_ms = 1000\n"
        ),
        &format!("127.0.0.1:{port}"),
    )
    .await;
}

#[tokio::test]
async fn postgres_unreachable_at_start_is_b022_naming_the_address() {
    let port = closed_port();
    refused_naming(
        &format!(
            "[taskqueue.default]\ndriver = \"postgres\"\nurl = \"postgres://postgres:{SECRET}@127.0.0.1:{port}/test\"\nconnect_timeout_ms = 1000\n"
        ),
        &format!("127.0.0.1:{port}"),
    )
    .await;
}

#[tokio::test]
async fn amqp_unreachable_at_start_is_b022_naming_the_address() {
    let port = closed_port();
    refused_naming(
        &format!(
            "[taskqueue.default]\ndriver = \"amqp\"\nurl = \"amqp://guest:{SECRET}@127.0.0.1:{port}/%2f\"\nconnect_timeout_ms = 1000\n"
        ),
        &format!("127.0.0.1:{port}"),
    )
    .await;
}

#[tokio::test]
async fn s3_unreachable_at_start_is_b022_naming_the_endpoint() {
    let port = closed_port();
    refused_naming(
        &format!(
            "[objectstore.default]\ndriver = \"s3\"\nendpoint = \"http://127.0.0.1:{port}\"\nbucket = \"orders\"\n\
             access_key_id = \"test\"\nsecret_access_key = \"{SECRET}\"\nconnect_timeout_ms = 1000\n\
             request_timeout_ms = 2000\nmax_retries = 0\n"
        ),
        &format!("127.0.0.1:{port}"),
    )
    .await;
}

#[tokio::test]
async fn smtp_unreachable_at_start_is_b022_naming_the_address() {
    let port = closed_port();
    refused_naming(
        &format!(
            "[notifier.default]\ndriver = \"smtp\"\nhost = \"127.0.0.1\"\nport = {port}\nsecurity = \"starttls\"\n\
             username = \"orders\"\npassword = \"{SECRET}\"\nfrom = \"orders@example.com\"\nconnect_timeout_ms = 1000\n"
        ),
        &format!("127.0.0.1:{port}"),
    )
    .await;
}

/// A misspelt option of a backend driver is refused before anything connects, with the
/// driver's own option names suggested, and the secret beside it is not echoed.
#[tokio::test]
async fn a_misspelt_backend_option_is_refused_with_a_suggestion() {
    let err = common::refused(
        &format!(
            "[cache.default]\ndriver = \"redis\"\nurl = \"redis://:{SECRET}@127.0.0.1:6379\"\nconect_timeout_ms = 100\n"
        ),
        linked(),
    )
    .await;
    let shown = err.to_string();
    assert!(shown.contains("SANDLOOM-B022"), "{shown}");
    assert!(shown.contains("connect_timeout_ms"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
}

/// `check()` sees every backend driver's name and options without connecting to anything.
#[test]
fn check_resolves_every_backend_driver_without_connecting() {
    let port = closed_port();
    let text = format!(
        "[cache.default]\ndriver = \"redis\"\nurl = \"redis://127.0.0.1:{port}\"\n\n\
         [taskqueue.default]\ndriver = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:{port}/test\"\n\n\
         [taskqueue.events]\ndriver = \"amqp\"\nurl = \"amqp://guest:guest@127.0.0.1:{port}/%2f\"\n\n\
         [objectstore.default]\ndriver = \"s3\"\nendpoint = \"http://127.0.0.1:{port}\"\nbucket = \"orders\"\n\n\
         [notifier.default]\ndriver = \"smtp\"\nhost = \"127.0.0.1\"\nport = {port}\nsecurity = \"plain\"\nfrom = \"orders@example.com\"\n\n\
         [notifier.hooks]\ndriver = \"webhook\"\nurl = \"http://127.0.0.1:{port}/hook\"\n"
    );
    let report = sandloom::Kernel::new(common::config(&text), linked())
        .check()
        .unwrap_or_else(|err| panic!("{err}"));
    let shown = report.to_string();
    for package in [
        "sandloom-driver-redis",
        "sandloom-driver-postgres",
        "sandloom-driver-amqp",
        "sandloom-driver-s3",
        "sandloom-driver-smtp",
        "sandloom-driver-webhook",
    ] {
        assert!(shown.contains(package), "{package} missing from:\n{shown}");
    }
}
