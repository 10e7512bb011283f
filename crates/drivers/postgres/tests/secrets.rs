//! The password never shows: not in `Debug` of the options or the driver, not in the errors of
//! `validate`, `start` and operations (their messages, causes and `Debug`), not in log lines.

use std::fmt::Write as _;
use std::time::Duration;

use sandloom_driver_postgres::{PostgresTaskQueue, PostgresTaskQueueOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::taskqueue::{EnqueueOptions, TaskQueue};
use sandloom_test_support::LogCapture;

const SECRET: &str = "hunter2-secret";
const URL: &str = "postgres://postgres:hunter2-secret@127.0.0.1:1/test";

/// The message and every cause, and `Debug`.
fn everything_shown(err: &(dyn std::error::Error + 'static)) -> String {
    let mut shown = format!("{err} {err:?}");
    let mut source = err.source();
    while let Some(cause) = source {
        let _ = write!(shown, " {cause} {cause:?}");
        source = cause.source();
    }
    shown
}

fn assert_hidden(what: &str, shown: &str) {
    assert!(
        !shown.contains(SECRET),
        "{what} shows the password: {shown}"
    );
}

fn options_in_both_places() -> [PostgresTaskQueueOptions; 2] {
    [
        PostgresTaskQueueOptions {
            url: URL.into(),
            connect_timeout_ms: 500,
            ..Default::default()
        },
        PostgresTaskQueueOptions {
            url: "postgres://postgres@127.0.0.1:1/test".into(),
            password: Some(SECRET.into()),
            connect_timeout_ms: 500,
            ..Default::default()
        },
    ]
}

#[test]
fn debug_and_validation_errors_hide_the_password() {
    for options in options_in_both_places() {
        let shown = format!("{options:?}");
        assert_hidden("Debug of the options", &shown);
        assert!(shown.contains("postgres://***@127.0.0.1:1/test"), "{shown}");
        let invalid = PostgresTaskQueueOptions {
            table: "no good".into(),
            ..options.clone()
        };
        let err = PostgresTaskQueue::validate(&invalid).unwrap_err();
        assert_hidden("a validation error", &everything_shown(&err));
        let queue = PostgresTaskQueue::from_options(options).unwrap();
        assert_hidden("Debug of the driver", &format!("{queue:?}"));
    }
    // A URL too broken to parse is not echoed either.
    let broken = PostgresTaskQueueOptions {
        url: format!("host='127.0.0.1 password={SECRET}").into(),
        ..Default::default()
    };
    assert_hidden("Debug of broken options", &format!("{broken:?}"));
    let err = PostgresTaskQueue::validate(&broken).unwrap_err();
    assert_hidden("the error of a broken URL", &everything_shown(&err));
}

#[test]
fn start_and_operation_errors_and_logs_hide_the_password() {
    let logs = LogCapture::new();
    let subscriber = logs.subscriber(tracing::Level::TRACE);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            for options in options_in_both_places() {
                let queue = PostgresTaskQueue::from_options(options).unwrap();
                let err = queue.start().await.unwrap_err();
                assert_hidden("the start error", &everything_shown(&err));
                assert!(err.message().contains("127.0.0.1:1"), "{err}");
                let op = queue
                    .enqueue("q", Bytes::from_static(b"x"), EnqueueOptions::default())
                    .await
                    .unwrap_err();
                assert_hidden("an operation error", &everything_shown(&op));
                assert!(op.message().contains("postgres://***@127.0.0.1:1/test"));
                let reserve = queue.reserve("q", Duration::ZERO).await.unwrap_err();
                assert_hidden("a reserve error", &everything_shown(&reserve));
                let health = queue.health().await;
                assert_hidden("health", &format!("{health:?}"));
                queue.stop().await.unwrap();
            }
        });
    });
    assert_hidden("the logs", &logs.text());
}
