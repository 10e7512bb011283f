//! The password of the broker URL never appears in `Debug` output, error messages, error
//! sources or log lines, whatever fails.

mod support;

use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sandloom_driver_amqp::{AmqpTaskQueue, AmqpTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, Task, TaskQueue};

const SECRET: &str = "hunter2-secret";
const URL: &str = "amqp://guest:hunter2-secret@127.0.0.1:1/%2f";

/// Everything every test of this binary logged, at every level.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    Arc::clone(LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Sink(Arc::clone(&sink)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        logs
    }))
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The error, its message and its whole source chain.
fn everything_about(err: &dyn std::error::Error) -> String {
    let mut text = format!("{err} / {err:?}");
    let mut source = err.source();
    while let Some(cause) = source {
        let _ = write!(text, " / {cause} / {cause:?}");
        source = cause.source();
    }
    text
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows the password: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_password_never_shows_when_the_broker_is_unreachable() {
    let logs = captured_logs();
    let options = AmqpTaskQueueOptions {
        url: URL.into(),
        connect_timeout_ms: 1_000,
        reconnect_backoff_max_ms: 1,
        ..AmqpTaskQueueOptions::default()
    };
    assert_clean("the options' Debug", &format!("{options:?}"));
    assert!(format!("{options:?}").contains("amqp://***@127.0.0.1:1/%2f"));
    let queue = AmqpTaskQueue::from_options(options).unwrap();
    assert_clean("the driver's Debug", &format!("{queue:?}"));

    let err = queue.start().await.unwrap_err();
    assert!(
        err.to_string().contains("amqp://***@127.0.0.1:1/%2f"),
        "{err}"
    );
    assert_clean("the start error", &everything_about(&err));

    let enqueue = queue
        .enqueue("jobs", "x".into(), EnqueueOptions::default())
        .await
        .unwrap_err();
    assert_clean("the enqueue error", &everything_about(&enqueue));
    tokio::time::sleep(Duration::from_millis(5)).await;
    let reserve = queue.reserve("jobs", Duration::ZERO).await.unwrap_err();
    assert_clean("the reserve error", &everything_about(&reserve));
    tokio::time::sleep(Duration::from_millis(5)).await;
    let dead = queue.dead_letters("jobs", 1).await.unwrap_err();
    assert_clean("the dead_letters error", &everything_about(&dead));
    let foreign = Reservation::new(Task::new("t", "jobs", "x".into(), 1), "r");
    let ack = queue.ack(&foreign).await.unwrap_err();
    assert_clean("the ack error", &everything_about(&ack));
    assert_clean("the health report", &format!("{:?}", queue.health().await));
    queue.stop().await.unwrap();

    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logged.contains("amqp://***@127.0.0.1:1/%2f"),
        "the failed reconnections are logged, with the address: {logged}"
    );
    assert_clean("the log", &logged);
}

#[test]
fn the_password_never_shows_when_the_options_are_refused() {
    for url in [
        "amqp://guest:hunter2-secret@/%2f",
        "http://guest:hunter2-secret@127.0.0.1:5672/%2f",
        "amqp://guest:hunter2-secret@127.0.0.1:notaport/%2f",
        "guest:hunter2-secret@127.0.0.1",
    ] {
        let options = AmqpTaskQueueOptions {
            url: url.into(),
            ..AmqpTaskQueueOptions::default()
        };
        assert_clean("the options' Debug", &format!("{options:?}"));
        let err = AmqpTaskQueue::validate(&options).unwrap_err();
        assert_clean("the validation error", &everything_about(&err));
        let err = AmqpTaskQueue::from_options(options).unwrap_err();
        assert_clean("the construction error", &everything_about(&err));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_amqp),
    ignore = "needs a real server: set SANDLOOM_TEST_AMQP_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn the_password_never_shows_when_the_broker_refuses_it() {
    let logs = captured_logs();
    let addr = support::server_addr();
    let options = AmqpTaskQueueOptions {
        url: format!("amqp://guest:{SECRET}@{addr}/%2f").into(),
        connect_timeout_ms: 5_000,
        ..AmqpTaskQueueOptions::default()
    };
    let queue = AmqpTaskQueue::from_options(options).unwrap();
    let err = queue.start().await.unwrap_err();
    assert!(
        err.to_string().contains(&format!("amqp://***@{addr}/%2f")),
        "{err}"
    );
    assert_clean("the refused login", &everything_about(&err));
    let enqueue = queue
        .enqueue("jobs", "x".into(), EnqueueOptions::default())
        .await
        .unwrap_err();
    assert_clean("the enqueue error", &everything_about(&enqueue));
    queue.stop().await.unwrap();
    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert_clean("the log", &logged);
}
