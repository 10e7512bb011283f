//! Turning a [`Message`] into an e-mail: the checks that make a message sendable and the
//! header fields it becomes.

use std::collections::HashSet;

use lettre::Message as Email;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MessageBuilder};
use sandloom_driverkit::notifier::{Message, NAME};
use sandloom_driverkit::sdk::{InfraError, InfraResult};

/// Longest header name lettre accepts (and that fits an RFC 5322 line comfortably).
pub(crate) const MAX_HEADER_NAME_LEN: usize = 76;

/// How many characters of a refused value an error repeats.
const SHOWN_CHARS: usize = 80;

/// What every message of one instance shares: sender, defaults, metadata policy.
#[derive(Debug, Clone)]
pub(crate) struct Composer {
    pub(crate) from: Mailbox,
    pub(crate) reply_to: Option<Mailbox>,
    pub(crate) default_subject: Option<String>,
    /// `None` when metadata is ignored.
    pub(crate) metadata_prefix: Option<String>,
}

/// A message ready for the transport, and the Message-ID it carries.
#[derive(Debug)]
pub(crate) struct Composed {
    pub(crate) email: Email,
    pub(crate) message_id: String,
}

impl Composer {
    /// Check `message` and build its e-mail. Every refusal is `InvalidInput`.
    pub(crate) fn compose(&self, message: &Message) -> InfraResult<Composed> {
        if message.recipient.trim().is_empty() {
            return Err(invalid("the recipient must not be empty or blank"));
        }
        let to = parse_mailbox(&message.recipient).map_err(|reason| {
            invalid(format!(
                "the recipient {} is not an e-mail address (`name@example.com` or \
                 `Name <name@example.com>`): {reason}",
                shown(&message.recipient)
            ))
        })?;
        if message.body.is_empty() {
            return Err(invalid("the message body must not be empty"));
        }
        let message_id = self.message_id();
        let mut builder = Email::builder()
            .from(self.from.clone())
            .to(to)
            .message_id(Some(message_id.clone()));
        if let Some(reply_to) = &self.reply_to {
            builder = builder.reply_to(reply_to.clone());
        }
        if let Some(subject) = message.subject.as_ref().or(self.default_subject.as_ref()) {
            // lettre would encode a line break rather than let it start a new header field,
            // but a subject is one line: say so instead of sending something garbled.
            if subject.contains(['\r', '\n']) {
                return Err(invalid("the subject must be one line (no CR or LF)"));
            }
            builder = builder.subject(subject.clone());
        }
        builder = self.metadata_headers(builder, message)?;
        let email = builder
            .header(ContentType::TEXT_PLAIN)
            .body(crlf_line_endings(&message.body))
            .map_err(|err| {
                invalid(format!("the message cannot be made into an e-mail: {err}"))
                    .with_source(err)
            })?;
        Ok(Composed { email, message_id })
    }

    /// The sender's address (`orders@example.com`), without display name.
    pub(crate) fn sender_address(&self) -> String {
        self.from.email.to_string()
    }

    /// A Message-ID that is globally unique: a random UUID at the sender's domain.
    fn message_id(&self) -> String {
        format!(
            "<{}@{}>",
            uuid::Uuid::new_v4().simple(),
            self.from.email.domain()
        )
    }

