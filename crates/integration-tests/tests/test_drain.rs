//! Graceful drain: `shutdown` lets the operations in flight finish (up to `stop_timeout_ms`)
//! before it stops the drivers, and an operation begun after shutdown started answers a typed
//! `Stopped` error instead of reaching a driver that is stopping.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{CacheOps, ErrorKind, InfraError, InfraResult};
use sandloom::{InfraConfig, Kernel};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
use tokio::sync::Semaphore;

/// Operations wait for a permit here, so the test decides when they finish.
static GATE: Semaphore = Semaphore::const_new(0);
/// Operations that reached the driver.
static ENTERED: AtomicUsize = AtomicUsize::new(0);
/// Operations that finished with `Ok`.
static FINISHED: AtomicUsize = AtomicUsize::new(0);
/// What happened, in order.
static EVENTS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// A cache whose `get` holds until the test releases it; after `stop` it answers `Stopped`.
struct Held {
    stopped: std::sync::atomic::AtomicBool,
}

impl CacheOps for Held {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        ENTERED.fetch_add(1, Ordering::SeqCst);
        GATE.acquire().await.expect("never closed").forget();
        if self.stopped.load(Ordering::Acquire) {
            EVENTS
                .lock()
                .unwrap()
                .push("an operation was cut off by stop");
            return Err(InfraError::stopped("cache"));
        }
        FINISHED.fetch_add(1, Ordering::SeqCst);
        EVENTS.lock().unwrap().push("get finished");
        Ok(None)
    }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

impl Driver for Held {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Self {
            stopped: std::sync::atomic::AtomicBool::new(false),
        })
    }
    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        EVENTS.lock().unwrap().push("stop");
        Ok(())
    }
}

impl CacheProvider for Held {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

sandloom_driverkit::register_driver!(cache, "held", Held);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_in_flight_finish_before_the_drivers_stop_and_new_ones_answer_stopped() {
    let config = InfraConfig::from_toml_str(
        "stop_timeout_ms = 20000\n[cache.default]\ndriver = \"held\"\n",
        "infra.toml",
    )
    .unwrap();
    let running = Kernel::new(config, sandloom::link_drivers!())
        .start()
        .await
        .unwrap();
    let cache = running
        .infra()
        .capability_arc(&sandloom::sdk::CACHE, "default")
        .unwrap();

    // Eight operations in flight, each held inside the driver.
    let in_flight: Vec<_> = (0..8)
        .map(|_| {
            let cache = std::sync::Arc::clone(&cache);
            tokio::spawn(async move { cache.get("k").await })
        })
        .collect();
    while ENTERED.load(Ordering::SeqCst) < 8 {
        tokio::task::yield_now().await;
    }

    let shutdown = tokio::spawn(running.shutdown());
    // Shutdown has begun once a new operation is refused; it must not have stopped the driver.
    let mut tries = 0;
    let refused = loop {
        tries += 1;
        assert!(
            tries < 1000,
            "no operation was refused after shutdown began"
        );
        match tokio::time::timeout(Duration::from_millis(20), cache.get("late")).await {
            Ok(Err(error)) if error.kind() == ErrorKind::Stopped => break error,
            Ok(other) => panic!("an operation after shutdown began answered {other:?}"),
            // Not refused yet: it went into the driver and waits there like the others.
            Err(_) => tokio::task::yield_now().await,
        }
    };
    assert!(refused.to_string().contains("stopped"), "{refused}");
    assert!(
        !EVENTS.lock().unwrap().contains(&"stop"),
        "the driver was stopped with operations in flight"
    );
    assert!(
        !shutdown.is_finished(),
        "shutdown did not wait for the operations in flight"
    );

    // Let them finish: every one completes normally, then the driver stops.
    GATE.add_permits(64);
    for task in in_flight {
        assert_eq!(task.await.unwrap().unwrap(), None);
    }
    shutdown.await.unwrap().unwrap();
    let events = EVENTS.lock().unwrap().clone();
    assert!(FINISHED.load(Ordering::SeqCst) >= 8, "{events:?}");
    assert_eq!(events.last(), Some(&"stop"), "{events:?}");
    assert!(
        !events.contains(&"an operation was cut off by stop"),
        "{events:?}"
    );
    assert_eq!(
        cache.get("after").await.unwrap_err().kind(),
        ErrorKind::Stopped
    );
}
