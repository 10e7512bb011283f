//! The quickstart's lock step (`examples/quickstart/lock.rs`, included from the example) on a
//! real Redis, as `[lock.default] driver = "redis"` in `INFRA` selects it: the lock is taken
//! through `infra.lock()`, its fence accepted by the report, the lock released; each run's
//! fence is greater. And `lock`, now stable, passes `infra check` in production with no
//! accepted risk, on every driver.
//!
//! The test runs its own `redis-server` on a port of its own (the binary must be on PATH, as
//! for the Redis driver's own failure tests).

mod common;

#[path = "../../../examples/quickstart/lock.rs"]
mod quickstart_lock;

#[path = "../../drivers/redis/tests/support/mod.rs"]
mod redis_support;

use std::sync::Arc;
use std::time::Duration;

use redis_support::OwnRedis;
use sandloom::LinkedDrivers;
use sandloom::cli::{Status, execute};
use sandloom::sdk::LOCK;
use sandloom::sdk::lock::{KeepAlive, LeaseStatus};

fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_driver_redis,
        sandloom_driver_postgres
    )
}

fn redis_infra(url: &str, environment: &str) -> String {
    format!(
        "environment = \"{environment}\"\n\n[lock.default]\ndriver = \"redis\"\nurl = \"{url}\"\nprefix = \"quickstart-lock-test\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_takes_fences_and_releases_a_lock_on_redis() {
    let server = OwnRedis::start();
    let running = common::start(&redis_infra(&server.url(), "development"), linked())
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(
        running
            .report()
            .to_string()
            .contains("sandloom-driver-redis"),
        "{}",
        running.report()
    );
    let infra = running.infra();

    let mut report = quickstart_lock::Report::default();
    let first = quickstart_lock::write_the_report(infra, &mut report)
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        (report.fence, report.body.as_str()),
        (first, "nightly figures")
    );
    let second = quickstart_lock::write_the_report(infra, &mut report)
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(second > first, "fences {first} then {second}");
    // A write with the first grant's fence is refused now.
    assert!(!report.write(first, "stale"));

    // The keep-alive over the same instance, as a module holds a lease past its ttl.
    let lock = infra.capability_arc(&LOCK, "default").unwrap();
    let ttl = Duration::from_millis(300);
    let keep_alive = KeepAlive::acquire(Arc::clone(&lock), "nightly-report", ttl)
        .await
        .unwrap()
        .expect("the lock is free");
    assert!(keep_alive.fence() > second);
    tokio::time::sleep(ttl * 4).await;
    assert!(
        matches!(keep_alive.status(), LeaseStatus::Held { .. }),
        "{:?}",
        keep_alive.status()
    );
    assert!(
        lock.acquire("nightly-report", ttl).await.unwrap().is_none(),
        "the kept-alive lease holds the lock four ttls on"
    );
    assert!(keep_alive.release().await.unwrap());
    running.shutdown().await.unwrap();
}

#[test]
fn infra_check_accepts_lock_in_production_with_no_accepted_risk() {
    let infra = [
        redis_infra("redis://127.0.0.1:6379", "production"),
        "environment = \"production\"\n\n[lock.default]\ndriver = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:5432/test\"\n".to_owned(),
        "environment = \"production\"\n\n[lock.default]\ndriver = \"memory\"\n".to_owned(),
    ];
    for text in infra {
        let report = sandloom::Kernel::new(common::config(&text), linked())
            .check()
            .unwrap_or_else(|err| panic!("{text}\n{err}"));
        assert!(report.to_string().contains("lock.default"), "{report}");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("infra.toml");
        std::fs::write(&path, &text).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = execute(
            linked(),
            ["app", "infra", "check", "--infra", path.to_str().unwrap()],
            &mut out,
            &mut err,
        );
        let out = String::from_utf8_lossy(&out);
        assert_eq!(
            status,
            Status::Ok,
            "{text}\n{out}{}",
            String::from_utf8_lossy(&err)
        );
        assert!(out.contains("no problems found"), "{out}");
        assert!(!out.contains("SANDLOOM-B023"), "{out}");
    }
}
