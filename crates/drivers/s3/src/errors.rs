//! `object_store` errors to [`InfraError`] kinds.
//!
//! | `object_store` error | kind |
//! |---|---|
//! | `NotFound` | `NotFound` |
//! | `AlreadyExists`, `Precondition`, `NotModified` (conditional writes) | `Conflict` |
//! | `InvalidPath` | `InvalidInput` |
//! | `NotSupported`, `NotImplemented` | `Unsupported` |
//! | an HTTP timeout anywhere in the cause chain | `Timeout` |
//! | a connection error (refused, reset, closed, interrupted, a request that got no answer), a 5xx, 429 or 503 answer | `Unavailable` |
//! | everything else (`PermissionDenied`, `Unauthenticated`, other 4xx, bad answers) | `Backend` |
//!
//! Messages name the operation, the key, the endpoint and the bucket, never a credential:
//! requests are signed in headers, and `object_store` errors show URLs, not headers.

use std::error::Error as StdError;
use std::io;

use object_store::client::{HttpError, HttpErrorKind};
use sandloom_driverkit::objectstore::NAME;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};

/// What failed, for the message: `get "a/b"` at `http://…` bucket `b`.
pub(crate) struct Context<'a> {
    pub(crate) operation: &'a str,
    pub(crate) key: &'a str,
}

/// The kind of a failure that is not an answer about the object itself.
fn transport_kind(err: &(dyn StdError + 'static)) -> ErrorKind {
    let mut cause: Option<&(dyn StdError + 'static)> = Some(err);
    let mut kind = ErrorKind::Backend;
    while let Some(current) = cause {
        if let Some(http) = current.downcast_ref::<HttpError>() {
            match http.kind() {
                HttpErrorKind::Timeout => return ErrorKind::Timeout,
                HttpErrorKind::Connect | HttpErrorKind::Request | HttpErrorKind::Interrupted => {
                    kind = ErrorKind::Unavailable;
                }
                _ => {}
            }
        }
        // "error sending request": no answer came (a pooled connection the server had closed,
        // a connection cut while writing). object_store leaves some of these `Unknown` (hyper's
        // "canceled" and "channel closed"), yet the request can be tried again.
        if let Some(request) = current.downcast_ref::<reqwest::Error>()
            && (request.is_request() || request.is_connect())
        {
            kind = ErrorKind::Unavailable;
        }
        if let Some(io) = current.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::TimedOut => return ErrorKind::Timeout,
                io::ErrorKind::ConnectionRefused
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::NotConnected
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof => kind = ErrorKind::Unavailable,
                _ => {}
            }
        }
        cause = current.source();
    }
    if kind == ErrorKind::Backend && server_is_unavailable(&err.to_string()) {
        kind = ErrorKind::Unavailable;
    }
    kind
}

/// The HTTP status `object_store`'s message reports, if any (its retry error, which carries
/// the status, is not public: its message is the only place the status shows).
fn status_in(message: &str) -> Option<u16> {
    let (_, after) = message.split_once("status code: ")?;
    after.get(..3)?.parse().ok()
}

/// Whether `object_store`'s message reports a 5xx or 429 answer.
fn server_is_unavailable(message: &str) -> bool {
    match status_in(message) {
        Some(status) => status >= 500 || status == 429,
        None => message.contains("SlowDown") || message.contains("ServiceUnavailable"),
    }
}

/// Whether the server answered but is struggling (5xx, 429): worth another try.
pub(crate) fn server_answered_unavailable(err: &object_store::Error) -> bool {
    kind_of(err) == ErrorKind::Unavailable && server_is_unavailable(&err.to_string())
}

/// Why a listing of the bucket failed, in words, for `start`'s error.
pub(crate) fn why_the_bucket_is_unusable(err: &object_store::Error, timeout_ms: u128) -> String {
    let message = err.to_string();
    if message.contains("NoSuchBucket") {
        return "the bucket does not exist".to_owned();
    }
    let why = match (kind_of(err), status_in(&message)) {
        (ErrorKind::NotFound, _) => "the bucket does not exist",
        (ErrorKind::Timeout, _) => {
            return format!("no answer within the connect timeout ({timeout_ms} ms)");
        }
        (ErrorKind::Unavailable, None) => "the server cannot be reached",
        (ErrorKind::Unavailable, Some(_)) => "the server is unavailable",
        (_, Some(401 | 403)) => "access denied: check the credentials and the bucket policy",
        (_, Some(301 | 307 | 400)) => {
            "the server refused the request: check `region` and `path_style`"
        }
        _ => "the server refused to list the bucket",
    };
    why.to_owned()
}

