//! Client errors as `InfraError`s of the right kind, with every secret removed.

use std::fmt;

use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
use sandloom_driverkit::sdk::{ErrorKind, InfraError};
use sandloom_driverkit::taskqueue::NAME;

use crate::address::Address;

/// A client error rendered to text with the address's secrets removed: the source attached to
/// every error this driver returns, so that not even the source chain can leak a password.
#[derive(Debug)]
pub(crate) struct Scrubbed(String);

impl Scrubbed {
    pub(crate) fn new(address: &Address, error: &dyn fmt::Display) -> Self {
        Self(address.scrub(&error.to_string()))
    }
}

impl fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Scrubbed {}

/// The kind of failure a client error is.
pub(crate) fn kind_of(error: &lapin::Error) -> ErrorKind {
    use lapin::ErrorKind as Lapin;
    match error.kind() {
        Lapin::ProtocolError(amqp) => match amqp.kind() {
            AMQPErrorKind::Soft(AMQPSoftError::NOTFOUND) => ErrorKind::NotFound,
            AMQPErrorKind::Soft(AMQPSoftError::RESOURCELOCKED) => ErrorKind::Conflict,
            AMQPErrorKind::Soft(AMQPSoftError::CONTENTTOOLARGE) => ErrorKind::InvalidInput,
            AMQPErrorKind::Soft(_) => ErrorKind::Backend,
            // The broker closed the whole connection (shutting down, forced close, out of
            // resources): another connection may succeed.
            AMQPErrorKind::Hard(_) => ErrorKind::Unavailable,
        },
        Lapin::IOError(_)
        | Lapin::RuntimeShutdownError(_)
        | Lapin::InvalidConnectionState(_)
        | Lapin::InvalidChannelState(..)
        | Lapin::InvalidChannel(_)
        | Lapin::ChannelsLimitReached
        | Lapin::MissingHeartbeatError => ErrorKind::Unavailable,
        _ => ErrorKind::Backend,
    }
}

/// Whether the error says a queue does not exist (it expired or was deleted behind our back).
pub(crate) fn is_not_found(error: &lapin::Error) -> bool {
    matches!(
        error.kind(),
        lapin::ErrorKind::ProtocolError(amqp)
            if *amqp.kind() == AMQPErrorKind::Soft(AMQPSoftError::NOTFOUND)
    )
}

/// `what` failed with a client error.
pub(crate) fn client(address: &Address, what: &str, error: &lapin::Error) -> InfraError {
    let source = Scrubbed::new(address, error);
    let hint = if matches!(
        error.kind(),
        lapin::ErrorKind::ProtocolError(amqp)
            if *amqp.kind() == AMQPErrorKind::Soft(AMQPSoftError::PRECONDITIONFAILED)
    ) {
        " (the queue exists with other arguments: was `queue_ttl_ms` changed? delete the queue or restore the option)"
    } else {
        ""
    };
    InfraError::new(
        kind_of(error),
        NAME,
        // The cause last, so that `error_chain` (which skips a source the message ends with)
        // reads it once.
        format!("{what} on {} failed{hint}: {source}", address.shown()),
    )
    .with_source(source)
}

/// `what` did not finish within the operation timeout.
pub(crate) fn timed_out(address: &Address, what: &str, limit: std::time::Duration) -> InfraError {
    InfraError::new(
        ErrorKind::Timeout,
        NAME,
        format!(
            "{what} on {} did not finish within {} ms (`operation_timeout_ms`)",
            address.shown(),
            limit.as_millis()
        ),
    )
}

/// `Conflict`: the reservation no longer holds its task.
pub(crate) fn stale(task_id: &str, why: &str) -> InfraError {
    InfraError::conflict(
        NAME,
        format!("the reservation of task {task_id:?} is stale: {why}"),
    )
}
