//! `taskqueue.postgres` passes the whole `taskqueue` kit against a real PostgreSQL server. Each
//! obligation works in its own namespace (`request.namespace`) of one shared table, so
//! obligations running at once, and earlier runs, never see each other's tasks.

mod support;

use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};

sandloom_driverkit::taskqueue_conformance!(
    #[cfg_attr(
        not(sandloom_test_postgres),
        ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    PostgresTaskQueue,
    |request| PostgresTaskQueueOptions {
        url: support::server_url().into(),
        table: "sandloom_kit_tasks".to_owned(),
        namespace: request.namespace.clone(),
        visibility_timeout_ms: request.visibility_timeout.as_millis() as u64,
        max_attempts: request.max_attempts,
        ..Default::default()
    }
);
