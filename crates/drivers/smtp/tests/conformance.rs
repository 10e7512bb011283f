//! `notifier.smtp` passes the `notifier` conformance kit against a real SMTP server
//! (aiosmtpd, plain, no auth), and the kit checks what arrived: every instance sends from its
//! own address, and its delivered messages are read back from the server's maildir and parsed
//! with `mail-parser`.

#[path = "support/maildir.rs"]
mod maildir;
#[path = "support/server.rs"]
mod server;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mail_parser::MessageParser;
use sandloom_conformance::KitRequest;
use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
use sandloom_driverkit::notifier::Message;

/// The prefix of metadata headers, as configured below.
const PREFIX: &str = "X-Sandloom-";
/// The password of the kit's instance pointed at an unreachable address.
const PASSWORD: &str = "sandloom-kit-smtp-password";

/// Options for one kit instance: its own sender address, unique across instances and runs
/// (the maildir is shared and kept), so `delivered` finds exactly this instance's mail.
fn options(request: &KitRequest) -> SmtpOptions {
    static RUN: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    static INSTANCE: AtomicU64 = AtomicU64::new(0);
    let run = RUN.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    });
    let instance = INSTANCE.fetch_add(1, Ordering::Relaxed);
    if request.unreachable {
        // The test server takes no login (and `plain` refuses a password), so only the
        // instance pointed at nothing has one, over STARTTLS, for the kit to look for.
        return SmtpOptions {
            port: Some(1),
            security: Security::Starttls,
            username: Some("kit".to_owned()),
            password: Some(PASSWORD.to_owned().into()),
            ..SmtpOptions::new("127.0.0.1", "kit@sandloom.test")
        };
    }
    let (host, port) = server::server();
    maildir::maildir();
    SmtpOptions {
        port: Some(port),
        security: Security::Plain,
        metadata_header_prefix: PREFIX.to_owned(),
        ..SmtpOptions::new(
            host,
            format!(
                "\"{}\" <kit-{run}-{instance}@sandloom.test>",
                request.namespace
            ),
        )
    }
}

/// The messages this instance delivered, oldest first, as the kit's `Message`s.
fn delivered(notifier: &SmtpNotifier) -> Vec<Message> {
    let sender = notifier.sender_address();
    maildir::stored_mails()
        .iter()
        .filter_map(|raw| {
            let mail = MessageParser::default().parse(raw)?;
            let from = mail.from()?.first()?.address()?;
            (from == sender).then(|| as_message(&mail))
        })
        .collect()
}

fn as_message(mail: &mail_parser::Message<'_>) -> Message {
    let to = mail.to().and_then(|to| to.first()).expect("a To header");
    let address = to.address().unwrap_or_default();
    let recipient = match to.name() {
        Some(name) => format!("{name} <{address}>"),
        None => address.to_owned(),
    };
    // Text travels with CRLF line breaks (MIME's canonical form); locally they are `\n`.
    let mut body = mail.body_text(0).unwrap_or_default().replace("\r\n", "\n");
    // SMTP carries mail as lines, so lettre ends the last line of an unencoded (7bit or
    // quoted-printable) body with a CRLF of its own; that line break is framing, not text.
    // A base64 body holds its exact text.
    let encoding = mail.text_part(0).map(|part| part.encoding);
    if encoding != Some(mail_parser::Encoding::Base64) && body.ends_with('\n') {
        body.pop();
    }
    let mut message = Message::new(recipient, body);
    if let Some(subject) = mail.subject() {
        message = message.with_subject(subject);
    }
    for header in mail.headers() {
        let name = header.name.as_str();
        if name.len() > PREFIX.len() && name[..PREFIX.len()].eq_ignore_ascii_case(PREFIX) {
            let value = header.value.as_text().unwrap_or_default();
            message = message.with_metadata(&name[PREFIX.len()..], value.trim());
        }
    }
    message
}

sandloom_conformance::notifier_conformance!(
    #[cfg_attr(
        not(sandloom_test_smtp),
        ignore = "needs a real SMTP server: set SANDLOOM_TEST_SMTP_URL and SANDLOOM_TEST_SMTP_MAILDIR (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    SmtpNotifier,
    options,
    .valid_recipient("someone@example.com")
    // More recipients, for the obligations about several: each mail must reach its own.
    .valid_recipient("other@example.org")
    .valid_recipient("third+tag@example.net")
    .invalid_recipient("not an address")
    .delivered(delivered)
    .secrets([PASSWORD])
);
