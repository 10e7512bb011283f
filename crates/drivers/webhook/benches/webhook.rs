//! One signed notification POST through `notifier.webhook` (as a `&dyn Notifier`) against
//! `reqwest` doing the same work by hand (message id, JSON body, HMAC-SHA256 signature, POST,
//! response drained), in the same run, to the same in-process HTTP server.
//!
//! `cargo bench -p sandloom-driver-webhook -- --measurement-time 3`; no server variable needed.
//!
//! Client and server share one single-threaded runtime, so a measurement is the CPU cost of
//! both sides and not the scheduling of a shared machine. After criterion's groups, the bench
//! also times the two alternately (driver, raw, driver, raw, …) and prints both medians and
//! their ratio: on a busy machine, load that changes between criterion's groups then weighs
//! on both sides alike.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, criterion_group, criterion_main};
use hmac::{Hmac, KeyInit as _, Mac as _};
use http_body_util::{BodyExt as _, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use sandloom_driver_webhook::{WebhookNotifier, WebhookOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::notifier::{Message, Notifier};
use sha2::Sha256;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

const SECRET: &str = "bench-secret";

/// A minimal HTTP/1.1 receiver: reads the body, answers 204.
async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = service_fn(|request: Request<Incoming>| async move {
                let _ = request.into_body().collect().await;
                let mut response = Response::new(Empty::<Bytes>::new());
                *response.status_mut() = hyper::StatusCode::NO_CONTENT;
                Ok::<_, Infallible>(response)
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn server(runtime: &Runtime) -> SocketAddr {
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(serve(listener));
        addr
    })
}

/// The body the driver sends, built the same way.
#[derive(serde::Serialize)]
struct Payload<'a> {
    id: &'a str,
    recipient: &'a str,
    subject: Option<&'a str>,
    body: &'a str,
    metadata: &'a BTreeMap<String, String>,
}

/// What the driver does for one message, written directly against reqwest.
async fn raw_send(client: &Client, message: &Message) -> String {
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    let body = Bytes::from(
        serde_json::to_vec(&Payload {
            id: &id,
            recipient: &message.recipient,
            subject: message.subject.as_deref(),
            body: &message.body,
            metadata: &message.metadata,
        })
        .expect("JSON"),
    );
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string();
    let mut mac = client.keyed.clone();
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(&body);
    let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    let response = client
        .http
        .post(client.url.clone())
        .header("x-sandloom-message-id", &id)
        .header("idempotency-key", &id)
        .header("x-sandloom-signature", signature)
        .header("x-sandloom-timestamp", timestamp)
        .body(body)
        .send()
        .await
        .expect("POST");
    assert!(response.status().is_success());
    let _ = response.bytes().await;
    id
}

struct Client {
    http: reqwest::Client,
    url: reqwest::Url,
    keyed: Hmac<Sha256>,
}

fn raw_client(addr: SocketAddr) -> Client {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static("bench"));
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(3))
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_only(std::iter::empty::<reqwest::Certificate>())
        .build()
        .expect("client");
    Client {
        http,
        url: format!("http://{addr}/hook").parse().expect("URL"),
        keyed: Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length"),
    }
}

fn notify(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let addr = server(&runtime);
    let message = Message::new("#ops", "disk almost full on db-1")
        .with_subject("alert")
        .with_metadata("severity", "high");

    let driver = WebhookNotifier::from_options(WebhookOptions {
        secret: Some(SECRET.into()),
        ..WebhookOptions::new(format!("http://{addr}/hook"))
    })
    .expect("options");
    runtime.block_on(driver.start()).expect("start");
    let notifier: &dyn Notifier = &driver;
    let raw = raw_client(addr);

    let mut group = c.benchmark_group("webhook_signed_post");
    group.bench_function("driver", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(notifier.send(black_box(&message)))
                    .expect("delivered"),
            )
        });
    });
    group.bench_function("reqwest", |b| {
        b.iter(|| black_box(runtime.block_on(raw_send(&raw, black_box(&message)))));
    });
    group.finish();
    interleaved(&runtime, notifier, &raw, &message);
    runtime.block_on(driver.stop()).expect("stop");
}

/// Times driver and raw sends alternately and prints the medians and their ratio (a short
/// run in criterion's test mode, `cargo test --benches`).
fn interleaved(runtime: &Runtime, notifier: &dyn Notifier, raw: &Client, message: &Message) {
    let rounds = if std::env::args().any(|arg| arg == "--bench") {
        20_000
    } else {
        10
    };
    let mut driver_times = Vec::with_capacity(rounds);
    let mut raw_times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        black_box(runtime.block_on(notifier.send(message)).expect("delivered"));
        driver_times.push(start.elapsed());
        let start = Instant::now();
        black_box(runtime.block_on(raw_send(raw, message)));
        raw_times.push(start.elapsed());
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort_unstable();
        times[times.len() / 2]
    };
    let (driver, raw) = (median(&mut driver_times), median(&mut raw_times));
    println!(
        "interleaved, {rounds} rounds: driver median {driver:?}, reqwest median {raw:?}, \
         driver throughput = {:.3} x reqwest",
        raw.as_secs_f64() / driver.as_secs_f64()
    );
}

criterion_group!(benches, notify);
criterion_main!(benches);
