//! What `notifier.webhook` sends and how it meets failures, against a real HTTP server in the
//! test process: signatures, retries and backoff, client errors, refused connections,
//! timeouts, an endpoint that goes away and comes back, stop, health.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sandloom_driver_webhook::{
    IDEMPOTENCY_KEY_HEADER, MESSAGE_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, WebhookNotifier,
    WebhookOptions, timestamp_is_fresh, verify_signature,
};
use sandloom_driverkit::notifier::{Message, Notifier};
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::{Driver, Health};
use support::{Reply, SECRET, TestServer, closed_port};

/// Options for the server's `/hook`, signed, with short retry delays.
fn options_for(server: &TestServer) -> WebhookOptions {
    WebhookOptions {
        secret: Some(SECRET.into()),
        retry_base_delay_ms: 10,
        retry_max_delay_ms: 200,
        ..WebhookOptions::new(format!("{}/hook", server.origin()))
    }
}

async fn started(options: WebhookOptions) -> WebhookNotifier {
    let notifier = WebhookNotifier::from_options(options).expect("valid options");
    notifier.start().await.expect("start");
    notifier
}

fn message() -> Message {
    Message::new("#ops", "disk almost full")
}

#[tokio::test]
async fn each_message_is_one_signed_json_post_of_the_documented_schema() {
    let server = TestServer::start();
    let options = WebhookOptions {
        url: format!(
            "http://bot:{SECRET}@127.0.0.1:{}/hooks/in?team=ops",
            server.port()
        )
        .into(),
        headers: BTreeMap::from([("X-Team".to_owned(), "ops".into())]),
        ..options_for(&server)
    };
    let notifier = started(options).await;
    let sent = Message::new("#ops", "disk almost full\nline 2 ✓")
        .with_subject("alert")
        .with_metadata("host", "db-1")
        .with_metadata("severity", "high");
    let dyn_notifier: &dyn Notifier = &notifier;
    let receipt = dyn_notifier.send(&sent).await.expect("delivered");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/hooks/in");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(
        request
            .header("user-agent")
            .is_some_and(|agent| agent.starts_with("sandloom-driver-webhook/"))
    );
    assert_eq!(request.header("x-team"), Some("ops"));
    assert_eq!(
        request.header("authorization"),
        Some("Basic Ym90Omh1bnRlcjItc2VjcmV0"),
        "the URL's user-info is sent as Basic auth"
    );
    assert_eq!(request.header(MESSAGE_ID_HEADER), Some(receipt.id.as_str()));
    assert_eq!(
        request.header(IDEMPOTENCY_KEY_HEADER),
        Some(receipt.id.as_str())
    );
    assert_eq!(
        request.json(),
        serde_json::json!({
            "id": receipt.id,
            "recipient": "#ops",
            "subject": "alert",
            "body": "disk almost full\nline 2 ✓",
            "metadata": { "host": "db-1", "severity": "high" },
        })
    );
    assert_eq!(request.message(), sent);

    let timestamp = request.header(TIMESTAMP_HEADER).expect("a timestamp");
    let signature = request.header(SIGNATURE_HEADER).expect("a signature");
    assert!(timestamp_is_fresh(timestamp, Duration::from_mins(1)));
    assert!(verify_signature(
        SECRET,
        timestamp,
        &request.body,
        signature
    ));
    assert!(!verify_signature(
        "wrong-secret",
        timestamp,
        &request.body,
        signature
    ));
    let mut tampered = request.body.to_vec();
    tampered[10] ^= 1;
    assert!(!verify_signature(SECRET, timestamp, &tampered, signature));
}

#[tokio::test]
async fn without_a_secret_requests_are_unsigned() {
    let server = TestServer::start();
    let notifier = started(WebhookOptions::new(server.origin())).await;
    notifier.send(&message()).await.expect("delivered");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/");
    assert!(request.header(SIGNATURE_HEADER).is_none());
    assert!(request.header(TIMESTAMP_HEADER).is_some());
    assert!(request.header("authorization").is_none());
}

