//! Health and readiness: every driver's check bounded by its `health_timeout_ms`, the results
//! folded into one [`Readiness`], optionally probed in the background (`health_interval_ms`)
//! with the last result kept and every change of state logged.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinHandle;

use crate::error_text::panic_message;
use crate::registry::{ErasedLifecycle, Health};

/// Whether the application can serve: all of its instances' health, folded into one state.
///
/// The rule: **ready** when every instance is healthy (or none is configured), **degraded**
/// when at least one is degraded and none is unhealthy, **not ready** when at least one is
/// unhealthy. A degraded instance still works (its driver says so: slow, one replica down), so
/// an application that is degraded should keep receiving traffic: [`is_ready`](Self::is_ready)
/// is `true` for it, and a readiness probe should answer 200 and show the details.
///
/// ```
/// use sandloom_kernel::{Health, Readiness};
///
/// let all = |states: &[Health]| Readiness::of(states);
/// assert_eq!(all(&[]), Readiness::Ready);
/// assert_eq!(all(&[Health::Healthy, Health::Degraded("slow".into())]), Readiness::Degraded);
/// assert_eq!(
///     all(&[Health::Degraded("slow".into()), Health::Unhealthy("refused".into())]),
///     Readiness::NotReady
/// );
/// assert!(Readiness::Degraded.is_ready());
/// assert!(!Readiness::NotReady.is_ready());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Readiness {
    /// Every instance is healthy.
    Ready,
    /// Some instance is degraded, none is unhealthy: serving, with a problem worth a look.
    Degraded,
    /// Some instance is unhealthy.
    NotReady,
}

impl Readiness {
    /// The readiness of instances in these states.
    ///
    /// ```
    /// use sandloom_kernel::{Health, Readiness};
    /// assert_eq!(Readiness::of([&Health::Healthy, &Health::Healthy]), Readiness::Ready);
    /// ```
    pub fn of<'a>(states: impl IntoIterator<Item = &'a Health>) -> Self {
        states
            .into_iter()
            .fold(Self::Ready, |readiness, health| match (readiness, health) {
                (_, Health::Unhealthy(_)) | (Self::NotReady, _) => Self::NotReady,
                (_, Health::Degraded(_)) | (Self::Degraded, _) => Self::Degraded,
                (Self::Ready, Health::Healthy) => Self::Ready,
            })
    }

    /// Whether the application should receive traffic: ready or degraded.
    ///
    /// ```
    /// assert!(sandloom_kernel::Readiness::Ready.is_ready());
    /// ```
    pub fn is_ready(self) -> bool {
        !matches!(self, Self::NotReady)
    }

    /// A stable lowercase name: `ready`, `degraded`, `not_ready`.
    ///
    /// ```
    /// assert_eq!(sandloom_kernel::Readiness::NotReady.as_str(), "not_ready");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Degraded => "degraded",
            Self::NotReady => "not_ready",
        }
    }
}

impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One instance's health, as checked.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use sandloom_kernel::{InfraConfig, Kernel};
///
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// for checked in &running.readiness().await.instances {
///     println!("{} ({}): {:?}", checked.qualified_name(), checked.driver, checked.health);
/// }
/// running.shutdown().await.unwrap();
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstanceHealth {
    /// The capability (`cache`).
    pub capability: String,
    /// The instance (`default`).
    pub instance: String,
    /// The driver (`redis`).
    pub driver: String,
    /// What its check answered, or why it counts as unhealthy (a timeout, a panic).
    pub health: Health,
}

impl InstanceHealth {
    /// `capability.instance`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let config = sandloom_kernel::InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// # let running = sandloom_kernel::Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let names: Vec<String> = running.readiness().await.instances.iter().map(|i| i.qualified_name()).collect();
    /// assert!(names.is_empty()); // nothing is configured in this example
    /// # running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.capability, self.instance)
    }
}

/// The health of every instance, in start order, and the readiness they give.
///
/// Its `Display` is a short text for people and probes: the readiness on the first line, then
/// one line per instance.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use sandloom_kernel::{InfraConfig, Kernel, Readiness};
///
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// let report = running.readiness().await;
/// assert_eq!(report.readiness, Readiness::Ready);
/// assert_eq!(report.to_string(), "ready: 0 instances\n");
/// running.shutdown().await.unwrap();
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthReport {
    /// What the instances' health gives.
    pub readiness: Readiness,
    /// Each instance, in start order.
    pub instances: Vec<InstanceHealth>,
    /// When the checks ended.
    pub checked_at: SystemTime,
}

