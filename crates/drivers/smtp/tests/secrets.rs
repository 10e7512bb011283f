//! The password never shows: not in `Debug` of the options or the driver, not in errors of
//! `validate`, `start`, `send` or `health` (with and without a server that takes the AUTH
//! attempt and refuses it), not in anything the driver logs through `tracing`.

#[path = "support/own_server.rs"]
#[allow(dead_code)] // shared test support: this file needs no plain-text server
mod own_server;

use std::fmt::Write as _;

use own_server::{Listen, OwnServer};
use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
use sandloom_driverkit::notifier::{Message, Notifier};
use sandloom_driverkit::{Driver, Health};
use sandloom_test_support::LogCapture;

const SECRET: &str = "hunter2-secret";

fn with_secret(host: &str, port: u16, security: Security) -> SmtpOptions {
    SmtpOptions {
        port: Some(port),
        security,
        username: Some("orders@sandloom.test".into()),
        password: Some(SECRET.into()),
        connect_timeout_ms: 3000,
        ..SmtpOptions::new(host, "Orders <orders@sandloom.test>")
    }
}

/// `text` and the whole chain of causes, as `Display` and `Debug`.
fn everything(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("{error} {error:?}");
    let mut cause = error.source();
    while let Some(current) = cause {
        let _ = write!(text, " | {current} {current:?}");
        cause = current.source();
    }
    text
}

fn assert_hidden(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows the password: {text}");
}

#[test]
fn debug_and_validation_errors_never_show_the_password() {
    let options = with_secret("smtp.example.com", 587, Security::Starttls);
    assert_hidden("options' Debug", &format!("{options:?}"));
    assert!(format!("{options:?}").contains("<redacted>"));
    let notifier = SmtpNotifier::from_options(options.clone()).unwrap();
    assert_hidden("driver's Debug", &format!("{notifier:?}"));
    assert_hidden("driver's pretty Debug", &format!("{notifier:#?}"));

    let plain = SmtpOptions {
        security: Security::Plain,
        ..options.clone()
    };
    let err = SmtpNotifier::validate(&plain).unwrap_err();
    assert_hidden("the plain-text refusal", &everything(&err));
    let user_info = SmtpOptions {
        host: format!("orders:{SECRET}@smtp.example.com"),
        ..options
    };
    let err = SmtpNotifier::validate(&user_info).unwrap_err();
    assert_hidden("the user-info refusal", &everything(&err));
}

#[tokio::test]
async fn an_unreachable_server_never_shows_the_password() {
    // Everything the driver logs, at every level, while the guard lives (on this thread: the
    // tests run on a current-thread runtime, lettre's pool tasks included).
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::TRACE);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let notifier =
        SmtpNotifier::from_options(with_secret("127.0.0.1", port, Security::Tls)).unwrap();
    let err = notifier.start().await.unwrap_err();
    assert_hidden("start's error", &everything(&err));
    let send = notifier
        .send(&Message::new("a@example.com", "x"))
        .await
        .unwrap_err();
    assert_hidden("send's error", &everything(&send));
    let Health::Unhealthy(health) = notifier.health().await else {
        panic!("an unreachable server is not healthy");
    };
    assert_hidden("health", &health);
    assert_hidden("Debug after a failed start", &format!("{notifier:?}"));
    let logged = logs.text();
    assert!(
        logged.contains(&format!("127.0.0.1:{port}")),
        "nothing was logged: {logged}"
    );
    assert_hidden("the logs", &logged);
}

#[tokio::test]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs aiosmtpd and openssl: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_that_refuses_the_login_never_sees_it_echoed() {
    // Everything the driver logs, at every level, while the guard lives (on this thread: the
    // tests run on a current-thread runtime, lettre's pool tasks included).
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::TRACE);
    // STARTTLS, then AUTH with the password, refused with 535; with implicit TLS this server
    // offers no AUTH at all.
    for (listen, security) in [
        (Listen::Starttls, Security::Starttls),
        (Listen::Tls, Security::Tls),
    ] {
        let server = OwnServer::start(listen, &[]);
        let notifier = SmtpNotifier::from_options(SmtpOptions {
            accept_invalid_certs: true,
            ..with_secret("127.0.0.1", server.port(), security)
        })
        .unwrap();
        let err = notifier.start().await.unwrap_err();
        let text = everything(&err);
        eprintln!("{security}: {err}");
        assert!(
            text.contains(&format!("127.0.0.1:{}", server.port())),
            "{text}"
        );
        if security == Security::Starttls {
            assert!(text.contains("535"), "the login was not refused: {text}");
        }
        assert_hidden("start's error", &text);
        assert_hidden("Debug", &format!("{notifier:?}"));
        assert_eq!(server.stored(), 0);
        notifier.stop().await.unwrap();
    }
    assert_hidden("the logs", &logs.text());
}
