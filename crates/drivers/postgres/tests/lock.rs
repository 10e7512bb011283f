//! What `lock.postgres` keeps in its table, read back with `tokio-postgres` directly: a name's
//! row stays after its release as its fence counter, so fences keep growing across instances
//! (a restarted application) and the holder's expiry is the server's `now()`.

mod support;

use std::time::Duration;

use sandloom_driver_postgres::{PostgresLock, PostgresLockOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::lock::Lock;

const TABLE: &str = "sandloom_test_locks";

async fn started(namespace: &str) -> PostgresLock {
    let lock = PostgresLock::from_options(PostgresLockOptions {
        url: support::server_url().into(),
        table: TABLE.to_owned(),
        namespace: namespace.to_owned(),
        ..PostgresLockOptions::default()
    })
    .unwrap();
    lock.start().await.unwrap();
    lock
}

#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL and rebuild"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fences_survive_a_new_instance_and_the_row_stays_as_the_counter() {
    let namespace = support::unique("lock");
    let ttl = Duration::from_secs(30);
    let first = {
        let lock = started(&namespace).await;
        let lease = lock.acquire("job", ttl).await.unwrap().unwrap();
        assert!(lock.release(&lease).await.unwrap());
        lock.stop().await.unwrap();
        lease
    };
    // A new instance, as after a restart of the application.
    let lock = started(&namespace).await;
    let second = lock.acquire("job", ttl).await.unwrap().unwrap();
    assert!(second.fence > first.fence, "{second:?} after {first:?}");

    let (client, connection) =
        tokio_postgres::connect(&support::server_url(), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            &format!(
                "SELECT token, fence, extract(epoch FROM expires_at - now())::float8
                 FROM \"{TABLE}\" WHERE namespace = $1 AND name = 'job'"
            ),
            &[&namespace],
        )
        .await
        .unwrap();
    let token: Option<String> = row.get(0);
    let fence: i64 = row.get(1);
    let left: f64 = row.get(2);
    assert_eq!(token.as_deref(), Some(second.token.as_str()));
    assert_eq!(u64::try_from(fence).unwrap(), second.fence);
    assert!(left > 29.0 && left <= 30.0, "{left}");
    assert!(lock.release(&second).await.unwrap());
    let released: Option<String> = client
        .query_one(
            &format!("SELECT token FROM \"{TABLE}\" WHERE namespace = $1 AND name = 'job'"),
            &[&namespace],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        released, None,
        "a release clears the token and keeps the row"
    );
    lock.stop().await.unwrap();
}

#[cfg_attr(
    not(sandloom_test_postgres),
    ignore = "needs a real server: set SANDLOOM_TEST_POSTGRES_URL and rebuild"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_waiter_with_stopped() {
    let namespace = support::unique("lock");
    let lock = std::sync::Arc::new(started(&namespace).await);
    let ttl = Duration::from_secs(30);
    lock.acquire("job", ttl).await.unwrap().unwrap();
    let waiter = {
        let lock = std::sync::Arc::clone(&lock);
        tokio::spawn(async move { lock.acquire_wait("job", ttl, Duration::from_secs(20)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopped_at = std::time::Instant::now();
    lock.stop().await.unwrap();
    let err = waiter.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), sandloom_driverkit::sdk::ErrorKind::Stopped);
    assert!(stopped_at.elapsed() < Duration::from_secs(2));
}
