//! Calling driver lifecycles safely: each call runs as its own task, so a driver that blocks
//! its thread, panics or never finishes cannot stall or crash startup, and nothing whose start
//! was attempted is ever forgotten.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Problem;
use crate::panic_message;
use crate::registry::{BoxError, ErasedLifecycle, Health};

/// How a guarded call ended.
pub(crate) enum Outcome<T> {
    Done(T),
    Failed(String),
    Panicked(String),
    TimedOut,
}

/// Run `call(lifecycle)` as a task under `timeout`. On timeout the task is aborted (it stops at
/// its next await; a driver blocking a thread keeps that one thread until it returns).
pub(crate) async fn guarded<T, F, Fut>(
    lifecycle: &Arc<dyn ErasedLifecycle>,
    timeout: Duration,
    call: F,
) -> Outcome<T>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn ErasedLifecycle>) -> Fut,
    Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
{
    let mut task = tokio::spawn(call(Arc::clone(lifecycle)));
    match tokio::time::timeout(timeout, &mut task).await {
        Ok(Ok(Ok(value))) => Outcome::Done(value),
        Ok(Ok(Err(error))) => Outcome::Failed(error_chain(error.as_ref())),
        Ok(Err(join)) if join.is_panic() => {
            Outcome::Panicked(panic_message(join.into_panic().as_ref()))
        }
        Ok(Err(_)) => Outcome::Failed("the task was cancelled".to_owned()),
        Err(_) => {
            task.abort();
            Outcome::TimedOut
        }
    }
}

pub(crate) async fn health(lifecycle: &Arc<dyn ErasedLifecycle>, timeout: Duration) -> Health {
    match guarded(lifecycle, timeout, |l| async move { Ok(l.health().await) }).await {
        Outcome::Done(health) => health,
        Outcome::Failed(message) => Health::Unhealthy(message),
        Outcome::Panicked(message) => {
            Health::Unhealthy(format!("health check panicked: {message}"))
        }
        Outcome::TimedOut => {
            Health::Unhealthy(format!("health check took over {} ms", timeout.as_millis()))
        }
    }
}

/// A driver whose `start` was attempted.
pub(crate) struct Attempted {
    pub(crate) capability: String,
    pub(crate) instance: String,
    pub(crate) driver: String,
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
        let reason = match guarded(
            &driver.lifecycle,
            timeout,
            |l| async move { l.stop().await },
        )
        .await
        {
            Outcome::Done(()) => {
                tracing::debug!(target: "sandloom", capability = %driver.capability, instance = %driver.instance, "stopped");
                continue;
            }
            Outcome::Failed(message) => message,
            Outcome::Panicked(message) => format!("stop panicked: {message}"),
            Outcome::TimedOut => format!("stop did not finish within {} ms", timeout.as_millis()),
        };
        problems.push(Problem::StopFailed {
            capability: driver.capability,
            instance: driver.instance,
            driver: driver.driver,
            reason,
        });
    }
    problems
}

pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Whether the current runtime can time things out. A runtime built without `enable_time`
/// panics on the first timer; probe once instead of crashing mid-startup. (The probe's panic
/// message is printed by the default hook: libraries do not replace global hooks.)
pub(crate) fn timers_enabled() -> bool {
    std::panic::catch_unwind(|| drop(tokio::time::sleep(Duration::ZERO))).is_ok()
}
