//! The token and the values never appear in `Debug` output, in errors or in captured logs: this
//! binary's global tracing subscriber captures everything at TRACE, the `log` records of the
//! HTTP stack (reqwest, hyper) included.

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::secrets::Secrets;
use sandloom_test_support::LogCapture;
use tracing_subscriber::util::SubscriberInitExt as _;

const VALUE: &str = "hunter2-vault-value";

/// Everything logged in this process so far.
fn logs() -> String {
    static CAPTURED: OnceLock<LogCapture> = OnceLock::new();
    CAPTURED
        .get_or_init(|| {
            let captured = LogCapture::new();
            // Global, with `log` records bridged: the HTTP stack logs on its own threads.
            captured
                .subscriber(tracing::Level::TRACE)
                .try_init()
                .unwrap();
            captured
        })
        .text()
}

fn assert_clean(what: &str, text: &str, token: &str) {
    assert!(!text.contains(token), "{what} shows the token: {text}");
    assert!(!text.contains(VALUE), "{what} shows a value: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn the_token_and_values_stay_out_of_debug_errors_and_trace_logs() {
    let _ = logs();
    // A token of its own, with text nothing else prints.
    let token = support::unique("hunter2-token");
    support::must(
        "POST",
        "auth/token/create",
        Some(&format!(
            r#"{{"id":"{token}","policies":["root"],"ttl":"10m"}}"#
        )),
    )
    .unwrap();
    let prefix = support::unique("sandloom-vault-tests/secrets");
    support::put(&format!("{prefix}/db/password"), VALUE.as_bytes()).unwrap();
    let options = VaultSecretsOptions {
        token: Some(token.clone().into()),
        max_value_bytes: 8,
        ..support::options(&prefix)
    };
    assert_clean("Debug of the options", &format!("{options:?}"), &token);
    let secrets = VaultSecrets::from_options(options).unwrap();
    secrets.start().await.unwrap();
    let cursor = secrets.changes(0, Duration::ZERO).await.unwrap().cursor;
    let too_large = secrets.get("db/password").await.unwrap_err();
    let big = VaultSecrets::from_options(VaultSecretsOptions {
        token: Some(token.clone().into()),
        ..support::options(&prefix)
    })
    .unwrap();
    let value = big.get("db/password").await.unwrap();
    assert_eq!(value.expose(), VALUE.as_bytes());
    support::put(&format!("{prefix}/db/password"), b"rotated").unwrap();
    let changes = secrets
        .changes(cursor, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(changes.names, ["db/password"]);
    let mut errors = vec![
        too_large,
        secrets.get("db/missing").await.unwrap_err(),
        secrets.get_version("db/password", 99).await.unwrap_err(),
    ];
    let wrong_mount = VaultSecrets::from_options(VaultSecretsOptions {
        token: Some(token.clone().into()),
        mount: "no-such-mount".into(),
        ..support::options(&prefix)
    })
    .unwrap();
    errors.push(wrong_mount.get("db/password").await.unwrap_err());
    let start_error = wrong_mount.start().await.unwrap_err();
    secrets.stop().await.unwrap();
    errors.push(secrets.get("db/password").await.unwrap_err());
    for err in &errors {
        assert_clean("an operation error", &format!("{err} / {err:?}"), &token);
    }
    assert_clean(
        "a start error",
        &format!("{start_error} / {start_error:?}"),
        &token,
    );
    assert_clean(
        "Debug of the driver",
        &format!("{secrets:?} {value:?}"),
        &token,
    );
    let logs = logs();
    assert!(
        logs.contains("x-vault-token") || logs.contains("hyper") || logs.contains("reqwest"),
        "nothing of the HTTP stack was captured: the check would prove nothing"
    );
    assert_clean("the logs", &logs, &token);
}
