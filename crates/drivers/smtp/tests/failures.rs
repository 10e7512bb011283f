//! Failure behaviour against real parts: a closed port and a silent server at start, a server
//! that goes away or hangs while running (`TcpProxy` (sandloom-test-support) in front of the real one), TLS
//! modes against a plain server, and options that make no sense.

#[path = "support/maildir.rs"]
mod maildir;
#[path = "support/server.rs"]
mod server;

use std::net::{SocketAddr, ToSocketAddrs as _};
use std::time::{Duration, Instant};

use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::notifier::{BATCH, Message, Notifier};
use sandloom_driverkit::sdk::ErrorKind;
use sandloom_test_support::TcpProxy;

const SENDER: &str = "Failures <failures@sandloom.test>";

fn plain(host: &str, port: u16) -> SmtpOptions {
    SmtpOptions {
        port: Some(port),
        security: Security::Plain,
        ..SmtpOptions::new(host, SENDER)
    }
}

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

fn server_socket() -> SocketAddr {
    let (host, port) = server::server();
    (host.as_str(), port)
        .to_socket_addrs()
        .expect("the test SMTP host resolves")
        .next()
        .expect("the test SMTP host has an address")
}

fn stored_mail_containing(needle: &str) -> bool {
    maildir::stored_mails()
        .iter()
        .any(|mail| mail.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

fn note(text: &str) -> Message {
    Message::new("someone@example.com", text).with_subject("failures")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_server_at_start_is_an_error_naming_it_within_the_timeout() {
    let port = closed_port();
    let notifier = SmtpNotifier::from_options(SmtpOptions {
        connect_timeout_ms: 2000,
        ..plain("127.0.0.1", port)
    })
    .unwrap();
    let started = Instant::now();
    let err = notifier.start().await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    let text = err.to_string();
    eprintln!("closed port: {text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");

    // Never started: operations say the server is unavailable, health says why; stop works.
    let send = notifier.send(&note("x")).await.unwrap_err();
    assert_eq!(send.kind(), ErrorKind::Unavailable, "{send}");
    assert!(!notifier.health().await.is_healthy());
    notifier.stop().await.unwrap();
    let stopped = notifier.send(&note("x")).await.unwrap_err();
    assert_eq!(stopped.kind(), ErrorKind::Stopped, "{stopped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_fails_start_within_the_connect_timeout() {
    // Accepts connections and never says a word (nothing is forwarded while stalled).
    let silent = TcpProxy::start(SocketAddr::from(([127, 0, 0, 1], closed_port())))
        .await
        .unwrap();
    silent.stall();
    let notifier = SmtpNotifier::from_options(SmtpOptions {
        connect_timeout_ms: 500,
        ..plain("127.0.0.1", silent.address().port())
    })
    .unwrap();
    let started = Instant::now();
    let err = notifier.start().await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    let text = err.to_string();
    eprintln!("silent server: {text}");
    assert!(
        text.contains(&format!("127.0.0.1:{}", silent.address().port())),
        "{text}"
    );
    assert!(text.contains("500 ms"), "{text}");
    notifier.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs a real SMTP server: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn a_server_going_away_gives_typed_errors_and_the_driver_recovers() {
    let proxy = TcpProxy::start(server_socket()).await.unwrap();
    let notifier = SmtpNotifier::from_options(SmtpOptions {
        connect_timeout_ms: 1000,
        send_timeout_ms: 1500,
        ..plain("127.0.0.1", proxy.address().port())
    })
    .unwrap();
    notifier.start().await.unwrap();
    let before = notifier
        .send(&note("failures: before the outage"))
        .await
        .unwrap();
    assert!(
        stored_mail_containing(&before.id),
        "{} was not stored",
        before.id
    );

    // The server goes away: open sessions are dropped, new ones closed at once.
    proxy.cut();
    for n in 0..3 {
        let err = notifier
            .send(&note(&format!("failures: down {n}")))
            .await
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Unavailable | ErrorKind::Timeout),
            "send {n} while down: {err}"
        );
        eprintln!("while down: {err}");
        assert!(
            err.to_string()
                .contains(&format!("127.0.0.1:{}", proxy.address().port())),
            "{err}"
        );
    }
    assert!(!notifier.health().await.is_healthy());
    let started = Instant::now();
    let batch = notifier
        .send_batch(&[
            note("failures: batch 0"),
            note(""),
            note("failures: batch 2"),
        ])
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        batch[0].as_ref().unwrap_err().kind(),
        ErrorKind::Unavailable
    );
    assert_eq!(
        batch[1].as_ref().unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let skipped = batch[2].as_ref().unwrap_err();
    assert_eq!(skipped.kind(), ErrorKind::Unavailable);
    assert!(skipped.message().contains("not attempted"), "{skipped}");

    // The server hangs: a send gives up after `send_timeout_ms`.
    // Without the sessions of before: new ones are accepted and never answered.
    proxy.cut();
    proxy.stall();
    let started = Instant::now();
    let err = notifier.send(&note("failures: hanging")).await.unwrap_err();
    eprintln!("while hanging: {err}");
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );

    // Back: the next send works, and the mail arrives.
    // The held sessions die with the outage; new ones reach the server.
    proxy.cut();
    proxy.restore();
    let after = notifier
        .send(&note("failures: after the outage"))
        .await
        .unwrap();
    assert!(
        stored_mail_containing(&after.id),
        "{} was not stored",
        after.id
    );
    assert!(notifier.health().await.is_healthy());
    assert!(
        !stored_mail_containing("failures: hanging"),
        "a timed-out send was delivered"
    );
    notifier.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs a real SMTP server: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
async fn tls_modes_against_a_plain_server_fail_cleanly_with_a_typed_error() {
    let (host, port) = server::server();
    for (security, expected) in [(Security::Tls, "tls"), (Security::Starttls, "STARTTLS")] {
        let notifier = SmtpNotifier::from_options(SmtpOptions {
            port: Some(port),
            security,
            connect_timeout_ms: 3000,
            ..SmtpOptions::new(host.as_str(), SENDER)
        })
        .unwrap();
        let started = Instant::now();
        let err = notifier.start().await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_millis(3500),
            "{:?}",
            started.elapsed()
        );
        let text = err.to_string();
        eprintln!("{security}: {text}");
        assert!(text.contains(&format!("{host}:{port}")), "{text}");
        assert!(text.contains(expected), "{security}: {text}");
        let send = notifier.send(&note("never sent")).await.unwrap_err();
        assert_eq!(send.kind(), ErrorKind::Unavailable, "{send}");
        notifier.stop().await.unwrap();
    }
}

#[test]
#[cfg_attr(
    not(sandloom_test_smtp),
    ignore = "needs a real SMTP server: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
)]
fn a_started_driver_dropped_after_its_runtime_does_not_panic() {
    let (host, port) = server::server();
    let notifier = SmtpNotifier::from_options(plain(&host, port)).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        notifier.start().await.unwrap();
        notifier
            .send(&note("failures: before the runtime ends"))
            .await
            .unwrap();
    });
    drop(runtime);
    drop(notifier);
}

