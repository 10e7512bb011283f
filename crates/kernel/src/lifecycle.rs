//! Calling driver lifecycles safely: each call is guarded (its panic caught, its time bounded,
//! and, on a multi-threaded runtime, run as its own task), so a driver that panics or never
//! finishes cannot crash or stall startup, a driver that blocks its thread is found out and
//! named, and nothing whose start was attempted is ever forgotten.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::error::Problem;
use crate::error_text::{error_chain, panic_message};
use crate::registry::{BoxError, ErasedLifecycle, LifecycleFuture};

/// How a `stop` called by [`stop`] ended.
pub(crate) enum Stopped {
    Done,
    Failed(String),
    Panicked(String),
    TimedOut,
}

/// Run the driver's `stop` under `timeout`: on a single-threaded runtime polled inline, its
/// first poll (see [`first_poll`]) then the rest ([`rest_inline`]); on a multi-threaded one as
/// a task. On timeout it is cancelled (it stops at its next await; a driver blocking a thread
/// keeps that one thread until it returns).
pub(crate) async fn stop(lifecycle: &Arc<dyn ErasedLifecycle>, timeout: Duration) -> Stopped {
    let future = Arc::clone(lifecycle).stop_owned();
    if !current_thread() {
        return stop_as_task(future, timeout).await;
    }
    // Polled here to its end: held inline, it must not move once polled.
    let mut future = std::pin::pin!(future);
    match first_poll(future.as_mut()).await {
        FirstPoll::Ready(Ok(())) => return Stopped::Done,
        FirstPoll::Ready(Err(error)) => return Stopped::Failed(error_chain(error.as_ref())),
        FirstPoll::Panicked(message) => return Stopped::Panicked(message),
        FirstPoll::Pending => {}
    }
    match rest_inline(future, timeout).await {
        Some(Ok(Ok(()))) => Stopped::Done,
        Some(Ok(Err(error))) => Stopped::Failed(error_chain(error.as_ref())),
        Some(Err(message)) => Stopped::Panicked(message),
        None => Stopped::TimedOut,
    }
}

/// [`stop`] on a multi-threaded runtime: the future, not yet polled, runs as a task.
async fn stop_as_task(future: LifecycleFuture, timeout: Duration) -> Stopped {
    let mut task = tokio::spawn(future);
    match tokio::time::timeout(timeout, &mut task).await {
        Ok(Ok(Ok(()))) => Stopped::Done,
        Ok(Ok(Err(error))) => Stopped::Failed(error_chain(error.as_ref())),
        Ok(Err(join)) if join.is_panic() => {
            Stopped::Panicked(panic_message(join.into_panic().as_ref()))
        }
        Ok(Err(_)) => Stopped::Failed("the task was cancelled".to_owned()),
        Err(_) => {
            task.abort();
            Stopped::TimedOut
        }
    }
}

/// How the first poll of a lifecycle future ended.
enum FirstPoll<T> {
    /// It finished on its first poll.
    Ready(T),
    /// Its first poll panicked; the panic's message.
    Panicked(String),
    /// It waits: polled on, inline.
    Pending,
}

/// Poll `future` once, inline: called on a single-threaded runtime only.
///
/// Most lifecycles of the built-in drivers finish on their first poll, and a task (its
/// allocation, its scheduling, the timer of its timeout) is most of what starting or stopping
/// them would otherwise cost. Inline changes nothing on a single-threaded runtime: a task
/// spawned there runs on the same thread, and a `start` that blocks holds that thread either
/// way (the clock still finds it out). On a multi-threaded runtime the task is kept, and the
/// future goes to it unpolled: there the timeout fires on time while another thread is blocked
/// by a `start`, which an inline poll would prevent. A panic in the poll is caught, as a task's
/// would be.
async fn first_poll<F: Future>(mut future: Pin<&mut F>) -> FirstPoll<F::Output> {
    let polled = std::future::poll_fn(|cx| {
        Poll::Ready(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
            || future.as_mut().poll(cx),
        )))
    })
    .await;
    match polled {
        Ok(Poll::Ready(output)) => FirstPoll::Ready(output),
        Ok(Poll::Pending) => FirstPoll::Pending,
        Err(panic) => FirstPoll::Panicked(panic_message(panic.as_ref())),
    }
}

fn current_thread() -> bool {
    use tokio::runtime::{Handle, RuntimeFlavor};
    Handle::current().runtime_flavor() == RuntimeFlavor::CurrentThread
}

