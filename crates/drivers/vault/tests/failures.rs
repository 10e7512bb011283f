//! Failure behaviour against real parts: options refused, a closed port, a wrong token, a wrong
//! or KV v1 mount, entries the driver cannot read, values past the limit, a server that hangs,
//! and `AppRole` login against the `OpenBao` dev server.

mod support;

use std::time::{Duration, Instant};

use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_driverkit::secrets::Secrets;
use sandloom_test_support::TcpProxy;
use tokio::net::TcpListener;

const TOKEN: &str = "hunter2-vault-token";
const VALUE: &str = "hunter2-stored-value";

/// A port on 127.0.0.1 where nothing listens.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(TOKEN), "{what} shows the token: {text}");
    assert!(!text.contains(VALUE), "{what} shows a value: {text}");
}

#[test]
fn options_are_refused_with_the_option_named_and_no_secret_shown() {
    let refused = |json: &str| -> String {
        match serde_json::from_str::<VaultSecretsOptions>(json) {
            Err(err) => err.to_string(),
            Ok(options) => VaultSecrets::validate(&options).unwrap_err().to_string(),
        }
    };
    for (json, says) in [
        (r#"{"address":"http://127.0.0.1:8200"}"#, "`token`"),
        (
            r#"{"address":"http://127.0.0.1:8200","token":"hunter2-vault-token","tokn":"x"}"#,
            "unknown field `tokn`",
        ),
        (
            r#"{"address":"vault:8200","token":"hunter2-vault-token"}"#,
            "option `address`",
        ),
        (
            r#"{"address":"http://u:hunter2-vault-token@h:8200","token":"t"}"#,
            "user-info",
        ),
        (
            r#"{"address":"http://127.0.0.1:8200","token":"hunter2-vault-token","mount":"a//b"}"#,
            "option `mount`",
        ),
        (
            r#"{"address":"http://127.0.0.1:8200","token":"hunter2 vault-token"}"#,
            "option `token`",
        ),
        (
            r#"{"address":"http://127.0.0.1:8200","role_id":"hunter2-vault-token"}"#,
            "option `secret_id`",
        ),
        (
            r#"{"address":"http://127.0.0.1:8200","token":"hunter2-vault-token","max_value_bytes":0}"#,
            "option `max_value_bytes`",
        ),
    ] {
        let message = refused(json);
        assert!(message.contains(says), "{json}: {message}");
        assert_clean("an option error", &message);
        assert!(!message.contains("hunter2 vault"), "{message}");
    }
}

#[tokio::test]
async fn a_closed_port_fails_the_start_at_once_and_reads_are_unavailable() {
    let address = format!("http://127.0.0.1:{}", closed_port().await);
    let secrets = VaultSecrets::from_options(VaultSecretsOptions {
        token: Some(TOKEN.into()),
        ..VaultSecretsOptions::new(address.as_str())
    })
    .unwrap();
    let started = Instant::now();
    let err = secrets.start().await.unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(2), "{err}");
    assert!(
        err.contains(&address) && err.contains("got no answer"),
        "{err}"
    );
    assert_clean("the start error", &err);
    let read = secrets.get("db/password").await.unwrap_err();
    assert_eq!(read.kind(), ErrorKind::Unavailable, "{read}");
    assert_clean("the read error", &read.to_string());
    assert!(!secrets.health().await.is_healthy());
    assert_clean("the driver's Debug", &format!("{secrets:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_wrong_token_fails_the_start_and_reads_are_backend_errors_saying_so() {
    let secrets = VaultSecrets::from_options(VaultSecretsOptions {
        token: Some(TOKEN.into()),
        ..support::options("wrong-token")
    })
    .unwrap();
    let err = secrets.start().await.unwrap_err().to_string();
    assert!(err.contains("403") && err.contains("token"), "{err}");
    assert_clean("the start error", &err);
    let read = secrets.get("db/password").await.unwrap_err();
    assert_eq!(read.kind(), ErrorKind::Backend, "{read}");
    assert!(read.message().contains("permission denied"), "{read}");
    assert_clean("the read error", &format!("{read} {read:?}"));
    assert!(matches!(
        secrets.health().await,
        sandloom_driverkit::Health::Unhealthy(_)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_wrong_mount_fails_the_start_and_is_never_not_found() {
    let at = |mount: &str| {
        VaultSecrets::from_options(VaultSecretsOptions {
            mount: mount.to_owned(),
            ..support::options("wrong-mount")
        })
        .unwrap()
    };
    let missing = at("no-such-mount");
    let err = missing.start().await.unwrap_err().to_string();
    assert!(err.contains("does not exist"), "{err}");
    let read = missing.get("db/password").await.unwrap_err();
    assert_eq!(
        read.kind(),
        ErrorKind::Backend,
        "a missing mount is not a missing secret: {read}"
    );
    let inside = at("secret/wrong-mount");
    let err = inside.start().await.unwrap_err().to_string();
    assert!(
        err.contains("is not a mount") && err.contains("\"secret\""),
        "{err}"
    );
    // A KV version 1 engine: the driver speaks version 2 only.
    let v1 = support::unique("kv1");
    support::must(
        "POST",
        &format!("sys/mounts/{v1}"),
        Some(r#"{"type":"kv","options":{"version":"1"}}"#),
    )
    .unwrap();
    let err = at(&v1).start().await.unwrap_err().to_string();
    support::must("DELETE", &format!("sys/mounts/{v1}"), None).unwrap();
    assert!(err.contains("not KV version 2"), "{err}");
    let good = at("secret");
    good.start().await.unwrap();
    assert!(good.health().await.is_healthy());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn entries_it_cannot_read_and_values_past_the_limit_are_backend_errors_without_values() {
    let prefix = support::unique("sandloom-vault-tests/entries");
    let write = |name: &str, entry: &str| {
        support::must(
            "POST",
            &format!("secret/data/{prefix}/{name}"),
            Some(&format!("{{\"data\":{entry}}}")),
        )
        .unwrap();
    };
    write("no-field", &format!(r#"{{"password":"{VALUE}"}}"#));
    write("number", r#"{"value":918273645}"#);
    write("hex", &format!(r#"{{"value":"{VALUE}","encoding":"hex"}}"#));
    write("big", &format!(r#"{{"value":"{VALUE}{VALUE}{VALUE}"}}"#));
    write(
        "big64",
        &format!(
            r#"{{"value":"{}","encoding":"base64"}}"#,
            support::base64(&[b'h'; 64])
        ),
    );
    write(
        "fits",
        &format!(r#"{{"value":"{VALUE}","username":"app"}}"#),
    );
    write("custom", &format!(r#"{{"password":"{VALUE}"}}"#));
    let secrets = VaultSecrets::from_options(VaultSecretsOptions {
        max_value_bytes: 40,
        ..support::options(&prefix)
    })
    .unwrap();
    secrets.start().await.unwrap();
    for (name, says) in [
        ("no-field", "no field `value`"),
        ("number", "a number, not a string"),
        ("hex", "\"base64\""),
        ("big", "60 bytes, above this store's limit of 40"),
        ("big64", "64 bytes, above this store's limit of 40"),
    ] {
        let err = secrets.get(name).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Backend, "{name}: {err}");
        let shown = format!("{err} {err:?}");
        assert!(
            shown.contains(says) && shown.contains(name),
            "{name}: {shown}"
        );
        assert_clean("an unreadable entry's error", &shown);
    }
    assert_eq!(
        secrets.get("fits").await.unwrap().expose(),
        VALUE.as_bytes()
    );
    let missing = secrets.get("db/password").await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(missing.to_string(), "secrets: no secret \"db/password\"");
    let version = secrets.get_version("fits", 9).await.unwrap_err();
    assert_eq!(version.kind(), ErrorKind::NotFound);
    assert!(
        version
            .to_string()
            .contains("no version 9 of secret \"fits\""),
        "{version}"
    );
    let custom = VaultSecrets::from_options(VaultSecretsOptions {
        field: "password".into(),
        ..support::options(&prefix)
    })
    .unwrap();
    assert_eq!(
        custom.get("custom").await.unwrap().expose(),
        VALUE.as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_that_hangs_times_out_within_the_request_timeout() {
    let proxy = TcpProxy::start(support::socket()).await.unwrap();
    let secrets = VaultSecrets::from_options(VaultSecretsOptions {
        address: format!("http://{}", proxy.address()).into(),
        request_timeout_ms: 300,
        ..support::options("hangs")
    })
    .unwrap();
    secrets.start().await.unwrap();
    proxy.stall();
    let started = Instant::now();
    let err = secrets.get("db/password").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    proxy.restore();
}

/// An `AppRole` role at the auth mount `mount` (enabled if it is not yet) whose tokens read only
/// under `prefix` and live `ttl`: its role id and a secret id.
fn approle(mount: &str, prefix: &str, ttl: &str) -> (String, String) {
    let (status, _) = support::call(
        "POST",
        &format!("sys/auth/{mount}"),
        Some(r#"{"type":"approle"}"#),
    )
    .unwrap();
    assert!(
        status == 204 || status == 400,
        "enabling approle answered {status}"
    );
    let policy = support::unique("sandloom-approle");
    let rules = format!(
        "path \\\"secret/data/{prefix}/*\\\" {{ capabilities = [\\\"read\\\"] }}\\n\
         path \\\"secret/metadata/{prefix}/*\\\" {{ capabilities = [\\\"read\\\", \\\"list\\\"] }}"
    );
    support::must(
        "PUT",
        &format!("sys/policies/acl/{policy}"),
        Some(&format!(r#"{{"policy":"{rules}"}}"#)),
    )
    .unwrap();
    support::must(
        "POST",
        &format!("auth/{mount}/role/{policy}"),
        Some(&format!(
            r#"{{"token_policies":["{policy}"],"token_ttl":"{ttl}","token_max_ttl":"{ttl}"}}"#
        )),
    )
    .unwrap();
    let field = |body: &str, key: &str| -> String {
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        value["data"][key].as_str().unwrap().to_owned()
    };
    let role_id = field(
        &support::must("GET", &format!("auth/{mount}/role/{policy}/role-id"), None).unwrap(),
        "role_id",
    );
    let secret_id = field(
        &support::must(
            "POST",
            &format!("auth/{mount}/role/{policy}/secret-id"),
            Some("{}"),
        )
        .unwrap(),
        "secret_id",
    );
    (role_id, secret_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn approle_logs_in_again_once_when_its_token_is_revoked_early() {
    // An auth mount of its own, so that revoking every token it issued touches no other test.
    let mount = support::unique("approle-revoked");
    let prefix = support::unique("sandloom-vault-tests/approle-revoked");
    let (role_id, secret_id) = approle(&mount, &prefix, "1h");
    support::put(&format!("{prefix}/db/password"), VALUE.as_bytes()).unwrap();
    let logged_in = |prefix: &str| {
        VaultSecrets::from_options(VaultSecretsOptions {
            token: None,
            role_id: Some(role_id.clone().into()),
            secret_id: Some(secret_id.clone().into()),
            approle_mount: mount.clone(),
            ..support::options(prefix)
        })
        .unwrap()
    };
    let secrets = logged_in(&prefix);
    secrets.start().await.unwrap();
    assert_eq!(
        secrets.get("db/password").await.unwrap().expose(),
        VALUE.as_bytes()
    );
    // The token has most of its hour left, and the server no longer takes it.
    support::must(
        "PUT",
        &format!("sys/leases/revoke-prefix/auth/{mount}/login"),
        None,
    )
    .unwrap();
    assert_eq!(
        secrets.get("db/password").await.unwrap().expose(),
        VALUE.as_bytes(),
        "a revoked AppRole token is replaced by one new login"
    );
    assert_eq!(secrets.list("").await.unwrap(), ["db/password"]);

    // A refusal a new login does not cure (the policy grants nothing there) is still answered,
    // after one retry, not retried for ever.
    let outside = logged_in(&format!("{prefix}-not-granted"));
    outside.start().await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(30), outside.get("db/password"))
        .await
        .expect("a refused read is answered, not retried for ever")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Backend, "{err}");
    assert!(err.message().contains("403"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn approle_logs_in_and_logs_in_again_when_its_token_runs_out() {
    // The auth method, once per server; a policy reading only this test's prefix; a role whose
    // tokens live 2 seconds.
    let prefix = support::unique("sandloom-vault-tests/approle");
    let (role_id, secret_id) = approle("approle", &prefix, "2s");
    support::put(&format!("{prefix}/db/password"), VALUE.as_bytes()).unwrap();
    let secrets = VaultSecrets::from_options(VaultSecretsOptions {
        token: None,
        role_id: Some(role_id.clone().into()),
        secret_id: Some(secret_id.clone().into()),
        ..support::options(&prefix)
    })
    .unwrap();
    // The policy grants nothing on the mount's own path: the start's check still passes, as
    // Vault answers it for any token with a capability under the mount.
    secrets.start().await.unwrap();
    assert_eq!(
        secrets.get("db/password").await.unwrap().expose(),
        VALUE.as_bytes()
    );
    assert_eq!(secrets.list("").await.unwrap(), ["db/password"]);
    // Past the token's 2 s: a token kept beyond its ttl would be refused.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        secrets.get("db/password").await.unwrap().expose(),
        VALUE.as_bytes()
    );
    let shown = format!("{secrets:?}");
    assert!(
        !shown.contains(&secret_id) && !shown.contains(&role_id),
        "{shown}"
    );
    // A wrong secret id fails the start, naming neither id.
    let wrong = VaultSecrets::from_options(VaultSecretsOptions {
        token: None,
        role_id: Some(role_id.clone().into()),
        secret_id: Some(TOKEN.into()),
        ..support::options(&prefix)
    })
    .unwrap();
    let err = wrong.start().await.unwrap_err().to_string();
    assert!(err.contains("auth/approle/login"), "{err}");
    assert!(!err.contains(&role_id), "{err}");
    assert_clean("a failed login", &err);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_vault),
    ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_namespace_reads_its_own_mount() {
    // An OpenBao namespace with a KV v2 engine of its own, at the same mount name as the root's.
    let namespace = support::unique("sandloom-ns");
    support::must("POST", &format!("sys/namespaces/{namespace}"), None).unwrap();
    let (status, answer) = support::call_in(
        &namespace,
        "POST",
        "sys/mounts/kv",
        Some(r#"{"type":"kv","options":{"version":"2"}}"#),
    )
    .unwrap();
    assert_eq!(status, 204, "{answer}");
    let (status, answer) = support::call_in(
        &namespace,
        "POST",
        "kv/data/app/db/password",
        Some(&format!(r#"{{"data":{{"value":"{VALUE}"}}}}"#)),
    )
    .unwrap();
    assert_eq!(status, 200, "{answer}");
    let in_namespace = VaultSecrets::from_options(VaultSecretsOptions {
        namespace: Some(namespace.clone()),
        mount: "kv".into(),
        ..support::options("app")
    })
    .unwrap();
    in_namespace.start().await.unwrap();
    assert_eq!(
        in_namespace.get("db/password").await.unwrap().expose(),
        VALUE.as_bytes()
    );
    assert_eq!(in_namespace.list("").await.unwrap(), ["db/password"]);
    // Without the namespace, the root namespace has no `kv` mount.
    let outside = VaultSecrets::from_options(VaultSecretsOptions {
        mount: "kv".into(),
        ..support::options("app")
    })
    .unwrap();
    assert!(outside.start().await.is_err());
}
