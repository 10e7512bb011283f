//! `lock.postgres` passes the whole `lock` kit against a real PostgreSQL server. Each
//! obligation works in its own namespace of one shared table, unique per run too (the table
//! outlives the tests, and its rows are the names' fence counters).

mod support;

use std::time::{SystemTime, UNIX_EPOCH};

use sandloom_conformance::KitRequest;
use sandloom_driver_postgres::{PostgresLock, PostgresLockOptions};

/// A password in the url of the kit's instance pointed at an unreachable address (the test
/// server takes none): the kit checks it shows nowhere.
const URL_PASSWORD: &str = "sandloom-kit-postgres-lock-url-password";
/// The `password` option of every instance (a server that trusts the connection ignores it).
const PASSWORD: &str = "sandloom-kit-postgres-lock-password";

fn options(request: &KitRequest) -> PostgresLockOptions {
    let url = if request.unreachable {
        format!("postgres://postgres:{URL_PASSWORD}@127.0.0.1:1/test")
    } else {
        support::server_url()
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    PostgresLockOptions {
        url: url.into(),
        password: Some(PASSWORD.to_owned().into()),
        table: "sandloom_kit_locks".to_owned(),
        namespace: format!("{}-{nanos}", request.namespace),
        ..Default::default()
    }
}

sandloom_conformance::lock_conformance!(
    #[cfg_attr(
        not(sandloom_test_postgres),
        ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    PostgresLock,
    options,
    .secrets([URL_PASSWORD, PASSWORD])
);
