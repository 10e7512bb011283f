//! How lettre's SMTP errors become [`InfraError`]s and [`DriverError`]s.
//!
//! The mapping is documented on [`SmtpNotifier`](crate::SmtpNotifier).
//!
//! Messages name the server as `host:port`; they never hold the password (lettre's errors
//! carry replies and I/O errors, never credentials).

use std::error::Error as StdError;
use std::io;

use lettre::transport::smtp::Error as SmtpError;
use lettre::transport::smtp::response::Severity;
use sandloom_driverkit::DriverError;
use sandloom_driverkit::notifier::NAME;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};

use crate::options::Security;

/// A send that failed, and whether the server itself could not be reached (rather than this
/// one message being refused), so a batch stops knocking on a closed door.
#[derive(Debug)]
pub(crate) struct Undelivered {
    pub(crate) error: InfraError,
    pub(crate) server_unreachable: bool,
}

impl Undelivered {
    pub(crate) fn message(error: InfraError) -> Self {
        Self {
            error,
            server_unreachable: false,
        }
    }

    pub(crate) fn unreachable(error: InfraError) -> Self {
        Self {
            error,
            server_unreachable: true,
        }
    }
}

/// Map an error of `transport.send` to the server at `server`.
pub(crate) fn send_error(error: SmtpError, server: &str, ascii_recipient: bool) -> Undelivered {
    if error.is_transport_shutdown() {
        return Undelivered::message(InfraError::stopped(NAME));
    }
    if let Some(code) = error.status() {
        let kind = match (code.severity, u16::from(code)) {
            (Severity::TransientNegativeCompletion, _) => ErrorKind::Unavailable,
            (_, 501 | 550 | 551 | 552 | 553) => ErrorKind::InvalidInput,
            _ => ErrorKind::Backend,
        };
        let message = format!("the SMTP server at {server} refused the message: {error}");
        return Undelivered::message(InfraError::new(kind, NAME, message).with_source(error));
    }
    if error.is_timeout() {
        let message = format!("the SMTP server at {server} did not answer in time: {error}");
        return Undelivered::unreachable(
            InfraError::new(ErrorKind::Timeout, NAME, message).with_source(error),
        );
    }
    if error.is_client() && !ascii_recipient {
        let message =
            format!("the SMTP server at {server} cannot take this recipient address: {error}");
        return Undelivered::message(InfraError::invalid_input(NAME, message).with_source(error));
    }
    if error.is_tls() || error.is_client() {
        let message = format!("talking to the SMTP server at {server} failed: {error}");
        return Undelivered::unreachable(
            InfraError::new(ErrorKind::Backend, NAME, message).with_source(error),
        );
    }
    if io_error_kind(&error) == Some(io::ErrorKind::InvalidData) {
        // TLS refused: an untrusted certificate, or no TLS on that port. Retrying won't help.
        let message = format!("TLS with the SMTP server at {server} failed: {error}");
        return Undelivered::unreachable(
            InfraError::new(ErrorKind::Backend, NAME, message).with_source(error),
        );
    }
    let message = if error.is_response() {
        // lettre reports a connection closed mid-reply as an incomplete response.
        format!(
            "the SMTP server at {server} closed the connection or did not answer in SMTP: {error}"
        )
    } else {
        format!("cannot reach the SMTP server at {server}: {error}")
    };
    Undelivered::unreachable(InfraError::unavailable(NAME, message).with_source(error))
}

/// A send that ran out of its budget.
pub(crate) fn send_timeout(server: &str, budget_ms: u64) -> Undelivered {
    Undelivered::unreachable(InfraError::new(
        ErrorKind::Timeout,
        NAME,
        format!(
            "sending through the SMTP server at {server} did not finish within {budget_ms} ms \
             (`send_timeout_ms`); the message may or may not have been delivered"
        ),
    ))
}

/// `start` could not open and check a session with the server.
pub(crate) fn start_error(error: SmtpError, server: &str, security: Security) -> DriverError {
    let garbled = io_error_kind(&error) == Some(io::ErrorKind::InvalidData);
    // Only for the hint: lettre reports every TLS handshake failure as a connection error.
    let certificate = garbled && error.to_string().contains("certificate");
    let hint = if certificate {
        " (the server's certificate is not trusted for this host name: give the server a \
         certificate from a trusted authority, or, for tests only, set `accept_invalid_certs`)"
    } else if security == Security::Tls && garbled {
        " (are `port` and `security` right? `tls` expects TLS from the first byte, as on port \
         465; a server on port 587 or 25 wants `starttls`)"
    } else if error.is_client() && security == Security::Starttls {
        " (with `security = \"starttls\"` the server must offer STARTTLS)"
    } else {
        ""
    };
    // The cause last: the kernel's `error_chain` skips a source the message ends with, so the
    // cause then reads once.
    DriverError::new(format!(
        "cannot open an SMTP session with {server} (security {security}){hint}: {error}"
    ))
    .with_source(error)
}

/// The kind of the first I/O error in `error`'s chain of causes.
fn io_error_kind(error: &SmtpError) -> Option<io::ErrorKind> {
    let mut cause: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cause = current.source();
    }
    None
}

/// `start` ran out of its budget.
pub(crate) fn start_timeout(server: &str, budget_ms: u64) -> DriverError {
    DriverError::new(format!(
        "the SMTP server at {server} did not answer within {budget_ms} ms (`connect_timeout_ms`)"
    ))
}
