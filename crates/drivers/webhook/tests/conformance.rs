//! `notifier.webhook` passes the conformance kit of the `notifier` contract against a real HTTP
//! server in the test process: one per obligation, so `delivered` reads exactly what that
//! instance sent (only requests whose signature verifies count as delivered).

mod support;

use std::sync::Arc;

use sandloom_driver_webhook::{WebhookNotifier, WebhookOptions};
use sandloom_driverkit::notifier::Message;
use support::{SECRET, TestServer, registry};

/// The options of the kit's instance pointed at an unreachable address, with the same secrets.
fn unreachable_options() -> WebhookOptions {
    WebhookOptions {
        secret: Some(SECRET.into()),
        retry_base_delay_ms: 10,
        retry_max_delay_ms: 100,
        ..WebhookOptions::new(format!("http://kit:{SECRET}@127.0.0.1:1/hooks/unreachable"))
    }
}

fn options(namespace: &str) -> WebhookOptions {
    let server = TestServer::start();
    // The path carries the namespace, as a real deployment's token would: never shown.
    let url = format!(
        "http://kit:{SECRET}@127.0.0.1:{}/hooks/{namespace}",
        server.port()
    );
    registry().lock().unwrap().insert(
        format!("{}/***", server.origin()).replace("://", "://***@"),
        server,
    );
    WebhookOptions {
        secret: Some(SECRET.into()),
        retry_base_delay_ms: 10,
        retry_max_delay_ms: 100,
        ..WebhookOptions::new(url)
    }
}

fn delivered(notifier: &WebhookNotifier) -> Vec<Message> {
    let server = registry()
        .lock()
        .unwrap()
        .get(notifier.endpoint())
        .map(Arc::clone)
        .expect("every instance has its server");
    server
        .requests()
        .iter()
        .filter(|request| request.verifies_with(SECRET))
        .filter(|request| request.header("authorization").is_some())
        .map(support::Recorded::message)
        .collect()
}

sandloom_conformance::notifier_conformance!(
    WebhookNotifier,
    |request| if request.unreachable {
        unreachable_options()
    } else {
        options(&request.namespace)
    },
    .valid_recipient("#ops")
    // More recipients, for the obligations about several: each request must name its own.
    .valid_recipient("#dev")
    .valid_recipient("@oncall")
    .delivered(delivered)
    .secrets([SECRET])
);
