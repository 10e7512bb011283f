//! The built-in notifiers pass the conformance kit of the `notifier` contract.

use sandloom_embedded::{LogNotifier, LogNotifierOptions, MemoryNotifier, MemoryNotifierOptions};

sandloom_conformance::notifier_conformance!(log: LogNotifier, |_request| LogNotifierOptions::default());

// `notifier.memory` keeps what it sends, so the kit also checks that accepted messages arrive
// unchanged and in order, and refused ones not at all.
sandloom_conformance::notifier_conformance!(
    memory: MemoryNotifier,
    |_request| MemoryNotifierOptions::default(),
    .delivered(MemoryNotifier::sent)
);
