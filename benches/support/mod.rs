//! What the benchmark binaries share: polling a future that is ready at once without an
//! executor, the kernel configuration they start, and reading a median back from criterion.

#![allow(dead_code)] // each benchmark binary uses part of this module

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Poll `future` once with a no-op waker and return its output: an operation of a no-op driver
/// is ready at once, so this measures the call and not an executor.
///
/// # Panics
/// When the future is not ready on its first poll.
#[inline]
pub(crate) fn ready<F: Future>(future: F) -> F::Output {
    let mut context = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut context) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future was not ready on its first poll"),
    }
}

/// `INFRA` selecting the four embedded defaults (`cache.memory`, `notifier.log`,
/// `objectstore.fs`, `taskqueue.memory`), with the object store under `root`.
pub(crate) fn embedded_defaults(root: &std::path::Path) -> String {
    format!(
        "[cache.default]\ndriver = \"memory\"\n\n\
         [notifier.default]\ndriver = \"log\"\n\n\
         [objectstore.default]\ndriver = \"fs\"\nroot = {root:?}\n\n\
         [taskqueue.default]\ndriver = \"memory\"\n",
        root = root.display().to_string(),
    )
}