impl fmt::Display for HealthReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |wanted: fn(&Health) -> bool| {
            self.instances.iter().filter(|i| wanted(&i.health)).count()
        };
        let total = self.instances.len();
        let plural = if total == 1 { "" } else { "s" };
        match self.readiness {
            Readiness::Ready => writeln!(f, "ready: {total} instance{plural}")?,
            Readiness::Degraded => writeln!(
                f,
                "degraded: {} of {total} instance{plural} degraded",
                count(|h| matches!(h, Health::Degraded(_)))
            )?,
            Readiness::NotReady => writeln!(
                f,
                "not_ready: {} of {total} instance{plural} unhealthy",
                count(|h| matches!(h, Health::Unhealthy(_)))
            )?,
        }
        for checked in &self.instances {
            writeln!(
                f,
                "  {} ({}): {}",
                checked.qualified_name(),
                checked.driver,
                state(&checked.health)
            )?;
        }
        Ok(())
    }
}

fn state(health: &Health) -> String {
    match health {
        Health::Healthy => "healthy".to_owned(),
        Health::Degraded(why) => format!("degraded: {why}"),
        Health::Unhealthy(why) => format!("unhealthy: {why}"),
    }
}

fn state_name(health: &Health) -> &'static str {
    match health {
        Health::Healthy => "healthy",
        Health::Degraded(_) => "degraded",
        Health::Unhealthy(_) => "unhealthy",
    }
}

/// How far past its timeout a check must have held its thread to count as blocking.
const BLOCKING_OVERRUN: Duration = Duration::from_millis(10);
/// How long a check waits for the previous one, cut off at its timeout, to finish being
/// cancelled: a check parked at an `await` ends at once; one that blocks its thread does not.
const CANCEL_GRACE: Duration = Duration::from_millis(20);

/// One driver's health check.
pub(crate) struct Check {
    /// The names, shared with the driver's `Attempted` record (`lifecycle.rs`).
    pub(crate) capability: &'static str,
    pub(crate) instance: Arc<str>,
    pub(crate) driver: &'static str,
    pub(crate) lifecycle: Arc<dyn ErasedLifecycle>,
    /// `health_timeout_ms` of the instance.
    pub(crate) timeout: Duration,
    /// A previous check cut off at the timeout, until it has ended.
    cut_off: Mutex<Option<JoinHandle<Health>>>,
}

impl Check {
    pub(crate) fn new(
        (capability, instance, driver): (&'static str, Arc<str>, &'static str),
        lifecycle: Arc<dyn ErasedLifecycle>,
        timeout: Duration,
    ) -> Self {
        Self {
            capability,
            instance,
            driver,
            lifecycle,
            timeout,
            cut_off: Mutex::new(None),
        }
    }

    /// Run the driver's `health` as a task under the timeout.
    ///
    /// A check waiting at an `await` is cancelled when the timeout fires. One that blocks its
    /// thread cannot be: on a multi-threaded runtime the timeout still fires on time (the check
    /// is unhealthy, naming the timeout) and the blocked task keeps its worker thread until it
    /// returns, so no new check of that driver is started before then (each answers unhealthy
    /// at once, saying so) and blocked checks cannot pile up; on a single-threaded runtime the
    /// timeout cannot fire until the check gives the thread back, and the check then counts as
    /// unhealthy because it overran.
    async fn run(&self) -> Health {
        let previous = self
            .cut_off
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut previous) = previous
            && !previous.is_finished()
            && tokio::time::timeout(CANCEL_GRACE, &mut previous)
                .await
                .is_err()
        {
            *self.cut_off.lock().unwrap_or_else(PoisonError::into_inner) = Some(previous);
            return Health::Unhealthy(format!(
                "the previous health check, cut off at the {} ms `health_timeout_ms`, still holds its thread: `health` blocks instead of awaiting, and is not called again until it returns",
                self.timeout.as_millis()
            ));
        }
        let began = Instant::now();
        let lifecycle = Arc::clone(&self.lifecycle);
        let mut task = tokio::spawn(async move { lifecycle.health().await });
        match tokio::time::timeout(self.timeout, &mut task).await {
            Ok(_) if began.elapsed() >= self.timeout + BLOCKING_OVERRUN => {
                Health::Unhealthy(format!(
                    "health check took {} ms, over the {} ms `health_timeout_ms`: it held its thread, so the timeout could not cut it off",
                    began.elapsed().as_millis(),
                    self.timeout.as_millis()
                ))
            }
            Ok(Ok(health)) => health,
            Ok(Err(join)) if join.is_panic() => Health::Unhealthy(format!(
                "health check panicked: {}",
                panic_message(join.into_panic().as_ref())
            )),
            Ok(Err(_)) => Health::Unhealthy("health check was cancelled".to_owned()),
            Err(_) => {
                task.abort();
                *self.cut_off.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
                Health::Unhealthy(format!(
                    "health check did not answer within {} ms (`health_timeout_ms`)",
                    self.timeout.as_millis()
                ))
            }
        }
    }
}

