//! `notifier.console` passes the conformance kit of the `notifier` contract: what a third-party
//! driver crate runs from its own tests. Any non-blank recipient is valid on a console.

use sandloom_example_driver_console::{ConsoleNotifier, ConsoleOptions};

sandloom_conformance::notifier_conformance!(ConsoleNotifier, |_request| ConsoleOptions {
    prefix: "[conformance] ".to_owned(),
});
