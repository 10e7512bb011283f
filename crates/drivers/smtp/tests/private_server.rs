//! End to end against private aiosmtpd instances, for what the shared plain server cannot
//! show: STARTTLS and implicit TLS (self-signed certificate: refused by default, accepted
//! with `accept_invalid_certs`), and refusals the server makes (552 over its size limit, an
//! address it cannot take).

#[path = "support/own_server.rs"]
mod own_server;

use std::time::{Duration, Instant};

use own_server::{Listen, OwnServer};
use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::notifier::{Message, Notifier};
use sandloom_driverkit::sdk::ErrorKind;

fn options(server: &OwnServer, security: Security) -> SmtpOptions {
    SmtpOptions {
        port: Some(server.port()),
        security,
        connect_timeout_ms: 5000,
        ..SmtpOptions::new("127.0.0.1", "Private <private@sandloom.test>")
    }
}

fn note(text: &str) -> Message {
    Message::new("someone@example.com", text).with_subject("private server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs aiosmtpd and openssl: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn starttls_and_implicit_tls_send_end_to_end() {
    for (listen, security) in [
        (Listen::Starttls, Security::Starttls),
        (Listen::Tls, Security::Tls),
    ] {
        let server = OwnServer::start(listen, &[]);
        let notifier = SmtpNotifier::from_options(SmtpOptions {
            accept_invalid_certs: true,
            ..options(&server, security)
        })
        .unwrap();
        notifier.start().await.unwrap();
        let receipt = notifier
            .send(&note(&format!("over {security}: Größe ✓\nline two")))
            .await
            .unwrap();
        assert!(receipt.id.ends_with("@sandloom.test>"), "{}", receipt.id);
        let batch = notifier
            .send_batch(&[note("batch 1"), note("batch 2")])
            .await
            .unwrap();
        assert!(batch.iter().all(Result::is_ok), "{batch:?}");
        assert_eq!(server.stored(), 3, "{security}");
        assert!(notifier.health().await.is_healthy());
        notifier.stop().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs aiosmtpd and openssl: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn an_untrusted_certificate_is_refused_by_default() {
    for (listen, security) in [
        (Listen::Starttls, Security::Starttls),
        (Listen::Tls, Security::Tls),
    ] {
        let server = OwnServer::start(listen, &[]);
        let notifier = SmtpNotifier::from_options(options(&server, security)).unwrap();
        let started = Instant::now();
        let err = notifier.start().await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let text = err.to_string();
        eprintln!("{security}: {text}");
        assert!(
            text.contains(&format!("127.0.0.1:{}", server.port())),
            "{text}"
        );
        assert!(text.to_lowercase().contains("certificate"), "{text}");
        assert_eq!(server.stored(), 0);
        notifier.stop().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs aiosmtpd: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn refusals_by_the_server_are_typed_and_the_driver_goes_on() {
    let server = OwnServer::start(Listen::Plain, &["-s", "2000"]);
    let notifier = SmtpNotifier::from_options(options(&server, Security::Plain)).unwrap();
    notifier.start().await.unwrap();

    // Over the server's size limit: 552, a permanent refusal of this message.
    let err = notifier
        .send(&note(&"too large\n".repeat(300)))
        .await
        .unwrap_err();
    eprintln!("too large: {err}");
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.message().contains("552"), "{err}");

    // A non-ASCII address needs SMTPUTF8, which this server does not offer.
    let err = notifier
        .send(&Message::new("jösé@example.com", "utf-8 address"))
        .await
        .unwrap_err();
    eprintln!("utf-8 address: {err}");
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");

    notifier.send(&note("fits")).await.unwrap();
    assert_eq!(server.stored(), 1);
    notifier.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs aiosmtpd and openssl: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_tls_server_replaced_by_a_plain_one_is_a_backend_error_not_a_hang() {
    let tls = OwnServer::start(Listen::Tls, &[]);
    let port = tls.port();
    let notifier = SmtpNotifier::from_options(SmtpOptions {
        accept_invalid_certs: true,
        send_timeout_ms: 5000,
        ..options(&tls, Security::Tls)
    })
    .unwrap();
    notifier.start().await.unwrap();
    notifier.send(&note("over tls")).await.unwrap();

    drop(tls);
    let plain = OwnServer::start_on(port, Listen::Plain, &[]);
    let started = Instant::now();
    let err = notifier.send(&note("never sent")).await.unwrap_err();
    eprintln!("tls to a plain server: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(err.kind(), ErrorKind::Backend, "{err}");
    assert!(
        err.message().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    assert_eq!(plain.stored(), 0);
    notifier.stop().await.unwrap();
}