/// On a single-threaded runtime, poll a lifecycle future that waited on its first poll to its
/// end inline, each poll's panic caught, for at most `left`; `None` when the time ran out (the
/// caller drops the future: cancelled at its `await`, as an aborted task would be).
///
/// A task would run on this same thread, and `start`s and `stop`s are awaited one at a time, so
/// it would add nothing but its cost: its allocation (with the future moved into it), its
/// scheduling and its `JoinHandle`, paid at every start of a driver whose `start` waits
/// (`objectstore.fs` waits for a blocking thread), more than the rest of its start.
async fn rest_inline<F: Future>(
    mut future: Pin<&mut F>,
    left: Duration,
) -> Option<Result<F::Output, String>> {
    let guarded = std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic_message(panic.as_ref()))),
        }
    });
    tokio::time::timeout(left, guarded).await.ok()
}

/// How a `start` called by [`start`] ended.
pub(crate) enum Started {
    Done,
    /// `start` returned an error; `transient` is its kind when retrying may succeed.
    Failed {
        message: String,
        transient: Option<sandloom_sdk_infra::ErrorKind>,
    },
    Panicked(String),
    /// Cancelled at an `await` when the timeout fired.
    TimedOut,
    /// One poll of `start` held its thread past the timeout. `still_running` is its task when
    /// it had not ended after the wait: whoever holds it must stop the driver once it ends.
    Blocked {
        elapsed: Duration,
        still_running: Option<JoinHandle<Result<(), BoxError>>>,
    },
}

/// How far past the deadline a poll must run to count as blocking: a poll that merely
/// straddles the deadline ends within microseconds.
const BLOCKING_OVERRUN: Duration = Duration::from_millis(10);

/// Run `start` under `timeout`, clocking each poll of it: on a single-threaded runtime polled
/// inline, its first poll (see [`first_poll`]) then the rest ([`rest_inline`]); on a
/// multi-threaded one as a task ([`start_as_task`]).
///
/// A `start` waiting at an `await` is cancelled when the timeout fires. One that blocks its
/// thread cannot be: on a multi-threaded runtime the timeout fires on time, and the kernel then
/// waits up to `wait` for the blocked `start` to end, so that `stop` never runs beside a `start`
/// still running; on a single-threaded runtime the timeout cannot fire until `start` gives the
/// thread back. Either way the overrun is found by the clock and reported as blocking.
pub(crate) async fn start(
    lifecycle: &Arc<dyn ErasedLifecycle>,
    timeout: Duration,
    wait: Duration,
) -> Started {
    let future = Arc::clone(lifecycle).start_owned();
    if !current_thread() {
        return start_as_task(future, timeout, wait).await;
    }
    // Polled here to its end: held inline, it must not move once polled.
    let mut clocked = std::pin::pin!(Clocked {
        inner: future,
        clock: Clock::Own(PollClock::new()),
    });
    match first_poll(clocked.as_mut()).await {
        // It ended, but its one poll held the thread past the deadline.
        FirstPoll::Ready(_) | FirstPoll::Panicked(_) if clocked.clock.held_past(timeout) => {
            return Started::Blocked {
                elapsed: clocked.clock.elapsed(),
                still_running: None,
            };
        }
        FirstPoll::Ready(Ok(())) => return Started::Done,
        FirstPoll::Ready(Err(error)) => {
            return Started::Failed {
                message: error_chain(error.as_ref()),
                transient: crate::transient::transient_kind(error.as_ref()),
            };
        }
        FirstPoll::Panicked(message) => return Started::Panicked(message),
        FirstPoll::Pending => {}
    }
    // The rest is polled here too (see `rest_inline`), clocked the same way.
    let left = timeout.saturating_sub(clocked.clock.elapsed());
    let ended = rest_inline(clocked.as_mut(), left).await;
    // It ended, or the timeout fired, but its thread was held past the deadline.
    if clocked.clock.held_past(timeout) {
        return Started::Blocked {
            elapsed: clocked.clock.elapsed(),
            still_running: None,
        };
    }
    match ended {
        Some(Ok(Ok(()))) => Started::Done,
        Some(Ok(Err(error))) => Started::Failed {
            message: error_chain(error.as_ref()),
            transient: crate::transient::transient_kind(error.as_ref()),
        },
        Some(Err(message)) => Started::Panicked(message),
        None => Started::TimedOut,
    }
}

