//! A driver whose `start` blocks its thread (here `std::thread::sleep`, as a blocking client
//! would) is reported as blocking, with the time it took and the fix, on either runtime flavor;
//! and it is stopped only once its `start` has given the thread back, so nothing is left
//! running. The entry is made by hand, as driverkit's `register_driver!` would make it.

mod support;

use std::time::Duration;

use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, DRIVERS, DriverEntry, ErasedLifecycle,
    ParsedOptions,
};
use sandloom_kernel::{Health, InfraConfig, Kernel, Problem, UnusableReason};
use support::{events, record};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Names this instance in the event log.
    id: String,
    /// How long `start` blocks its thread.
    block_ms: u64,
}

struct Blocking {
    id: String,
    block: Duration,
}

impl ErasedLifecycle for Blocking {
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move {
            record(&self.id, "start");
            std::thread::sleep(self.block); // the bug: blocking the runtime's thread
            record(&self.id, "started");
            Ok(())
        })
    }

    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move {
            record(&self.id, "stop");
            Ok(())
        })
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(async { Health::Healthy })
    }
}

fn build(parsed: ParsedOptions, _: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
    support::build_with(parsed, |options: Options| Blocking {
        id: options.id,
        block: Duration::from_millis(options.block_ms),
    })
}

#[distributed_slice(DRIVERS)]
#[linkme(crate = sandloom_kernel::__private::linkme)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static BLOCKING: DriverEntry =
    support::cache_entry::<Options>("blocking", "blocking-driver", build);

/// Start one `cache.blocking` instance whose `start` blocks for `block_ms`; return the reason
/// it was refused.
async fn refused(id: &str, block_ms: u64, stop_timeout_ms: u64) -> (UnusableReason, Problem) {
    let text = format!(
        "start_timeout_ms = 100\nstop_timeout_ms = {stop_timeout_ms}\n[cache.default]\ndriver = \"blocking\"\nid = \"{id}\"\nblock_ms = {block_ms}\n"
    );
    let config = InfraConfig::from_toml_str(&text, "infra.toml").unwrap();
    let Err(err) = Kernel::new(config, sandloom_kernel::link_drivers!())
        .start()
        .await
    else {
        panic!("a start that blocks past its timeout must be refused")
    };
    let [problem] = err.problems() else {
        panic!("{err}")
    };
    let Problem::Unusable { reason, .. } = problem else {
        panic!("{err}")
    };
    (reason.clone(), problem.clone())
}

fn assert_blocked_and_stopped_after_it_returned(
    id: &str,
    reason: &UnusableReason,
    problem: &Problem,
) {
    let UnusableReason::BlockedThread {
        timeout,
        elapsed,
        ended,
        ..
    } = reason
    else {
        panic!("{problem}")
    };
    assert!(*ended, "{problem}");
    assert_eq!(*timeout, Duration::from_millis(100));
    assert!(*elapsed >= Duration::from_millis(400), "{problem}");
    let description = problem.description();
    assert!(
        description.contains(&format!(
            "its `start` blocked its thread past the 100 ms start timeout: it held the thread until {} ms",
            elapsed.as_millis()
        )),
        "{description}"
    );
    assert_eq!(
        problem.action(),
        "`start` of `cache.blocking` must never block its thread: await async I/O, or move blocking work into `tokio::task::spawn_blocking`. If `blocking-driver` is not yours, report this to its maintainers, and meanwhile select another driver for `cache.default`"
    );
    // All or nothing, and never `stop` beside a `start` that is still running.
    assert_eq!(events(id), ["start", "started", "stop"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_start_on_a_multi_threaded_runtime_is_named_and_stopped_after_it_returns() {
    let (reason, problem) = refused("multi", 400, 10_000).await;
    assert_blocked_and_stopped_after_it_returned("multi", &reason, &problem);
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_start_on_a_single_threaded_runtime_is_not_reported_as_a_success() {
    // The timeout cannot fire while the only thread is blocked: `start` returns `Ok` late.
    let (reason, problem) = refused("single", 400, 10_000).await;
    assert_blocked_and_stopped_after_it_returned("single", &reason, &problem);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_still_blocking_after_the_wait_is_stopped_once_it_returns() {
    let (reason, problem) = refused("late", 800, 100).await;
    let UnusableReason::BlockedThread { ended, .. } = reason else {
        panic!("{problem}")
    };
    assert!(!ended, "{problem}");
    assert!(
        problem
            .description()
            .contains("so the driver will be stopped in the background when `start` returns"),
        "{problem}"
    );
    // Generous bound: the background stop follows the end of `start`.
    for _ in 0..200 {
        if events("late").iter().any(|event| event == "stop") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(events("late"), ["start", "started", "stop"]);
}