#[tokio::test]
async fn receipt_ids_are_message_ids_and_differ_per_message() {
    let server = TestServer::start();
    let notifier = started(options_for(&server)).await;
    let first = notifier.send(&message()).await.unwrap();
    let second = notifier.send(&message()).await.unwrap();
    assert_ne!(first.id, second.id);
    let ids: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header(MESSAGE_ID_HEADER).unwrap().to_owned())
        .collect();
    assert_eq!(ids, [first.id, second.id]);
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_then_fail_typed() {
    let server = TestServer::start();
    server.always(Reply::status(503));
    let options = WebhookOptions {
        max_retries: 3,
        retry_base_delay_ms: 40,
        retry_max_delay_ms: 1000,
        ..options_for(&server)
    };
    let notifier = started(options).await;
    let err = notifier.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.message().contains("503 Service Unavailable"), "{err}");
    assert!(err.message().contains("gave up after 4 attempts"), "{err}");

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "1 attempt + max_retries 3");
    let id = requests[0].header(MESSAGE_ID_HEADER).unwrap();
    for request in &requests {
        assert_eq!(
            request.header(MESSAGE_ID_HEADER),
            Some(id),
            "same id on retries"
        );
        assert_eq!(request.header(IDEMPOTENCY_KEY_HEADER), Some(id));
        assert_eq!(request.body, requests[0].body, "same body on retries");
        assert!(request.verifies_with(SECRET), "every attempt is signed");
    }
    // Nominal delays 40, 80, 160 ms; equal jitter keeps at least half of each.
    for (n, minimum) in [(1, 20), (2, 40), (3, 80)] {
        let gap = requests[n].at - requests[n - 1].at;
        assert!(
            gap >= Duration::from_millis(minimum),
            "retry {n} came after {gap:?}, before the backoff of at least {minimum} ms"
        );
    }
}

#[tokio::test]
async fn the_kind_after_retries_follows_the_status() {
    for (status, kind) in [
        (500, ErrorKind::Backend),
        (502, ErrorKind::Unavailable),
        (504, ErrorKind::Timeout),
        (429, ErrorKind::Unavailable),
    ] {
        let server = TestServer::start();
        server.always(Reply::status(status));
        let notifier = started(WebhookOptions {
            max_retries: 2,
            ..options_for(&server)
        })
        .await;
        let err = notifier.send(&message()).await.unwrap_err();
        assert_eq!(err.kind(), kind, "{status}: {err}");
        assert_eq!(server.requests().len(), 3, "{status} is retried");
    }
}

#[tokio::test]
async fn a_retry_that_succeeds_delivers_with_the_same_id() {
    let server = TestServer::start();
    server.script([Reply::status(503), Reply::status(500), Reply::ok()]);
    let notifier = started(options_for(&server)).await;
    let receipt = notifier
        .send(&message())
        .await
        .expect("delivered on the third attempt");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.header(MESSAGE_ID_HEADER) == Some(receipt.id.as_str()))
    );
    assert!(
        notifier.health().await.is_healthy(),
        "a success clears the failures"
    );
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for (status, kind) in [
        (400, ErrorKind::InvalidInput),
        (422, ErrorKind::InvalidInput),
        (413, ErrorKind::InvalidInput),
        (401, ErrorKind::Backend),
        (403, ErrorKind::Backend),
        (404, ErrorKind::Backend),
        (410, ErrorKind::Backend),
        (408, ErrorKind::Timeout),
        (409, ErrorKind::Conflict),
        (418, ErrorKind::Backend),
    ] {
        let server = TestServer::start();
        server.always(Reply::status(status).body("{\"error\":\"no\"}"));
        let notifier = started(WebhookOptions {
            max_retries: 3,
            ..options_for(&server)
        })
        .await;
        let err = notifier.send(&message()).await.unwrap_err();
        assert_eq!(err.kind(), kind, "{status}: {err}");
        assert!(err.message().contains(&status.to_string()), "{err}");
        assert_eq!(
            server.requests().len(),
            1,
            "{status} must not be retried: the server saw exactly one request"
        );
    }
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let server = TestServer::start();
    server.always(Reply::status(302).header("location", format!("{}/elsewhere", server.origin())));
    let notifier = started(options_for(&server)).await;
    let err = notifier.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Backend);
    assert!(
        err.message().contains("redirects are not followed"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retry_after_is_honoured_and_a_long_one_ends_the_retries() {
    let server = TestServer::start();
    server.script([Reply::status(429).header("retry-after", "1"), Reply::ok()]);
    let notifier = started(WebhookOptions {
        retry_max_delay_ms: 2000,
        ..options_for(&server)
    })
    .await;
    notifier
        .send(&message())
        .await
        .expect("delivered after the pause");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].at - requests[0].at >= Duration::from_millis(950));

    let server = TestServer::start();
    server.always(Reply::status(503).header("retry-after", "120"));
    let notifier = started(options_for(&server)).await;
    let started_at = Instant::now();
    let err = notifier.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("retry after 120 s"), "{err}");
    assert_eq!(server.requests().len(), 1);
    assert!(started_at.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_unavailable() {
    let port = closed_port();
    let options = WebhookOptions {
        max_retries: 2,
        retry_base_delay_ms: 50,
        retry_max_delay_ms: 1000,
        ..WebhookOptions::new(format!("http://bot:{SECRET}@127.0.0.1:{port}/hooks/token"))
    };
    let notifier = started(options).await;
    let started_at = Instant::now();
    let err = notifier.send(&message()).await.unwrap_err();
    let elapsed = started_at.elapsed();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.kind().is_retryable());
    let expected = format!("cannot connect to the endpoint http://***@127.0.0.1:{port}/***");
    assert!(err.message().contains(&expected), "{err}");
    assert!(err.message().contains("gave up after 3 attempts"), "{err}");
    assert!(!err.to_string().contains(SECRET) && !err.to_string().contains("token"));
    // Two backoffs of nominally 50 and 100 ms, at least half of each.
    assert!(elapsed >= Duration::from_millis(75), "{elapsed:?}");
}