/// [`start`] on a multi-threaded runtime: the future, not yet polled, runs as a task, which
/// clocks its polls while this function reads the clock.
async fn start_as_task(future: LifecycleFuture, timeout: Duration, wait: Duration) -> Started {
    let clock = Arc::new(PollClock::new());
    let clocked = Clocked {
        inner: future,
        clock: Clock::Shared(Arc::clone(&clock)),
    };
    let left = timeout.saturating_sub(clock.elapsed());
    let mut task = tokio::spawn(clocked);
    match tokio::time::timeout(left, &mut task).await {
        // It ended, but the timeout could not fire: its thread was held past the deadline.
        Ok(_) if clock.held_past(timeout) => Started::Blocked {
            elapsed: clock.elapsed(),
            still_running: None,
        },
        Ok(Ok(Ok(()))) => Started::Done,
        Ok(Ok(Err(error))) => Started::Failed {
            message: error_chain(error.as_ref()),
            transient: crate::transient::transient_kind(error.as_ref()),
        },
        Ok(Err(join)) if join.is_panic() => {
            Started::Panicked(panic_message(join.into_panic().as_ref()))
        }
        Ok(Err(_)) => Started::Failed {
            message: "the task was cancelled".to_owned(),
            transient: None,
        },
        Err(_) => {
            task.abort();
            match tokio::time::timeout(wait, &mut task).await {
                Ok(_) if clock.held_past(timeout) => Started::Blocked {
                    elapsed: clock.elapsed(),
                    still_running: None,
                },
                Ok(_) => Started::TimedOut,
                // Not even cancelled: it still holds its thread.
                Err(_) => Started::Blocked {
                    elapsed: clock.elapsed(),
                    still_running: Some(task),
                },
            }
        }
    }
}

/// Stop `driver` once its `start`, still running in `task`, ends: in the background, since a
/// blocked thread cannot be hurried.
pub(crate) fn stop_when_started(
    task: JoinHandle<Result<(), BoxError>>,
    driver: Attempted,
    timeout: Duration,
) {
    tokio::spawn(async move {
        let _ = task.await;
        for problem in stop_all(vec![driver], timeout).await {
            tracing::error!(target: "sandloom", "{problem}");
        }
    });
}

/// When each poll of a future began and ended, in microseconds since the future was created.
struct PollClock {
    base: Instant,
    polling: AtomicBool,
    last_start: AtomicU64,
    last_end: AtomicU64,
}

impl PollClock {
    fn new() -> Self {
        Self {
            base: Instant::now(),
            polling: AtomicBool::new(false),
            last_start: AtomicU64::new(0),
            last_end: AtomicU64::new(0),
        }
    }

    fn elapsed(&self) -> Duration {
        self.base.elapsed()
    }

    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Whether the last poll began before `deadline` and ran (or is running) well past it.
    fn held_past(&self, deadline: Duration) -> bool {
        let deadline = u64::try_from(deadline.as_micros()).unwrap_or(u64::MAX);
        let overrun = u64::try_from(BLOCKING_OVERRUN.as_micros()).unwrap_or(u64::MAX);
        let start = self.last_start.load(Ordering::SeqCst);
        let end = if self.polling.load(Ordering::SeqCst) {
            self.now()
        } else {
            self.last_end.load(Ordering::SeqCst)
        };
        start < deadline && end >= deadline.saturating_add(overrun)
    }
}

/// A future whose polls are clocked.
#[pin_project::pin_project]
struct Clocked<F> {
    #[pin]
    inner: F,
    clock: Clock,
}

/// The clock of a [`Clocked`] future: its own when it is polled inline, shared with the
/// caller when it runs as a task. Sharing it on a single-threaded runtime, where every `start`
/// is polled inline, would cost each an allocation.
enum Clock {
    Own(PollClock),
    Shared(Arc<PollClock>),
}

impl std::ops::Deref for Clock {
    type Target = PollClock;

    fn deref(&self) -> &PollClock {
        match self {
            Self::Own(clock) => clock,
            Self::Shared(clock) => clock,
        }
    }
}

impl<F: Future> Future for Clocked<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let clock = &**this.clock;
        clock.last_start.store(clock.now(), Ordering::SeqCst);
        clock.polling.store(true, Ordering::SeqCst);
        let output = this.inner.poll(cx);
        clock.last_end.store(clock.now(), Ordering::SeqCst);
        clock.polling.store(false, Ordering::SeqCst);
        output
    }
}

/// A driver whose `start` was attempted.
///
/// Its names are shared, not copied: the capability and driver names are the linked entry's
/// (`&'static`), the instance's is one `Arc<str>` per instance, which its slot and health check
/// share. Three `String`s in each of those records were most of startup's allocations
/// (`BENCHMARKS.md`, issue 27).
pub(crate) struct Attempted {
    pub(crate) capability: &'static str,
    pub(crate) instance: Arc<str>,
    pub(crate) driver: &'static str,
    pub(crate) lifecycle: Arc<dyn ErasedLifecycle>,
}