    fn metadata_headers(
        &self,
        mut builder: MessageBuilder,
        message: &Message,
    ) -> InfraResult<MessageBuilder> {
        let Some(prefix) = &self.metadata_prefix else {
            return Ok(builder);
        };
        // Header names are case-insensitive: `Host` and `host` would be one header, and the
        // second would silently replace the first.
        let mut names = HashSet::with_capacity(message.metadata.len());
        for (key, value) in &message.metadata {
            let name = format!("{prefix}{key}");
            if key.is_empty() || !is_header_name(key) || name.len() > MAX_HEADER_NAME_LEN {
                return Err(invalid(format!(
                    "the metadata key {} cannot be a header name: use 1 to {} printable ASCII \
                     characters without `:` or spaces",
                    shown(key),
                    MAX_HEADER_NAME_LEN - prefix.len()
                )));
            }
            if !names.insert(name.to_ascii_lowercase()) {
                return Err(invalid(format!(
                    "the metadata key {} differs from another only in letter case, and header \
                     names ignore case",
                    shown(key)
                )));
            }
            if value.contains(['\r', '\n']) {
                return Err(invalid(format!(
                    "the value of metadata key {} must be one line (no CR or LF)",
                    shown(key)
                )));
            }
            let name = HeaderName::new_from_ascii(name).map_err(|err| {
                invalid(format!("bad metadata key {}", shown(key))).with_source(err)
            })?;
            // `HeaderValue::new` encodes the value (RFC 2047) where it is not plain ASCII.
            builder = builder.raw_header(HeaderValue::new(name, value.clone()));
        }
        Ok(builder)
    }
}

/// `text` with every bare LF made CRLF, the line break MIME text travels with. lettre does
/// the same, but by inserting into the string once per line, quadratic in the body's size (a
/// 30 MB body of short lines takes minutes); handed CRLF text, its pass finds nothing to do.
fn crlf_line_endings(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    let mut previous = '\0';
    for c in text.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    out
}

/// Parse a single mailbox (`a@example.com` or `Name <a@example.com>`), refusing control
/// characters outright: a line break must never reach a header, even folded.
pub(crate) fn parse_mailbox(text: &str) -> Result<Mailbox, String> {
    if text.chars().any(char::is_control) {
        return Err("it contains a control character such as a line break".to_owned());
    }
    if text.trim().is_empty() {
        return Err("it is empty".to_owned());
    }
    text.parse::<Mailbox>().map_err(|err| err.to_string())
}

/// Whether `text` is made of RFC 5322 field-name characters (printable ASCII except `:`).
pub(crate) fn is_header_name(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_graphic() && b != b':')
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> InfraError {
    InfraError::invalid_input(NAME, message)
}

/// `text` quoted for an error message, cut short when long.
fn shown(text: &str) -> String {
    if text.chars().count() > SHOWN_CHARS {
        let start: String = text.chars().take(SHOWN_CHARS).collect();
        format!("{start:?}…")
    } else {
        format!("{text:?}")
    }
}

#[cfg(test)]
mod tests {
    use sandloom_driverkit::sdk::ErrorKind;

    use super::*;

    fn composer() -> Composer {
        Composer {
            from: parse_mailbox("Orders <orders@example.com>").unwrap(),
            reply_to: Some(parse_mailbox("support@example.com").unwrap()),
            default_subject: None,
            metadata_prefix: Some("X-Sandloom-".to_owned()),
        }
    }

    fn text(message: &Message) -> String {
        let composed = composer().compose(message).unwrap();
        String::from_utf8(composed.email.formatted()).unwrap()
    }

    fn refused(message: &Message, needle: &str) {
        let err = composer().compose(message).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        assert!(
            err.message().contains(needle),
            "{err} should mention {needle}"
        );
    }

    #[test]
    fn a_message_becomes_plain_text_mail_with_its_headers() {
        let mail = text(
            &Message::new("Ada <ada@example.com>", "line one\nline two")
                .with_subject("Größe ✓")
                .with_metadata("severity", "high"),
        );
        assert!(
            mail.contains("From: Orders <orders@example.com>\r\n"),
            "{mail}"
        );
        assert!(mail.contains("To: Ada <ada@example.com>\r\n"), "{mail}");
        assert!(mail.contains("Reply-To: support@example.com\r\n"), "{mail}");
        assert!(mail.contains("Subject: =?utf-8?"), "{mail}");
        assert!(mail.contains("X-Sandloom-severity: high\r\n"), "{mail}");
        assert!(
            mail.contains("Content-Type: text/plain; charset=utf-8\r\n"),
            "{mail}"
        );
        assert!(mail.contains("line one\r\nline two"), "{mail}");
        assert!(!mail.contains("Subject: Notification"), "{mail}");
    }