/// Every started driver's check, and what they last answered.
pub(crate) struct Checks {
    checks: Vec<Check>,
    last: Mutex<Last>,
}

#[derive(Default)]
struct Last {
    report: Option<HealthReport>,
    readiness: Option<Readiness>,
}

impl Checks {
    pub(crate) fn new(checks: Vec<Check>) -> Self {
        Self {
            checks,
            last: Mutex::new(Last::default()),
        }
    }

    /// Check every driver at once, each under its own timeout; keep the result, logging every
    /// change of state.
    pub(crate) async fn run(&self) -> HealthReport {
        let states = futures_util::future::join_all(self.checks.iter().map(Check::run)).await;
        let instances: Vec<InstanceHealth> = self
            .checks
            .iter()
            .zip(states)
            .map(|(check, health)| InstanceHealth {
                capability: check.capability.to_owned(),
                instance: check.instance.to_string(),
                driver: check.driver.to_owned(),
                health,
            })
            .collect();
        let report = HealthReport {
            readiness: Readiness::of(instances.iter().map(|i| &i.health)),
            instances,
            checked_at: SystemTime::now(),
        };
        self.keep(&report);
        report
    }

    /// The last result, without checking.
    pub(crate) fn last(&self) -> Option<HealthReport> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .report
            .clone()
    }

    fn keep(&self, report: &HealthReport) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        for (index, now) in report.instances.iter().enumerate() {
            let before = last
                .report
                .as_ref()
                .and_then(|r| r.instances.get(index))
                .map(|i| &i.health);
            if before.map(state_name) == Some(state_name(&now.health)) {
                continue;
            }
            log_change(now, before.map_or("unknown", state_name));
        }
        if last.readiness != Some(report.readiness) {
            tracing::info!(
                target: "sandloom",
                from = last.readiness.map_or("unknown", Readiness::as_str),
                to = report.readiness.as_str(),
                "readiness changed"
            );
        }
        last.readiness = Some(report.readiness);
        last.report = Some(report.clone());
    }
}

fn log_change(now: &InstanceHealth, from: &'static str) {
    let (capability, instance, driver) = (&now.capability, &now.instance, &now.driver);
    let to = state_name(&now.health);
    match &now.health {
        Health::Healthy => tracing::info!(
            target: "sandloom", %capability, %instance, %driver, from, to, "health changed"
        ),
        Health::Degraded(reason) => tracing::warn!(
            target: "sandloom", %capability, %instance, %driver, from, to, %reason, "health changed"
        ),
        Health::Unhealthy(reason) => tracing::error!(
            target: "sandloom", %capability, %instance, %driver, from, to, %reason, "health changed"
        ),
    }
}

/// The background task probing health every interval; aborted when dropped.
pub(crate) struct Prober {
    task: JoinHandle<()>,
}

impl Prober {
    /// Probe `checks` now, then every `interval` after the previous probe ended.
    pub(crate) fn spawn(checks: Arc<Checks>, interval: Duration) -> Self {
        let task = tokio::spawn(async move {
            loop {
                checks.run().await;
                tokio::time::sleep(interval).await;
            }
        });
        Self { task }
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::{Health, Readiness};

    #[test]
    fn readiness_of_every_combination() {
        let healthy = Health::Healthy;
        let degraded = Health::Degraded("slow".into());
        let unhealthy = Health::Unhealthy("down".into());
        for (states, expected) in [
            (vec![], Readiness::Ready),
            (vec![&healthy], Readiness::Ready),
            (vec![&healthy, &healthy], Readiness::Ready),
            (vec![&degraded], Readiness::Degraded),
            (vec![&healthy, &degraded], Readiness::Degraded),
            (vec![&degraded, &healthy], Readiness::Degraded),
            (vec![&unhealthy], Readiness::NotReady),
            (vec![&healthy, &unhealthy], Readiness::NotReady),
            (vec![&unhealthy, &healthy], Readiness::NotReady),
            (vec![&degraded, &unhealthy], Readiness::NotReady),
            (vec![&unhealthy, &degraded], Readiness::NotReady),
            (vec![&healthy, &degraded, &unhealthy], Readiness::NotReady),
        ] {
            assert_eq!(
                Readiness::of(states.iter().copied()),
                expected,
                "{states:?}"
            );
        }
    }
}
