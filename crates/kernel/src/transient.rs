//! Which failed `start`s are worth another attempt: the errors that say a backend is not there
//! yet. [`crate::wait`] retries those while `start_wait_ms` lasts; [`crate::lifecycle`] reads
//! the kind from each failed `start`.
//!
//! The kernel cannot name driverkit's `DriverError`, so it reads the kind from the error's
//! `source()` chain:
//!
//! 1. The first [`InfraError`] in the chain decides: `Unavailable` or `Timeout` is transient,
//!    any other kind is not. This is how a driver marks a start error transient:
//!    `DriverError::new("cannot reach …").with_source(InfraError::unavailable("cache", "…"))`.
//! 2. Without one, a [`std::io::Error`] in the chain (also one a client crate holds in an
//!    `Arc<dyn Error>`) whose kind says the peer is not there yet — refused, reset, aborted, not
//!    connected, broken pipe, unexpected end of stream, host or network unreachable, timed out —
//!    is transient.
//! 3. The kernel's own start timeout (`start_timeout_ms`) is transient.
//!
//! Everything else — a panic, a `start` that blocks its thread, any other error — fails at once.

use std::error::Error as StdError;
use std::sync::Arc;

use sandloom_sdk_infra::{ErrorKind, InfraError};

/// Whether a failed `start`'s error is transient, and of which kind (see the module docs).
pub(crate) fn transient_kind(error: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    let mut io_kind = None;
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(infra) = error.downcast_ref::<InfraError>() {
            return infra.kind().is_retryable().then_some(infra.kind());
        }
        if io_kind.is_none() {
            // Some client crates (redis) hold the I/O error in an `Arc`, whose `source()`
            // skips it: look inside.
            let io = error.downcast_ref::<std::io::Error>().or_else(|| {
                error
                    .downcast_ref::<Arc<dyn StdError + Send + Sync>>()
                    .and_then(|inner| inner.downcast_ref::<std::io::Error>())
            });
            io_kind = io.and_then(|io| io_transient(io.kind()));
        }
        next = error.source();
    }
    io_kind
}

fn io_transient(kind: std::io::ErrorKind) -> Option<ErrorKind> {
    use std::io::ErrorKind as Io;
    match kind {
        Io::ConnectionRefused
        | Io::ConnectionReset
        | Io::ConnectionAborted
        | Io::NotConnected
        | Io::BrokenPipe
        | Io::UnexpectedEof
        | Io::HostUnreachable
        | Io::NetworkUnreachable
        | Io::NetworkDown
        | Io::AddrNotAvailable => Some(ErrorKind::Unavailable),
        Io::TimedOut => Some(ErrorKind::Timeout),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as StdError;
    use std::sync::Arc;

    use sandloom_sdk_infra::{ErrorKind, InfraError};

    use super::transient_kind;

    /// A driver's error with a cause, as driverkit's `DriverError` is.
    #[derive(Debug)]
    struct Wrapper(&'static str, Option<Box<dyn StdError + Send + Sync>>);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Wrapper {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    fn wrapped(source: impl StdError + Send + Sync + 'static) -> Wrapper {
        Wrapper("cannot start", Some(Box::new(source)))
    }

    #[test]
    fn the_first_infra_error_in_the_chain_decides() {
        let unavailable = wrapped(InfraError::unavailable("cache", "connection refused"));
        assert_eq!(transient_kind(&unavailable), Some(ErrorKind::Unavailable));
        let timeout = wrapped(InfraError::new(ErrorKind::Timeout, "cache", "no answer"));
        assert_eq!(transient_kind(&timeout), Some(ErrorKind::Timeout));
        let invalid = wrapped(InfraError::invalid_input("cache", "bad password"));
        assert_eq!(transient_kind(&invalid), None);
        // An explicit non-transient kind wins over a connection error beneath it.
        let marked = wrapped(
            InfraError::conflict("cache", "wrong server")
                .with_source(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        );
        assert_eq!(transient_kind(&marked), None);
        assert_eq!(transient_kind(&Wrapper("plain", None)), None);
    }

    #[test]
    fn connection_errors_of_io_are_transient_and_others_are_not() {
        use std::io::{Error, ErrorKind as Io};
        for (kind, expected) in [
            (Io::ConnectionRefused, Some(ErrorKind::Unavailable)),
            (Io::ConnectionReset, Some(ErrorKind::Unavailable)),
            (Io::BrokenPipe, Some(ErrorKind::Unavailable)),
            (Io::UnexpectedEof, Some(ErrorKind::Unavailable)),
            (Io::TimedOut, Some(ErrorKind::Timeout)),
            (Io::PermissionDenied, None),
            (Io::NotFound, None),
            (Io::InvalidData, None),
        ] {
            assert_eq!(
                transient_kind(&wrapped(Error::from(kind))),
                expected,
                "{kind:?}"
            );
            // Held in an `Arc`, as the redis client holds it.
            let shared: Arc<dyn StdError + Send + Sync> = Arc::new(Error::from(kind));
            assert_eq!(
                transient_kind(&wrapped(shared)),
                expected,
                "{kind:?} in an Arc"
            );
        }
    }
}