    #[test]
    fn line_breaks_become_crlf_once() {
        assert_eq!(crlf_line_endings("a\nb\r\nc\n\n"), "a\r\nb\r\nc\r\n\r\n");
        assert_eq!(crlf_line_endings("\n"), "\r\n");
        assert_eq!(crlf_line_endings("no breaks ✓"), "no breaks ✓");
        assert_eq!(crlf_line_endings("bare\rcr"), "bare\rcr");
    }

    #[test]
    fn a_large_body_of_short_lines_composes_quickly() {
        let body = "short line\n".repeat(1_000_000);
        let started = std::time::Instant::now();
        let composed = composer()
            .compose(&Message::new("a@example.com", body))
            .unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(composed.email.formatted().len() > 12_000_000);
    }

    #[test]
    fn message_ids_are_unique_at_the_sender_domain() {
        let message = Message::new("ada@example.com", "hi");
        let a = composer().compose(&message).unwrap().message_id;
        let b = composer().compose(&message).unwrap().message_id;
        assert_ne!(a, b);
        assert!(a.starts_with('<') && a.ends_with("@example.com>"), "{a}");
        assert!(text(&message).contains("Message-ID: <"));
    }

    #[test]
    fn recipients_must_be_one_mailbox() {
        for recipient in [
            "",
            "  ",
            "ada",
            "ada@",
            "@example.com",
            "ada@example.com, bob@example.com",
            "ada@example.com\r\nBcc: eve@example.com",
            "Ada <ada@example.com",
            "ada@exa mple.com",
        ] {
            let err = composer()
                .compose(&Message::new(recipient, "hi"))
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{recipient:?}: {err}");
        }
        for recipient in [
            "ada@example.com",
            " Ada Lovelace <ada@example.com> ",
            "a.b+c@mail.example.org",
        ] {
            assert!(
                composer().compose(&Message::new(recipient, "hi")).is_ok(),
                "{recipient:?}"
            );
        }
    }

    #[test]
    fn header_injection_is_refused() {
        refused(
            &Message::new("a@example.com", "x").with_subject("hi\r\nBcc: eve@example.com"),
            "subject",
        );
        refused(
            &Message::new("a@example.com", "x").with_subject("hi\nBcc: eve@example.com"),
            "subject",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("k", "v\r\nBcc: eve@example.com"),
            "one line",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("k\r\nBcc", "eve@example.com"),
            "header name",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("a:b", "v"),
            "header name",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("a b", "v"),
            "header name",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("", "v"),
            "header name",
        );
        refused(
            &Message::new("a@example.com", "x").with_metadata("k".repeat(80), "v"),
            "header name",
        );
        refused(
            &Message::new("a@example.com", "x")
                .with_metadata("Host", "a")
                .with_metadata("host", "b"),
            "letter case",
        );
        refused(&Message::new("a@example.com", ""), "body");
    }

    #[test]
    fn other_control_characters_in_values_are_encoded_not_sent_raw() {
        let mail = text(&Message::new("a@example.com", "x").with_metadata("k", "a\u{0}b\u{7f}c ✓"));
        let header = mail
            .lines()
            .find(|l| l.starts_with("X-Sandloom-k:"))
            .unwrap();
        assert!(header.contains("=?utf-8?"), "{header}");
        assert!(header.is_ascii() && !header.contains('\u{0}'), "{header}");
    }

    #[test]
    fn metadata_is_ignored_when_turned_off_and_default_subject_applies() {
        let quiet = Composer {
            metadata_prefix: None,
            default_subject: Some("Notification".to_owned()),
            ..composer()
        };
        let message =
            Message::new("a@example.com", "x").with_metadata("not a header: at all", "v\r\n");
        let mail = String::from_utf8(quiet.compose(&message).unwrap().email.formatted()).unwrap();
        assert!(!mail.contains("X-Sandloom"), "{mail}");
        assert!(mail.contains("Subject: Notification\r\n"), "{mail}");
    }
}
