//! What a failed attempt means: its [`ErrorKind`], whether to retry it, and a message that names
//! the endpoint only in its redacted form.

use std::error::Error as StdError;
use std::fmt::Write as _;
use std::time::Duration;

use reqwest::StatusCode;
use sandloom_driverkit::notifier::NAME;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};

/// One failed attempt.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
    /// 5xx, 429, connection failures and timeouts: trying again may succeed.
    pub(crate) retryable: bool,
    /// The endpoint's `Retry-After`, when it gave one.
    pub(crate) retry_after: Option<Duration>,
    /// The HTTP client's error, without its URL.
    pub(crate) source: Option<reqwest::Error>,
}

impl Failure {
    fn new(kind: ErrorKind, message: String, retryable: bool) -> Self {
        Self {
            kind,
            message,
            retryable,
            retry_after: None,
            source: None,
        }
    }

    /// The error `send` answers after `attempts` attempts, with `note` (why retrying stopped)
    /// appended when there is one.
    pub(crate) fn into_error(self, attempts: u32, note: Option<String>) -> InfraError {
        let mut message = self.message;
        if attempts > 1 {
            let _ = write!(message, " (gave up after {attempts} attempts)");
        }
        if let Some(note) = note {
            let _ = write!(message, " ({note})");
        }
        let error = InfraError::new(self.kind, NAME, message);
        match self.source {
            Some(source) => error.with_source(source),
            None => error,
        }
    }
}

/// A response whose status is not 2xx.
pub(crate) fn from_status(
    status: StatusCode,
    endpoint: &str,
    retry_after: Option<Duration>,
) -> Failure {
    let code = status.as_u16();
    let (kind, retryable, advice) = match code {
        400 | 422 => (ErrorKind::InvalidInput, false, ": it refused the message"),
        413 => (
            ErrorKind::InvalidInput,
            false,
            ": it refused the message as too large",
        ),
        401 | 403 => (
            ErrorKind::Backend,
            false,
            ": it refused the request; check `secret`, the user-info of `url` and `headers`",
        ),
        404 | 410 => (
            ErrorKind::Backend,
            false,
            ": no webhook receiver at this URL; check `url`",
        ),
        408 => (ErrorKind::Timeout, false, ""),
        409 => (ErrorKind::Conflict, false, ""),
        429 | 502 | 503 => (ErrorKind::Unavailable, true, ""),
        504 => (ErrorKind::Timeout, true, ""),
        300..=399 => (
            ErrorKind::Backend,
            false,
            ": redirects are not followed (a POST would turn into a GET); set `url` to the \
             final address",
        ),
        500..=599 => (ErrorKind::Backend, true, ""),
        _ => (ErrorKind::Backend, false, ""),
    };
    let mut failure = Failure::new(
        kind,
        format!("the endpoint {endpoint} answered {status}{advice}"),
        retryable,
    );
    if retryable {
        failure.retry_after = retry_after;
    }
    failure
}

/// The request did not get a response: refused, reset, timed out.
pub(crate) fn from_transport(error: reqwest::Error, endpoint: &str, timeout: Duration) -> Failure {
    // The client's error names the URL, which may hold a token in its path or query.
    let error = error.without_url();
    let cause = root_cause(&error);
    let mut failure = if error.is_connect() {
        Failure::new(
            ErrorKind::Unavailable,
            format!("cannot connect to the endpoint {endpoint}: {cause}"),
            true,
        )
    } else if error.is_timeout() {
        Failure::new(
            ErrorKind::Timeout,
            format!(
                "no answer from the endpoint {endpoint} within {} ms",
                timeout.as_millis()
            ),
            true,
        )
    } else if error.is_request() || error.is_body() {
        Failure::new(
            ErrorKind::Unavailable,
            format!("the connection to the endpoint {endpoint} failed: {cause}"),
            true,
        )
    } else {
        Failure::new(
            ErrorKind::Backend,
            format!("the request to the endpoint {endpoint} failed: {cause}"),
            false,
        )
    };
    failure.source = Some(error);
    failure
}

/// The innermost cause (`Connection refused (os error 111)`): the outer layers only say
/// "error sending request" and "client error (Connect)".
fn root_cause(error: &(dyn StdError + 'static)) -> String {
    let mut cause = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_only_transient_ones_retry() {
        let table = [
            (400, ErrorKind::InvalidInput, false),
            (422, ErrorKind::InvalidInput, false),
            (413, ErrorKind::InvalidInput, false),
            (401, ErrorKind::Backend, false),
            (403, ErrorKind::Backend, false),
            (404, ErrorKind::Backend, false),
            (408, ErrorKind::Timeout, false),
            (409, ErrorKind::Conflict, false),
            (418, ErrorKind::Backend, false),
            (301, ErrorKind::Backend, false),
            (429, ErrorKind::Unavailable, true),
            (500, ErrorKind::Backend, true),
            (502, ErrorKind::Unavailable, true),
            (503, ErrorKind::Unavailable, true),
            (504, ErrorKind::Timeout, true),
        ];
        for (code, kind, retryable) in table {
            let status = StatusCode::from_u16(code).unwrap();
            let failure = from_status(status, "http://h:1/***", Some(Duration::ZERO));
            assert_eq!(
                (failure.kind, failure.retryable),
                (kind, retryable),
                "{code}"
            );
            assert_eq!(failure.retry_after.is_some(), retryable, "{code}");
            assert!(failure.message.contains("http://h:1/***"), "{code}");
        }
        let error = from_status(StatusCode::UNAUTHORIZED, "http://h:1", None).into_error(1, None);
        assert_eq!(
            error.to_string(),
            "notifier: the endpoint http://h:1 answered 401 Unauthorized: it refused the request; \
             check `secret`, the user-info of `url` and `headers`"
        );
        let retried = from_status(StatusCode::BAD_GATEWAY, "http://h:1", None)
            .into_error(4, Some("note".into()));
        assert!(
            retried
                .message()
                .ends_with("502 Bad Gateway (gave up after 4 attempts) (note)")
        );
    }
}
