//! What the benchmark binaries share: polling a future that is ready at once without an
//! executor, the kernel configuration they start, and reading a median back from criterion.

#![allow(dead_code)] // each benchmark binary uses part of this module

use std::future::Future;
use std::pin::pin;
use std::sync::Barrier;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};

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

/// This thread's CPU time so far.
pub(crate) fn thread_cpu_time() -> Duration {
    cpu_time(ClockId::ThreadCPUTime)
}

/// The CPU time of all this process's threads so far: what a run costs wherever it ran (a
/// blocking pool's thread included), without the time a virtual machine's CPU was taken away
/// by its host ("steal"), which wall-clock time counts.
pub(crate) fn process_cpu_time() -> Duration {
    cpu_time(ClockId::ProcessCPUTime)
}

fn cpu_time(clock: ClockId) -> Duration {
    let now = clock_gettime(clock);
    let seconds = u64::try_from(now.tv_sec).expect("CPU time is not negative");
    let nanos = u32::try_from(now.tv_nsec).expect("nanoseconds fit");
    Duration::new(seconds, nanos)
}

/// Run `op` `iters` times on each of `threads` threads released together, and return the mean
/// of their CPU times: criterion then reports the cost of one call on one thread.
pub(crate) fn on_threads(threads: usize, iters: u64, op: &(dyn Fn() + Sync)) -> Duration {
    let barrier = Barrier::new(threads);
    let total: Duration = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    let start = thread_cpu_time();
                    for _ in 0..iters {
                        op();
                    }
                    thread_cpu_time().saturating_sub(start)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no panic"))
            .sum()
    });
    total / u32::try_from(threads).expect("a few threads")
}
