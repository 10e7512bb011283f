//! The HTTP probes of `examples/health_http.rs`, included from the example itself: `/livez` is
//! 200 while the process runs; `/readyz` is 503 while starting, 200 when ready or degraded and
//! 503 when not ready, its body listing each instance's state; other paths are 404. Requests go
//! over a real socket, as a Kubernetes probe sends them.

#[path = "../../../examples/health_http.rs"]
#[allow(dead_code)] // the example's `main` and argument parsing
mod health_http;

// The kernel's helpers for a driver entry made by hand, included rather than copied.
#[path = "../../kernel/tests/support/mod.rs"]
mod kernel_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use health_http::{Probes, answer, serve};
use kernel_support::HealthOnly;
use sandloom::{Health, InfraConfig, Kernel};
use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, DRIVERS, DriverEntry, ParsedOptions,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The health each instance answers, by instance name (`healthy` when not set).
static STATES: Mutex<BTreeMap<String, Health>> = Mutex::new(BTreeMap::new());

fn set(instance: &str, health: Health) {
    STATES.lock().unwrap().insert(instance.to_owned(), health);
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {}

/// The health of `instance`, as the test set it.
fn check(instance: &str) -> BoxFuture<'_, Health> {
    Box::pin(async move {
        STATES
            .lock()
            .unwrap()
            .get(instance)
            .cloned()
            .unwrap_or(Health::Healthy)
    })
}

fn build(parsed: ParsedOptions, context: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
    kernel_support::build_with(parsed, |_: Options| HealthOnly {
        id: context.instance.to_string(),
        check,
    })
}

// A driver entry made by hand, as `register_driver!` would make it, whose health the test sets.
#[distributed_slice(DRIVERS)]
#[linkme(crate = sandloom_kernel::__private::linkme)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static PROBED: DriverEntry =
    kernel_support::cache_entry::<Options>("probed", "probed-driver", build);

/// `GET path` over a socket: the status code and the body.
async fn get(address: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: probe\r\nUser-Agent: kube-probe/1.31\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    assert!(head.starts_with("HTTP/1.1 "), "{head}");
    assert!(
        head.contains(&format!("Content-Length: {}", body.len())),
        "{head}"
    );
    (status, body.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livez_is_200_and_readyz_follows_readiness_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // Without periodic probing, each /readyz checks now.
    let probes = Arc::new(Probes::new(false));
    let server = tokio::spawn(serve(listener, Arc::clone(&probes)));

    // Starting: alive, not ready.
    assert_eq!(get(address, "/livez").await, (200, "ok\n".to_owned()));
    let (status, body) = get(address, "/readyz").await;
    assert_eq!(
        (status, body.as_str()),
        (503, "starting: the infrastructure is not started yet\n")
    );

    let config = InfraConfig::from_toml_str(
        "[cache.http-a]\ndriver = \"probed\"\n[cache.http-b]\ndriver = \"probed\"\n",
        "infra.toml",
    )
    .unwrap();
    let running = Kernel::new(config, sandloom::link_drivers!())
        .start()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(probes.running.set(running).is_ok());

    let (status, body) = get(address, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        "ready: 2 instances\n  cache.http-a (probed): healthy\n  cache.http-b (probed): healthy\n"
    );

    set("http-b", Health::Degraded("replica lagging".into()));
    let (status, body) = get(address, "/readyz?verbose").await;
    assert_eq!(status, 200, "degraded still serves: {body}");
    assert!(
        body.starts_with("degraded: 1 of 2 instances degraded\n"),
        "{body}"
    );
    assert!(
        body.contains("cache.http-b (probed): degraded: replica lagging"),
        "{body}"
    );

    set("http-a", Health::Unhealthy("connection refused".into()));
    let (status, body) = get(address, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.starts_with("not_ready: 1 of 2 instances unhealthy\n"),
        "{body}"
    );
    assert!(
        body.contains("cache.http-a (probed): unhealthy: connection refused"),
        "{body}"
    );
    // Liveness does not follow the backends.
    assert_eq!(get(address, "/livez").await.0, 200);

    set("http-a", Health::Healthy);
    set("http-b", Health::Healthy);
    assert_eq!(get(address, "/readyz").await.0, 200);
    assert_eq!(get(address, "/metrics").await.0, 404);

    server.abort();
    let _ = server.await;
    // Each connection's task drops its handle on the probes once it has answered.
    for _ in 0..1000 {
        if Arc::strong_count(&probes) == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let running = Arc::into_inner(probes)
        .and_then(|probes| probes.running.into_inner())
        .expect("the server released the probes");
    running.shutdown().await.unwrap();
}

#[test]
fn the_answers_of_each_path_and_method() {
    assert_eq!(answer("GET", "/livez", None).status, 200);
    assert_eq!(answer("HEAD", "/livez", None).status, 200);
    assert_eq!(answer("GET", "/readyz", None).status, 503);
    assert_eq!(answer("GET", "/", None).status, 404);
    assert_eq!(answer("POST", "/readyz", None).status, 405);
}
