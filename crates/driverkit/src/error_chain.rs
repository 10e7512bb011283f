//! An error and everything that caused it, as one line.

use std::error::Error as StdError;

/// `error`'s message followed by each of its sources', joined with `: `, for a log line or an
/// error message that must say more than the outer layer ("db error", "error sending request")
/// while the useful part is deeper in the chain.
///
/// A source whose message the line already ends with is skipped: many wrappers repeat their
/// cause's text, and the line should not say everything twice. Only `Display` texts are used,
/// so the result carries no more than the errors themselves show; keep secrets out of those.
///
/// ```
/// use sandloom_driverkit::{DriverError, error_chain};
///
/// let refused = std::io::Error::other("connection refused");
/// let err = DriverError::new("cannot reach 127.0.0.1:6379").with_source(refused);
/// assert_eq!(error_chain(&err), "cannot reach 127.0.0.1:6379: connection refused");
/// ```
pub fn error_chain(error: &dyn StdError) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !text.is_empty() && !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = cause.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::error_chain;
    use crate::DriverError;

    #[test]
    fn every_source_is_joined_in_order() {
        let inner = std::io::Error::other("reset by peer");
        let middle = DriverError::new("handshake failed").with_source(inner);
        let outer = DriverError::new("cannot connect").with_source(middle);
        assert_eq!(
            error_chain(&outer),
            "cannot connect: handshake failed: reset by peer"
        );
        assert_eq!(error_chain(&DriverError::new("alone")), "alone");
    }

    #[test]
    fn repeated_and_empty_messages_are_skipped() {
        let inner = std::io::Error::other("timed out");
        let repeats = DriverError::new("request failed: timed out").with_source(inner);
        assert_eq!(error_chain(&repeats), "request failed: timed out");
        let empty = DriverError::new("").with_source(std::io::Error::other("refused"));
        let outer = DriverError::new("cannot connect").with_source(empty);
        assert_eq!(error_chain(&outer), "cannot connect: refused");
    }
}
