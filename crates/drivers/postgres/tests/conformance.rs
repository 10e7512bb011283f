//! `taskqueue.postgres` passes the whole `taskqueue` kit against a real PostgreSQL server. Each
//! obligation works in its own namespace (`request.namespace`) of one shared table, so
//! obligations running at once, and earlier runs, never see each other's tasks.

mod support;

use sandloom_conformance::KitRequest;
use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};

/// A password in the url of the kit's instance pointed at an unreachable address (the test
/// server trusts its connections and takes none): the kit checks it shows nowhere.
const URL_PASSWORD: &str = "sandloom-kit-postgres-url-password";
/// The `password` option of every instance (a server that trusts the connection ignores it).
const PASSWORD: &str = "sandloom-kit-postgres-password";

/// The dedupe window the kit run configures, and declares to the kit (which waits it out).
const DEDUPE_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// The server, or for the kit's secrets obligation an address where nothing answers.
fn url(request: &KitRequest) -> String {
    if request.unreachable {
        format!("postgres://postgres:{URL_PASSWORD}@127.0.0.1:1/test")
    } else {
        support::server_url()
    }
}

sandloom_conformance::taskqueue_conformance!(
    #[cfg_attr(
        not(sandloom_test_postgres),
        ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    PostgresTaskQueue,
    |request| PostgresTaskQueueOptions {
        url: url(request).into(),
        password: Some(PASSWORD.to_owned().into()),
        table: "sandloom_kit_tasks".to_owned(),
        namespace: request.namespace.clone(),
        visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
        max_attempts: request.max_attempts,
        dedupe_window_ms: DEDUPE_WINDOW.as_millis() as u64,
        ..Default::default()
    },
    .secrets([URL_PASSWORD, PASSWORD])
    .dedupe_window(DEDUPE_WINDOW)
);