/// The kind `err` maps to.
pub(crate) fn kind_of(err: &object_store::Error) -> ErrorKind {
    use object_store::Error as E;
    match err {
        E::NotFound { .. } => ErrorKind::NotFound,
        E::AlreadyExists { .. } | E::Precondition { .. } | E::NotModified { .. } => {
            ErrorKind::Conflict
        }
        E::InvalidPath { .. } => ErrorKind::InvalidInput,
        E::NotSupported { .. } | E::NotImplemented { .. } => ErrorKind::Unsupported,
        other => transport_kind(other),
    }
}

/// `err` as an [`InfraError`] of the right kind, naming the operation, key, endpoint and bucket.
pub(crate) fn infra_error(
    err: object_store::Error,
    context: &Context<'_>,
    endpoint: &str,
    bucket: &str,
) -> InfraError {
    let kind = kind_of(&err);
    let Context { operation, key } = context;
    let what = match kind {
        ErrorKind::NotFound => format!("no object {key:?}"),
        ErrorKind::Conflict => format!("the condition of {operation} {key:?} does not hold"),
        ErrorKind::Unavailable => {
            format!("{operation} {key:?}: S3 at {endpoint} (bucket `{bucket}`) is unavailable")
        }
        ErrorKind::Timeout => {
            format!("{operation} {key:?}: S3 at {endpoint} (bucket `{bucket}`) timed out")
        }
        _ => format!("{operation} {key:?} failed at {endpoint} (bucket `{bucket}`)"),
    };
    let message = match kind {
        ErrorKind::NotFound => what,
        _ => format!("{what}: {err}"),
    };
    InfraError::new(kind, NAME, message).with_source(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(source: impl StdError + Send + Sync + 'static) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: Box::new(source),
        }
    }

    #[test]
    fn answers_about_objects_keep_their_meaning() {
        let boxed = || Box::new(io::Error::other("x")) as Box<dyn StdError + Send + Sync>;
        let cases = [
            (
                object_store::Error::NotFound {
                    path: "k".into(),
                    source: boxed(),
                },
                ErrorKind::NotFound,
            ),
            (
                object_store::Error::AlreadyExists {
                    path: "k".into(),
                    source: boxed(),
                },
                ErrorKind::Conflict,
            ),
            (
                object_store::Error::Precondition {
                    path: "k".into(),
                    source: boxed(),
                },
                ErrorKind::Conflict,
            ),
            (
                object_store::Error::NotImplemented {
                    operation: "x".into(),
                    implementer: "y".into(),
                },
                ErrorKind::Unsupported,
            ),
            (
                object_store::Error::PermissionDenied {
                    path: "k".into(),
                    source: boxed(),
                },
                ErrorKind::Backend,
            ),
        ];
        for (err, kind) in cases {
            assert_eq!(kind_of(&err), kind, "{err}");
        }
    }

    #[test]
    fn transport_failures_are_retryable_kinds() {
        let timeout = HttpError::new(HttpErrorKind::Timeout, io::Error::other("slow"));
        assert_eq!(kind_of(&generic(timeout)), ErrorKind::Timeout);
        let refused = HttpError::new(
            HttpErrorKind::Connect,
            io::Error::from(io::ErrorKind::ConnectionRefused),
        );
        assert_eq!(kind_of(&generic(refused)), ErrorKind::Unavailable);
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(kind_of(&generic(reset)), ErrorKind::Unavailable);
        let garbled = HttpError::new(HttpErrorKind::Decode, io::Error::other("bad xml"));
        assert_eq!(kind_of(&generic(garbled)), ErrorKind::Backend);
    }

    #[test]
    fn server_errors_are_read_from_the_message() {
        assert!(server_is_unavailable(
            "Server returned non-2xx status code: 503 Service Unavailable: "
        ));
        assert!(server_is_unavailable(
            "… status code: 429 Too Many Requests"
        ));
        assert!(!server_is_unavailable("… status code: 400 Bad Request"));
        assert!(server_is_unavailable("<Code>SlowDown</Code>"));
        assert_eq!(status_in("x status code: 404 Not Found"), Some(404));
        assert_eq!(status_in("no status"), None);
    }

    #[test]
    fn messages_name_the_place_and_keep_the_source() {
        let err = infra_error(
            generic(io::Error::from(io::ErrorKind::ConnectionRefused)),
            &Context {
                operation: "get",
                key: "a/b",
            },
            "http://127.0.0.1:1",
            "bucket",
        );
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(err.message().contains("http://127.0.0.1:1"), "{err}");
        assert!(err.message().contains("`bucket`"), "{err}");
        assert!(err.source().is_some());
    }
}