#[test]
fn options_that_make_no_sense_are_refused() {
    let parse = |json: &str| serde_json::from_str::<SmtpOptions>(json).map_err(|e| e.to_string());
    let ok =
        parse(r#"{"host": "smtp.example.com", "from": "Orders <orders@example.com>"}"#).unwrap();
    assert_eq!(ok.effective_port(), 587);
    assert!(SmtpNotifier::validate(&ok).is_ok());
    let typo = parse(r#"{"host": "h", "from": "a@example.com", "securty": "tls"}"#).unwrap_err();
    assert!(typo.contains("unknown field `securty`"), "{typo}");
    let mode = parse(r#"{"host": "h", "from": "a@example.com", "security": "ssl"}"#).unwrap_err();
    assert!(mode.contains("unknown variant `ssl`"), "{mode}");
    let no_from = parse(r#"{"host": "h"}"#).unwrap_err();
    assert!(no_from.contains("missing field `from`"), "{no_from}");

    for (options, needle) in [
        (SmtpOptions::new("smtp.example.com", "orders"), "`from`"),
        (
            SmtpOptions {
                reply_to: Some("x@".into()),
                ..ok.clone()
            },
            "`reply_to`",
        ),
        (
            SmtpOptions {
                port: Some(0),
                ..ok.clone()
            },
            "`port`",
        ),
        (
            SmtpOptions {
                connect_timeout_ms: 0,
                ..ok.clone()
            },
            "`connect_timeout_ms`",
        ),
        (
            SmtpOptions {
                max_connections: 0,
                ..ok.clone()
            },
            "`max_connections`",
        ),
        (
            SmtpOptions {
                host: "smtp://h:25".into(),
                ..ok.clone()
            },
            "`host`",
        ),
    ] {
        let err = SmtpNotifier::validate(&options).unwrap_err();
        // The option leads the message, or is the option the error is placed at.
        let shown = err.to_string();
        assert!(shown.contains(needle), "{err} should name {needle}");
        assert!(SmtpNotifier::from_options(options).is_err());
    }
    assert_eq!(SmtpNotifier::supported_features(), [BATCH]);
}

/// The kernel prints a start error as its message and then each cause the message does not
/// already end with: a hint after the cause would make the cause read twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_error_with_a_hint_reads_its_cause_once() {
    // A plain SMTP greeting where `security = "tls"` expects a TLS handshake.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            use std::io::{Read as _, Write as _};
            let _ = stream.write_all(b"220 plain.test ESMTP\r\n");
            let _ = stream.read(&mut [0; 1024]);
        }
    });
    let notifier = SmtpNotifier::from_options(SmtpOptions {
        port: Some(port),
        security: Security::Tls,
        connect_timeout_ms: 3000,
        ..SmtpOptions::new("127.0.0.1", SENDER)
    })
    .unwrap();
    let err = notifier.start().await.unwrap_err();
    let text = sandloom_driverkit::error_chain(&err);
    let cause = std::error::Error::source(&err)
        .expect("the lettre error")
        .to_string();
    assert_eq!(text.matches(&cause).count(), 1, "{text}");
    assert_eq!(
        text,
        format!(
            "cannot open an SMTP session with 127.0.0.1:{port} (security tls) (are `port` and `security` right? `tls` expects TLS from the first byte, as on port 465; a server on port 587 or 25 wants `starttls`): {cause}"
        )
    );
}