/// Drivers whose start was attempted, stopped in reverse order by [`Attempts::stop_all`] — or,
/// if the owner is dropped first (startup cancelled, `Running` dropped without `shutdown`), by a
/// task spawned on the runtime, so nothing is left running either way.
pub(crate) struct Attempts {
    pub(crate) drivers: Vec<Attempted>,
    pub(crate) stop_timeout: Duration,
}

impl Attempts {
    pub(crate) async fn stop_all(&mut self) -> Vec<Problem> {
        stop_all(std::mem::take(&mut self.drivers), self.stop_timeout).await
    }
}

impl Drop for Attempts {
    fn drop(&mut self) {
        if self.drivers.is_empty() {
            return;
        }
        let drivers = std::mem::take(&mut self.drivers);
        let timeout = self.stop_timeout;
        tracing::warn!(
            target: "sandloom",
            drivers = drivers.len(),
            "started drivers dropped without `shutdown` (or startup cancelled); stopping them in the background"
        );
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                for problem in stop_all(drivers, timeout).await {
                    tracing::error!(target: "sandloom", "{problem}");
                }
            });
        }
    }
}

async fn stop_all(mut drivers: Vec<Attempted>, timeout: Duration) -> Vec<Problem> {
    let mut problems = Vec::new();
    while let Some(driver) = drivers.pop() {
        // Stopped without a drain (`Running` dropped, startup failed) or after one: nothing
        // enters any more, and nothing still pending waits on a driver that is going away.
        driver.lifecycle.begin_drain();
        driver.lifecycle.abandon();
        let reason = match stop(&driver.lifecycle, timeout).await {
            Stopped::Done => {
                tracing::debug!(target: "sandloom", capability = %driver.capability, instance = %driver.instance, "stopped");
                continue;
            }
            Stopped::Failed(message) => message,
            Stopped::Panicked(message) => format!("stop panicked: {message}"),
            Stopped::TimedOut => format!("stop did not finish within {} ms", timeout.as_millis()),
        };
        problems.push(Problem::StopFailed {
            capability: driver.capability.to_owned(),
            instance: driver.instance.to_string(),
            driver: driver.driver.to_owned(),
            reason,
        });
    }
    problems
}

/// Whether the current runtime can time things out. A runtime built without `enable_time`
/// panics on the first timer; probe once instead of crashing mid-startup. (The probe's panic
/// message is printed by the default hook: libraries do not replace global hooks.)
pub(crate) fn timers_enabled() -> bool {
    std::panic::catch_unwind(|| drop(tokio::time::sleep(Duration::ZERO))).is_ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Started, Stopped, start, stop};
    use crate::registry::{BoxError, BoxFuture, ErasedLifecycle, Health};

    /// A lifecycle whose `start` and `stop` wait once, then panic (or never end).
    struct WaitsThen {
        hang: bool,
    }

    impl WaitsThen {
        fn call(&self) -> BoxFuture<'_, Result<(), BoxError>> {
            let hang = self.hang;
            Box::pin(async move {
                tokio::task::yield_now().await;
                if hang {
                    std::future::pending::<()>().await;
                }
                panic!("after its first poll");
            })
        }
    }

    impl ErasedLifecycle for WaitsThen {
        fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
            self.call()
        }
        fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
            self.call()
        }
        fn health(&self) -> BoxFuture<'_, Health> {
            Box::pin(async { Health::Healthy })
        }
    }

    // On one thread the rest of a lifecycle call is polled inline, not as a task: what a task
    // gave (its panic caught, its time bounded) must hold all the same.
    #[tokio::test]
    async fn on_one_thread_a_panic_after_the_first_poll_is_caught_and_a_hang_times_out() {
        let panics: Arc<dyn ErasedLifecycle> = Arc::new(WaitsThen { hang: false });
        let second = Duration::from_secs(1);
        let started = start(&panics, second, second).await;
        assert!(
            matches!(&started, Started::Panicked(message) if message == "after its first poll"),
            "start"
        );
        let stopped = stop(&panics, second).await;
        assert!(
            matches!(&stopped, Stopped::Panicked(message) if message == "after its first poll"),
            "stop"
        );

        let hangs: Arc<dyn ErasedLifecycle> = Arc::new(WaitsThen { hang: true });
        let short = Duration::from_millis(50);
        assert!(matches!(
            start(&hangs, short, short).await,
            Started::TimedOut
        ));
        assert!(matches!(stop(&hangs, short).await, Stopped::TimedOut));
    }
}
