//! `taskqueue.amqp` passes the whole `taskqueue` conformance kit against a real RabbitMQ.
//!
//! Needs `SANDLOOM_TEST_AMQP_URL` (`eval "$(scripts/test-services up)"`); without it every
//! obligation is reported as ignored. Each obligation gets queues of its own under a prefix made
//! from the kit's namespace, declared with `x-expires` so the broker deletes them a minute
//! after the run.

use sandloom_conformance::KitRequest;
use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};

/// The password of the kit's instance pointed at an unreachable address (the test broker's own
/// is `guest`, also its user name, which shows as the user): the kit checks it shows nowhere.
const PASSWORD: &str = "sandloom-kit-amqp-password";

/// The broker, or for the kit's secrets obligation an address where nothing answers.
fn url(request: &KitRequest) -> String {
    if request.unreachable {
        format!("amqp://guest:{PASSWORD}@127.0.0.1:1/%2f")
    } else {
        server_url()
    }
}

fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_AMQP_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_AMQP_URL").map(str::to_owned))
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

sandloom_conformance::taskqueue_conformance!(
    #[cfg_attr(
        not(sandloom_test_amqp),
        ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    AmqpTaskQueue,
    |request| AmqpTaskQueueOptions {
        url: url(request).into(),
        queue_prefix: format!("sandloom-test.{}.", request.namespace),
        visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
        max_attempts: request.max_attempts,
        queue_ttl_ms: Some(60_000),
        ..AmqpTaskQueueOptions::default()
    },
    .secrets([PASSWORD])
);
