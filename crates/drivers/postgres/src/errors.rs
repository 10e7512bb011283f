//! Client and pool errors as `InfraError`s of the right kind, named with the redacted address.

use std::error::Error as StdError;
use std::time::Duration;

use deadpool_postgres::{PoolError, TimeoutType};
use sandloom_driverkit::sdk::{ErrorKind, InfraError};
use sandloom_driverkit::{DriverError, error_chain};

fn sqlstate(err: &tokio_postgres::Error) -> Option<&str> {
    err.code().map(tokio_postgres::error::SqlState::code)
}

fn io_kind(err: &tokio_postgres::Error) -> Option<std::io::ErrorKind> {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = cause.source();
    }
    None
}

/// What kind of failure a client error is.
pub(crate) fn kind_of(err: &tokio_postgres::Error) -> ErrorKind {
    if let Some(code) = sqlstate(err) {
        return match code {
            // query_canceled (statement_timeout), lock_not_available (lock_timeout)
            "57014" | "55P03" => ErrorKind::Timeout,
            // serialization failure, deadlock: the same call may well pass next time
            "40001" | "40P01" => ErrorKind::Unavailable,
            // admin/crash shutdown, cannot connect now, too many connections, out of resources
            c if c.starts_with("08") || c.starts_with("57P") || c.starts_with("53") => {
                ErrorKind::Unavailable
            }
            _ => ErrorKind::Backend,
        };
    }
    if err.is_closed() {
        return ErrorKind::Unavailable;
    }
    match io_kind(err) {
        Some(std::io::ErrorKind::TimedOut) => ErrorKind::Timeout,
        Some(_) => ErrorKind::Unavailable,
        None if err.to_string() == "timeout waiting for server" => ErrorKind::Timeout,
        None => ErrorKind::Backend,
    }
}

/// Whether the connection that gave `err` should leave the pool rather than be reused.
pub(crate) fn is_broken(err: &tokio_postgres::Error) -> bool {
    err.is_closed()
        || io_kind(err).is_some()
        || sqlstate(err).is_some_and(|c| c.starts_with("08") || c.starts_with("57P"))
}

/// `what` failed at `target` with a client error.
pub(crate) fn client(
    capability: &'static str,
    what: &str,
    target: &str,
    err: tokio_postgres::Error,
) -> InfraError {
    InfraError::new(
        kind_of(&err),
        capability,
        format!("{what} failed at {target}: {}", error_chain(&err)),
    )
    .with_source(err)
}

/// Taking a connection from the pool for `what` failed; `connect` and `wait` are the budgets
/// for opening a connection and for waiting on a free one.
pub(crate) fn pool(
    capability: &'static str,
    what: &str,
    target: &str,
    err: PoolError,
    connect: Duration,
    wait: Duration,
) -> InfraError {
    match err {
        PoolError::Backend(err) => client(capability, what, target, err),
        PoolError::Closed => InfraError::stopped(capability),
        PoolError::Timeout(TimeoutType::Wait) => InfraError::new(
            ErrorKind::Timeout,
            capability,
            format!(
                "{what} failed at {target}: no free connection within {} ms (`operation_timeout_ms`; raise `pool_size`?)",
                wait.as_millis()
            ),
        ),
        PoolError::Timeout(_) => InfraError::new(
            ErrorKind::Timeout,
            capability,
            format!(
                "{what} failed: cannot connect to {target} within {} ms (`connect_timeout_ms`)",
                connect.as_millis()
            ),
        ),
        other => InfraError::new(
            ErrorKind::Backend,
            capability,
            format!("{what} failed at {target}: {}", error_chain(&other)),
        ),
    }
}

/// `start` could not open its first connection. The message names the server; the cause is
/// the source, which the kernel prints after it.
pub(crate) fn connect(target: &str, err: PoolError, budget: Duration) -> DriverError {
    match err {
        PoolError::Backend(err) => {
            DriverError::new(format!("cannot connect to {target}")).with_source(err)
        }
        PoolError::Timeout(_) => DriverError::new(format!(
            "cannot connect to {target} within {} ms (`connect_timeout_ms`)",
            budget.as_millis()
        )),
        PoolError::Closed => DriverError::new("the driver has been stopped"),
        other => DriverError::new(format!(
            "cannot connect to {target}: {}",
            error_chain(&other)
        )),
    }
}

/// `what` did not finish within `budget`.
pub(crate) fn timeout(
    capability: &'static str,
    what: &str,
    target: &str,
    budget: Duration,
) -> InfraError {
    InfraError::new(
        ErrorKind::Timeout,
        capability,
        format!(
            "{what} failed at {target}: no answer within {} ms (`operation_timeout_ms`)",
            budget.as_millis()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_closed_is_stopped_and_waiting_is_timeout() {
        let budget = Duration::from_millis(5);
        let closed = pool(
            "taskqueue",
            "enqueue",
            "postgres://u@h:1/d",
            PoolError::Closed,
            budget,
            budget,
        );
        assert_eq!(closed.kind(), ErrorKind::Stopped);
        let waited = pool(
            "taskqueue",
            "enqueue",
            "postgres://u@h:1/d",
            PoolError::Timeout(TimeoutType::Wait),
            budget,
            budget,
        );
        assert_eq!(waited.kind(), ErrorKind::Timeout);
        assert!(waited.message().contains("pool_size"));
        let created = pool(
            "taskqueue",
            "enqueue",
            "postgres://u@h:1/d",
            PoolError::Timeout(TimeoutType::Create),
            budget,
            budget,
        );
        assert_eq!(created.kind(), ErrorKind::Timeout);
        assert!(created.message().contains("postgres://u@h:1/d"));
    }
}
