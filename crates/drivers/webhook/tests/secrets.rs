//! The HMAC key, the URL's password, the URL's path token and header values never appear in
//! `Debug` output, error messages (with their sources) or the driver's logs.

mod support;

use std::collections::BTreeMap;
use std::error::Error as _;
use std::time::Duration;

use sandloom_driver_webhook::{WebhookNotifier, WebhookOptions};
use sandloom_driverkit::notifier::{Message, Notifier};
use sandloom_driverkit::sdk::InfraError;
use sandloom_driverkit::{Driver, Health};
use sandloom_test_support::LogCapture;
use support::{Reply, SECRET, TestServer, closed_port};

/// Secret parts of the configuration besides `SECRET`.
const PATH_TOKEN: &str = "pathtoken-9f8e7d";
const HEADER_VALUE: &str = "header-value-4c3b2a";

fn assert_clean(what: &str, text: &str) {
    for secret in [SECRET, PATH_TOKEN, HEADER_VALUE] {
        assert!(!text.contains(secret), "{what} shows a secret: {text}");
    }
}

/// The error, its `Debug`, and every source in its chain.
fn assert_clean_error(what: &str, error: &InfraError) {
    assert_clean(what, &error.to_string());
    assert_clean(what, &format!("{error:?}"));
    let mut source = error.source();
    while let Some(cause) = source {
        assert_clean(what, &cause.to_string());
        assert_clean(what, &format!("{cause:?}"));
        source = cause.source();
    }
}

fn secret_options(origin_port: u16) -> WebhookOptions {
    WebhookOptions {
        secret: Some(SECRET.into()),
        headers: BTreeMap::from([("X-Api-Key".to_owned(), HEADER_VALUE.into())]),
        max_retries: 1,
        retry_base_delay_ms: 10,
        retry_max_delay_ms: 50,
        timeout_ms: 300,
        connect_timeout_ms: 300,
        ..WebhookOptions::new(format!(
            "http://bot:{SECRET}@127.0.0.1:{origin_port}/hooks/{PATH_TOKEN}?token={PATH_TOKEN}"
        ))
    }
}

#[test]
fn debug_output_redacts_every_secret() {
    let options = secret_options(8080);
    let debug = format!("{options:?}");
    assert_clean("Debug of the options", &debug);
    assert!(debug.contains("http://***@127.0.0.1:8080/***"), "{debug}");
    assert!(
        debug.contains("X-Api-Key"),
        "header names are shown: {debug}"
    );

    let notifier = WebhookNotifier::from_options(options).unwrap();
    let debug = format!("{notifier:?}");
    assert_clean("Debug of the driver", &debug);
    assert!(debug.contains("signed: true"), "{debug}");
    assert_clean("endpoint()", notifier.endpoint());
}

#[test]
fn option_errors_never_repeat_secret_values() {
    let refuse = |options: WebhookOptions| {
        let err = WebhookNotifier::validate(&options).unwrap_err();
        assert_clean("a validation error", &err.to_string());
        assert_clean("a validation error", &format!("{err:?}"));
    };
    refuse(WebhookOptions {
        url: format!("ftp://bot:{SECRET}@127.0.0.1/{PATH_TOKEN}").into(),
        ..secret_options(1)
    });
    refuse(WebhookOptions {
        url: format!("http://bot:{SECRET}@127.0.0.1/{PATH_TOKEN}#{PATH_TOKEN}").into(),
        ..secret_options(1)
    });
    refuse(WebhookOptions {
        url: format!("http://bot:{SECRET}@/{PATH_TOKEN}").into(),
        ..secret_options(1)
    });
    refuse(WebhookOptions {
        headers: BTreeMap::from([(
            "X-Api-Key".to_owned(),
            format!("{HEADER_VALUE}\u{7}").into(),
        )]),
        ..secret_options(1)
    });
    refuse(WebhookOptions {
        headers: BTreeMap::from([("Authorization".to_owned(), HEADER_VALUE.into())]),
        ..secret_options(1)
    });
}

#[tokio::test]
async fn errors_and_logs_never_show_secrets() {
    let captured = LogCapture::new();
    let _default = captured.set_default(tracing::Level::TRACE);

    // Refused connection, at start (verify_on_start) and on send.
    let port = closed_port();
    let strict = WebhookNotifier::from_options(WebhookOptions {
        verify_on_start: true,
        ..secret_options(port)
    })
    .unwrap();
    let err = strict.start().await.unwrap_err();
    assert_clean("a start error", &err.to_string());
    assert_clean("a start error", &format!("{err:?}"));

    let notifier = WebhookNotifier::from_options(secret_options(port)).unwrap();
    notifier.start().await.unwrap();
    let err = notifier.send(&Message::new("#ops", "x")).await.unwrap_err();
    assert_clean_error("a refused connection", &err);
    if let Health::Unhealthy(reason) = notifier.health().await {
        assert_clean("health", &reason);
    }

    // A refusing endpoint, a failing one and a slow one.
    let server = TestServer::start();
    server.script([
        Reply::status(401).body(SECRET),
        Reply::status(500),
        Reply::status(500),
        Reply::ok().after(Duration::from_secs(2)),
        Reply::ok().after(Duration::from_secs(2)),
    ]);
    let notifier = WebhookNotifier::from_options(secret_options(server.port())).unwrap();
    notifier.start().await.unwrap();
    for _ in 0..3 {
        let err = notifier.send(&Message::new("#ops", "x")).await.unwrap_err();
        assert_clean_error("an endpoint error", &err);
    }
    match notifier.health().await {
        Health::Degraded(reason) => assert_clean("health", &reason),
        other => panic!("expected Degraded, got {other:?}"),
    }
    notifier.stop().await.unwrap();

    let logs = captured.text();
    assert!(
        logs.contains("retrying") && logs.contains("webhook delivery failed"),
        "the capture sees the driver's logs: {logs}"
    );
    assert_clean("the logs", &logs);
    // The secrets did reach the server where they belong.
    let request = &server.requests()[0];
    assert!(request.verifies_with(SECRET));
    assert_eq!(request.header("x-api-key"), Some(HEADER_VALUE));
    assert_eq!(request.path, format!("/hooks/{PATH_TOKEN}"));
}