#[tokio::test]
async fn a_slow_endpoint_is_a_timeout() {
    let server = TestServer::start();
    server.always(Reply::ok().after(Duration::from_secs(3)));
    let options = WebhookOptions {
        timeout_ms: 200,
        max_retries: 1,
        ..options_for(&server)
    };
    let notifier = started(options).await;
    let started_at = Instant::now();
    let err = notifier.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(err.message().contains("within 200 ms"), "{err}");
    assert!(started_at.elapsed() < Duration::from_secs(2));
    assert_eq!(
        server.requests().len(),
        2,
        "a timeout is retried (same message id)"
    );
    assert!(matches!(notifier.health().await, Health::Degraded(_)));
}

#[tokio::test]
async fn an_endpoint_that_goes_away_fails_typed_and_works_again_when_back() {
    let server = TestServer::start();
    let options = WebhookOptions {
        max_retries: 1,
        ..options_for(&server)
    };
    let notifier = started(options).await;
    notifier.send(&message()).await.expect("delivered while up");
    assert!(notifier.health().await.is_healthy());

    server.go_away().await;
    for _ in 0..3 {
        let err = notifier.send(&message()).await.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
            "{err}"
        );
    }
    match notifier.health().await {
        Health::Unhealthy(reason) => assert!(reason.contains("cannot reach"), "{reason}"),
        other => panic!("health while the endpoint is gone: {other:?}"),
    }

    server.come_back();
    notifier
        .send(&message())
        .await
        .expect("delivered once the endpoint is back");
    assert!(notifier.health().await.is_healthy());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn start_checks_the_endpoint_only_when_asked() {
    let port = closed_port();
    let url = format!("http://bot:{SECRET}@127.0.0.1:{port}/hooks/token");
    let lenient = WebhookNotifier::from_options(WebhookOptions::new(url.clone())).unwrap();
    lenient
        .start()
        .await
        .expect("no contact at start by default");
    assert!(matches!(lenient.health().await, Health::Unhealthy(_)));

    let strict = WebhookNotifier::from_options(WebhookOptions {
        verify_on_start: true,
        connect_timeout_ms: 500,
        ..WebhookOptions::new(url)
    })
    .unwrap();
    let started_at = Instant::now();
    let err = strict.start().await.unwrap_err();
    assert!(started_at.elapsed() < Duration::from_millis(1500));
    assert!(
        err.message()
            .contains(&format!("http://***@127.0.0.1:{port}/***")),
        "{err}"
    );
    assert!(!err.message().contains(SECRET) && !err.message().contains("token"));

    let server = TestServer::start();
    let reachable = WebhookNotifier::from_options(WebhookOptions {
        verify_on_start: true,
        ..options_for(&server)
    })
    .unwrap();
    reachable.start().await.expect("reachable");
    assert!(reachable.health().await.is_healthy());
    assert!(
        server.requests().is_empty(),
        "start and health POST nothing"
    );
}

#[tokio::test]
async fn stop_ends_sends_in_flight_and_later_ones() {
    let server = TestServer::start();
    server.always(Reply::ok().after(Duration::from_secs(5)));
    let notifier = std::sync::Arc::new(started(options_for(&server)).await);
    let in_flight = {
        let notifier = std::sync::Arc::clone(&notifier);
        tokio::spawn(async move { notifier.send(&message()).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped_at = Instant::now();
    notifier.stop().await.unwrap();
    let err = in_flight.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Stopped);
    assert!(stopped_at.elapsed() < Duration::from_secs(1));
    assert_eq!(
        notifier.send(&message()).await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
    assert!(matches!(notifier.health().await, Health::Unhealthy(_)));
    notifier.stop().await.expect("stopping twice is harmless");
}

#[tokio::test]
async fn invalid_messages_are_refused_before_anything_is_sent() {
    let server = TestServer::start();
    let notifier = started(options_for(&server)).await;
    for bad in [Message::new("#ops", ""), Message::new(" \t", "x")] {
        let err = notifier.send(&bad).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
    assert!(server.requests().is_empty());
    assert!(
        notifier.health().await.is_healthy(),
        "the caller's mistake is not ill health"
    );
    assert_eq!(
        notifier.send_batch(&[message()]).await.unwrap_err().kind(),
        ErrorKind::Unsupported
    );
}

#[tokio::test]
async fn sending_before_start_is_unavailable() {
    let notifier =
        WebhookNotifier::from_options(WebhookOptions::new("http://127.0.0.1:9/")).unwrap();
    let err = notifier.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("not been started"), "{err}");
}
