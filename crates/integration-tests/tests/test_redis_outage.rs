//! `cache.redis` through the kernel, as an application meets it, while its server goes away:
//! operations in flight and every operation after fail typed (`Unavailable` or `Timeout`), never
//! panic; once the server is back the same `infra.cache()` works again without a restart of the
//! application; shutdown is clean.
//!
//! The test runs its own `redis-server` on a port of its own (the binary must be on PATH, as for
//! the driver's own failure tests); the server helpers are those of those tests, included from
//! the driver crate rather than copied.

mod common;

#[path = "../../drivers/redis/tests/support/mod.rs"]
mod redis_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis_support::OwnRedis;
use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{ErrorKind, Infra, InfraResult};

/// Operations that do not recover (or do not fail) within this are a failed test, not a hang.
const PATIENCE: Duration = Duration::from_secs(20);

/// What the workers saw, shared with the test.
#[derive(Default)]
struct Tally {
    succeeded: AtomicU64,
    failed: AtomicU64,
    stop: AtomicBool,
}

/// An error of the outage: `Unavailable` or `Timeout`, and nothing else.
fn ensure_retryable<T: std::fmt::Debug>(what: &str, result: &InfraResult<T>) -> bool {
    match result {
        Ok(_) => true,
        Err(err) => {
            assert!(
                matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
                "{what}: expected Unavailable or Timeout, got {:?}: {err}",
                err.kind()
            );
            false
        }
    }
}

/// One application task: every cache operation, over and over, until told to stop.
async fn work(infra: Arc<Infra>, n: usize, tally: Arc<Tally>) {
    let cache = infra.cache().expect("cache.default is configured");
    let (key, counter) = (format!("w{n}"), format!("n{n}"));
    let mut round = 0_u64;
    while !tally.stop.load(Ordering::Acquire) {
        round += 1;
        let value = Bytes::from(round.to_string());
        let outcomes = [
            ensure_retryable("set", &cache.set(&key, value.clone()).await),
            ensure_retryable("get", &cache.get(&key).await),
            ensure_retryable(
                "set_with_ttl",
                &cache
                    .set_with_ttl(&key, value, Duration::from_mins(1))
                    .await,
            ),
            ensure_retryable("increment", &cache.increment(&counter, 1).await),
            ensure_retryable("get_many", &cache.get_many(&[&key, &counter]).await),
            ensure_retryable("delete", &cache.delete(&key).await),
        ];
        for ok in outcomes {
            let seen = if ok { &tally.succeeded } else { &tally.failed };
            seen.fetch_add(1, Ordering::Relaxed);
        }
        // Failing calls may answer at once: let the test's own task run.
        tokio::task::yield_now().await;
    }
}

/// Wait until `counter` has grown by `more` since `from`; panics after `PATIENCE`.
async fn until_grown(counter: &AtomicU64, more: u64, what: &str) {
    let from = counter.load(Ordering::Relaxed);
    let begin = Instant::now();
    while counter.load(Ordering::Relaxed) < from + more {
        assert!(
            begin.elapsed() < PATIENCE,
            "{what}: not within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cache_through_the_kernel_fails_typed_while_its_server_is_gone_and_recovers() {
    let mut server = OwnRedis::start();
    let text = format!(
        "[cache.default]\ndriver = \"redis\"\nurl = \"{}\"\nconnect_timeout_ms = 1000\nresponse_timeout_ms = 500\n",
        server.url()
    );
    let running = common::start(&text, sandloom::link_drivers!(sandloom_driver_redis))
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let infra = Arc::clone(running.infra());
    let cache = infra.cache().unwrap();
    cache.set("k", "v".into()).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));

    // Application tasks keep the cache busy; the server dies under them.
    let tally = Arc::new(Tally::default());
    let workers: Vec<_> = (0..4)
        .map(|n| tokio::spawn(work(Arc::clone(&infra), n, Arc::clone(&tally))))
        .collect();
    until_grown(&tally.succeeded, 200, "operations before the outage").await;
    server.kill();
    until_grown(&tally.failed, 50, "typed failures during the outage").await;

    // Every operation of the test's own, while the server is gone: typed, no panic.
    for round in 0..3 {
        assert!(
            !ensure_retryable("get", &cache.get("k").await),
            "round {round}"
        );
        assert!(!ensure_retryable(
            "set_many",
            &cache.set_many(&[("a", "1".into())]).await
        ));
        assert!(!ensure_retryable(
            "delete_many",
            &cache.delete_many(&["a"]).await
        ));
    }
    let health = running.health().await;
    assert!(
        health.iter().all(|(_, health)| !health.is_healthy()),
        "{health:?}"
    );

    eprintln!(
        "server killed under {} successful operations; {} failed typed since",
        tally.succeeded.load(Ordering::Relaxed),
        tally.failed.load(Ordering::Relaxed)
    );
    server.restart();
    until_grown(&tally.succeeded, 200, "operations after the restart").await;
    tally.stop.store(true, Ordering::Release);
    for worker in workers {
        worker.await.expect("an application task panicked");
    }
    // The restarted server is empty (no persistence); the same handle works on it.
    assert_eq!(cache.get("k").await.unwrap(), None);
    cache.set("k", "again".into()).await.unwrap();
    assert_eq!(
        cache.get("k").await.unwrap().as_deref(),
        Some(&b"again"[..])
    );
    let health = running.health().await;
    assert!(
        health.iter().all(|(_, health)| health.is_healthy()),
        "{health:?}"
    );

    running
        .shutdown()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        cache.get("k").await.unwrap_err().kind(),
        ErrorKind::Stopped,
        "after shutdown"
    );
}
