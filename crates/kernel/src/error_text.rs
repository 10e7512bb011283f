//! The text of what went wrong inside a driver: an error with its causes, a caught panic.
//!
//! The one home of both helpers. The kernel words startup and shutdown problems with them, and
//! driverkit (whose drivers word their own errors) and the conformance kits reach them through
//! [`crate::__private`], so a driver's message and the kernel's report of it read alike.

use std::any::Any;
use std::error::Error as StdError;

// `error`'s message followed by each of its sources', joined with `: `; a source whose text
// the line already ends with, or an empty one, is skipped. Its documentation is on the public
// re-export, `sandloom_driverkit::error_chain`: rustdoc would show doc comments here after
// those, on the driver authors' page, under a path they never use.
#[allow(missing_docs)]
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

/// The text of a caught panic's payload: the `&str` or `String` that `panic!` was given, or a
/// fixed phrase for any other payload (from `std::panic::panic_any`).
///
/// ```
/// use sandloom_kernel::__private::panic_message;
///
/// let payload = std::panic::catch_unwind(|| panic!("bad {}", "state")).unwrap_err();
/// assert_eq!(panic_message(payload.as_ref()), "bad state");
/// let payload = std::panic::catch_unwind(|| std::panic::panic_any(7_u8)).unwrap_err();
/// assert_eq!(panic_message(payload.as_ref()), "a panic with a non-string payload");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::{error_chain, panic_message};

    /// An error with a message and, optionally, a cause.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|cause| cause as _)
        }
    }

    fn layer(message: &'static str, cause: Option<Layer>) -> Layer {
        Layer(message, cause.map(Box::new))
    }

    #[test]
    fn every_source_is_joined_in_order() {
        let inner = layer("reset by peer", None);
        let middle = layer("handshake failed", Some(inner));
        let outer = layer("cannot connect", Some(middle));
        assert_eq!(
            error_chain(&outer),
            "cannot connect: handshake failed: reset by peer"
        );
        assert_eq!(error_chain(&layer("alone", None)), "alone");
    }

    #[test]
    fn repeated_and_empty_messages_are_skipped() {
        let repeats = layer("request failed: timed out", Some(layer("timed out", None)));
        assert_eq!(error_chain(&repeats), "request failed: timed out");
        let empty = layer("", Some(layer("refused", None)));
        let outer = layer("cannot connect", Some(empty));
        assert_eq!(error_chain(&outer), "cannot connect: refused");
        // Only a repeat at the end of the line is skipped, not the same words elsewhere.
        let inner = layer("timed out", None);
        let middle = layer("timed out waiting", Some(inner));
        let outer = layer("cannot connect", Some(middle));
        assert_eq!(
            error_chain(&outer),
            "cannot connect: timed out waiting: timed out"
        );
    }

    #[test]
    fn a_panic_says_its_message_whatever_its_string_type() {
        let borrowed = std::panic::catch_unwind(|| panic!("fixed text")).unwrap_err();
        assert_eq!(panic_message(borrowed.as_ref()), "fixed text");
        let owned = std::panic::catch_unwind(|| panic!("{} text", "formatted")).unwrap_err();
        assert_eq!(panic_message(owned.as_ref()), "formatted text");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(42_i32)).unwrap_err();
        assert_eq!(
            panic_message(other.as_ref()),
            "a panic with a non-string payload"
        );
    }
}
