//! The secret key and the session token never appear in `Debug` output, in errors or in
//! captured logs (this binary's global tracing subscriber captures everything at TRACE, the
//! `log` records of the HTTP stack included).

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::{ListOptions, ObjectStore, PutCondition};
use sandloom_driverkit::sdk::bytes::Bytes;

const SECRET: &str = "hunter2-secret";
const TOKEN: &str = "hunter2-session-token";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything logged in this process so far.
fn logs() -> String {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    let captured = CAPTURED.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .try_init()
            .unwrap();
        captured
    });
    String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned()
}

fn assert_clean(what: &str, text: &str) {
    assert!(
        !text.contains(SECRET),
        "{what} shows the secret key: {text}"
    );
    assert!(
        !text.contains(TOKEN),
        "{what} shows the session token: {text}"
    );
}

fn with_secrets(options: S3ObjectStoreOptions) -> S3ObjectStoreOptions {
    S3ObjectStoreOptions {
        secret_access_key: Some(SECRET.into()),
        session_token: Some(TOKEN.into()),
        ..options
    }
}

#[tokio::test]
async fn secrets_stay_out_of_debug_and_errors_without_a_server() {
    let _ = logs();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let options = with_secrets(S3ObjectStoreOptions {
        endpoint: Some(format!("http://127.0.0.1:{port}").into()),
        bucket: "b".into(),
        access_key_id: Some("id".into()),
        connect_timeout_ms: 500,
        ..Default::default()
    });
    assert_clean("Debug of the options", &format!("{options:?}"));
    assert!(format!("{options:?}").contains("<redacted>"));
    let store = S3ObjectStore::from_options(options.clone()).unwrap();
    assert_clean("Debug of the driver", &format!("{store:?}"));
    let err = store.start().await.unwrap_err();
    assert_clean("the start error", &format!("{err} / {err:?}"));
    let refused = S3ObjectStore::validate(&S3ObjectStoreOptions {
        access_key_id: None,
        ..options.clone()
    })
    .unwrap_err();
    assert_clean("the validate error", &format!("{refused} / {refused:?}"));
    let in_url = S3ObjectStore::validate(&S3ObjectStoreOptions {
        endpoint: Some(format!("http://id:{SECRET}@127.0.0.1:{port}").into()),
        ..options
    })
    .unwrap_err();
    assert_clean(
        "the error about user-info",
        &format!("{in_url} / {in_url:?}"),
    );
    assert_clean("the logs", &logs());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_s3),
    ignore = "needs a real server: set SANDLOOM_TEST_S3_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn secrets_stay_out_of_errors_and_logs_of_a_working_driver() {
    let _ = logs();
    let options = with_secrets(S3ObjectStoreOptions {
        // Conditional writes on, so their `Conflict` errors are checked too.
        conditional_put: true,
        ..support::options(&format!("secrets/{}", support::unique("run")))
    });
    let store = S3ObjectStore::from_options(options).unwrap();
    store.start().await.unwrap();
    assert_clean("Debug of the started driver", &format!("{store:?}"));
    store.put("a", Bytes::from_static(b"x")).await.unwrap();
    let mut errors = vec![
        store.get("missing").await.unwrap_err(),
        store.put("a//b", Bytes::new()).await.unwrap_err(),
        store
            .put_if("a", Bytes::new(), PutCondition::IfAbsent)
            .await
            .unwrap_err(),
        store
            .put_if("a", Bytes::new(), PutCondition::IfMatch("\"stale\"".into()))
            .await
            .unwrap_err(),
    ];
    store.list("", ListOptions::default()).await.unwrap();
    store.delete("a").await.unwrap();
    store.stop().await.unwrap();
    errors.push(store.get("a").await.unwrap_err());
    for err in &errors {
        assert_clean("an operation error", &format!("{err} / {err:?}"));
    }
    let logs = logs();
    assert!(
        !logs.is_empty(),
        "nothing was captured: the check would prove nothing"
    );
    assert_clean("the logs", &logs);
}
