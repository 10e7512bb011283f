//! Redis client errors as the contracts' [`InfraError`] kinds.

use redis::{RedisError, ServerErrorKind};
use sandloom_driverkit::cache::NAME;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};

/// What kind of failure `err` is for any operation.
///
/// Lost, refused or broken connections are `Unavailable` (the connection manager reconnects on
/// the next call); a command or connection attempt that ran out of time is `Timeout`; a server
/// that refuses service for now (loading its dataset, out of memory, a replica or a cluster
/// that is failing over) is `Unavailable`; everything else the server or client reports
/// (authentication, permissions, a key of another Redis type) is `Backend`.
pub(crate) fn kind_of(err: &RedisError) -> ErrorKind {
    if err.is_timeout() {
        return ErrorKind::Timeout;
    }
    if err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() {
        return ErrorKind::Unavailable;
    }
    match err.kind() {
        redis::ErrorKind::Server(
            ServerErrorKind::BusyLoading
            | ServerErrorKind::TryAgain
            | ServerErrorKind::MasterDown
            | ServerErrorKind::ClusterDown
            | ServerErrorKind::ReadOnly,
        ) => ErrorKind::Unavailable,
        _ if err.code() == Some("OOM") => ErrorKind::Unavailable,
        _ => ErrorKind::Backend,
    }
}

/// `operation` of the `capability` failed with `err`.
pub(crate) fn operation(
    capability: &'static str,
    operation: &'static str,
    err: RedisError,
) -> InfraError {
    let kind = kind_of(&err);
    InfraError::new(kind, capability, format!("redis {operation} failed: {err}")).with_source(err)
}

/// `increment` of `key` failed with `err`: a value that is not a counter is `Conflict`.
///
/// Redis answers `ERR value is not an integer or out of range` for a string that is not the
/// canonical decimal form of an `i64`, `ERR increment or decrement would overflow` past the
/// `i64` range, and `WRONGTYPE` for a key holding a list, hash or other non-string type; all
/// three mean the value under `key` cannot be counted with this delta.
pub(crate) fn increment(key: &str, delta: i64, err: RedisError) -> InfraError {
    let not_a_counter = matches!(
        err.kind(),
        redis::ErrorKind::Server(ServerErrorKind::ResponseError)
    ) || err.code() == Some("WRONGTYPE");
    if not_a_counter {
        return InfraError::conflict(NAME, format!("cannot increment {key:?} by {delta}: {err}"))
            .with_source(err);
    }
    operation(NAME, "increment", err)
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    #[test]
    fn io_failures_are_unavailable_and_timeouts_are_timeout() {
        let refused = RedisError::from(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(kind_of(&refused), ErrorKind::Unavailable);
        let dropped = RedisError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(kind_of(&dropped), ErrorKind::Unavailable);
        let timed_out = RedisError::from(io::Error::from(io::ErrorKind::TimedOut));
        assert_eq!(kind_of(&timed_out), ErrorKind::Timeout);
    }

    #[test]
    fn client_errors_are_backend() {
        let err = RedisError::from((redis::ErrorKind::AuthenticationFailed, "auth failed"));
        assert_eq!(kind_of(&err), ErrorKind::Backend);
        let err = operation(NAME, "get", err);
        assert_eq!(err.kind(), ErrorKind::Backend);
        assert!(err.message().starts_with("redis get failed"), "{err}");
    }

    #[test]
    fn a_failed_increment_that_is_not_about_the_value_keeps_its_kind() {
        let dropped = RedisError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(increment("k", 1, dropped).kind(), ErrorKind::Unavailable);
    }
}
