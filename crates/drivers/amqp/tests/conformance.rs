//! `taskqueue.amqp` passes the whole `taskqueue` conformance kit against a real RabbitMQ.
//!
//! Needs `SANDLOOM_TEST_AMQP_URL` (`eval "$(scripts/test-services up)"`); without it every
//! obligation is reported as ignored. Each obligation gets queues of its own under a prefix made
//! from the kit's namespace, declared with `x-expires` so the broker deletes them a minute
//! after the run.

use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};

// No `.secrets(…)`: the kit plants a password of its own in `url` (a `SecretUrl`, described
// as an `amqp://` address) and checks it shows nowhere; the test broker's own password is
// `guest`, also its user name, so a declared one could only go where the planted one does.

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
        url: server_url().into(),
        queue_prefix: format!("sandloom-test.{}.", request.namespace),
        visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
        max_attempts: request.max_attempts,
        queue_ttl_ms: Some(60_000),
        ..AmqpTaskQueueOptions::default()
    }
);
