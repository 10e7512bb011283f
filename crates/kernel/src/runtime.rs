//! Startup (all-or-nothing), health and shutdown (reverse start order).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use sandloom_sdk_infra::{Infra, Requirement, linked_requirements};

use crate::config::InfraConfig;
use crate::error::{Problem, StartupError, UnusableReason};
use crate::link::LinkedDrivers;
use crate::panic_message;
use crate::registry::{self, ErasedLifecycle, Health};
use crate::report::{ReportLine, StartupReport};
use crate::resolve::{Inputs, PlannedInstance, resolve};

/// Reads `INFRA`, resolves the drivers it selects, and starts them.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "inline").unwrap();
/// // No driver crate is linked into this example, so startup refuses with SANDLOOM-B020.
/// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap_err();
/// assert_eq!(err.codes(), ["SANDLOOM-B020"]);
/// # }
/// ```
#[derive(Debug)]
pub struct Kernel {
    config: InfraConfig,
    linked: LinkedDrivers,
    requirements: Vec<Requirement>,
}

impl Kernel {
    /// A kernel for `config`, with the driver crates `linked` by
    /// [`link_drivers!`](crate::link_drivers). Every module requirement linked into the binary
    /// (declared with `sandloom_sdk_infra::requires!`) is checked.
    pub fn new(config: InfraConfig, linked: LinkedDrivers) -> Self {
        Self {
            config,
            linked,
            requirements: linked_requirements().to_vec(),
        }
    }

    /// Also check these requirements (for modules that declare them as values).
    #[must_use]
    pub fn require(mut self, requirements: &[Requirement]) -> Self {
        self.requirements.extend_from_slice(requirements);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &InfraConfig {
        &self.config
    }

    /// Dry run: resolve and validate everything — names, conflicts, contract versions, options,
    /// features, requirements, experimental use — without constructing or starting any driver.
    ///
    /// # Errors
    /// Every problem startup would report before constructing drivers.
    pub fn check(&self) -> Result<StartupReport, StartupError> {
        let planned = self.resolve()?;
        Ok(self.report(&planned))
    }

    fn resolve(&self) -> Result<Vec<PlannedInstance>, StartupError> {
        resolve(&Inputs {
            config: &self.config,
            drivers: registry::drivers(),
            specs: registry::capabilities(),
            requirements: &self.requirements,
            linked: &self.linked,
        })
        .map_err(StartupError::new)
    }

    fn report(&self, planned: &[PlannedInstance]) -> StartupReport {
        StartupReport {
            environment: self.config.environment(),
            origin: self.config.origin().to_owned(),
            lines: planned
                .iter()
                .map(|p| ReportLine {
                    capability: p.config.capability.clone(),
                    instance: p.config.instance.clone(),
                    driver: p.config.driver.clone(),
                    package: p.entry.package,
                    contract_version: p.entry.contract_version.clone(),
                    features: p.options.features.clone(),
                    stability: p.spec.stability,
                })
                .collect(),
        }
    }

    /// Resolve, construct and start every selected driver, in a fixed order (by capability,
    /// then instance). All or nothing: if anything fails, every driver whose start was attempted
    /// is stopped in reverse order, and the error lists every problem found.
    ///
    /// Each `start` runs under the start timeout and has its panics caught.
    ///
    /// # Errors
    /// A [`StartupError`] listing every problem, each with its code.
    pub async fn start(self) -> Result<Running, StartupError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StartupError::new(vec![Problem::NoRuntime]));
        }
        let planned = self.resolve()?;
        let report = self.report(&planned);
        let timeout = self.config.start_timeout();

        let mut built = Vec::new();
        let mut problems = Vec::new();
        for plan in planned {
            let PlannedInstance {
                config,
                spec,
                entry,
                options,
            } = plan;
            let failure = match catch_unwind(AssertUnwindSafe(|| (entry.build)(options))) {
                Ok(Ok(driver)) => {
                    built.push((config, spec.name, driver));
                    continue;
                }
                Ok(Err(error)) => UnusableReason::BuildFailed(error_chain(error.as_ref())),
                Err(payload) => UnusableReason::Panicked {
                    phase: "construction",
                    message: panic_message(payload.as_ref()),
                },
            };
            problems.push(Problem::Unusable {
                capability: config.capability,
                instance: config.instance,
                driver: config.driver,
                package: entry.package,
                reason: failure,
            });
        }
        if !problems.is_empty() {
            // Nothing was started; dropping the built drivers releases them.
            return Err(StartupError::new(problems));
        }

        let mut attempted: Vec<RunningDriver> = Vec::new();
        let mut infra = Infra::builder();
        for (config, capability, driver) in built {
            let outcome = AssertUnwindSafe(driver.lifecycle.start()).catch_unwind();
            let failure = match tokio::time::timeout(timeout, outcome).await {
                Ok(Ok(Ok(()))) => None,
                Ok(Ok(Err(error))) => {
                    Some(UnusableReason::StartFailed(error_chain(error.as_ref())))
                }
                Ok(Err(payload)) => Some(UnusableReason::Panicked {
                    phase: "start",
                    message: panic_message(payload.as_ref()),
                }),
                Err(_) => Some(UnusableReason::TimedOut { after: timeout }),
            };
            let package = report
                .lines
                .iter()
                .find(|l| l.capability == config.capability && l.instance == config.instance)
                .map_or("", |l| l.package);
            if let Some(reason) = failure {
                problems.push(Problem::Unusable {
                    capability: config.capability.clone(),
                    instance: config.instance.clone(),
                    driver: config.driver.clone(),
                    package,
                    reason,
                });
            } else {
                infra = infra.with_erased(capability, config.instance.clone(), driver.operations);
            }
            // A failed or timed-out start may have acquired something; stop releases it too.
            attempted.push(RunningDriver {
                capability: config.capability,
                instance: config.instance,
                driver: config.driver,
                lifecycle: driver.lifecycle,
            });
        }
        if !problems.is_empty() {
            let mut error = StartupError::new(problems);
            for problem in stop_all(&mut attempted, self.config.stop_timeout()).await {
                error.push(problem);
            }
            return Err(error);
        }

        let infra = infra.build().map_err(|err| {
            // Resolution keys instances by (capability, instance); a duplicate cannot get here.
            StartupError::new(vec![Problem::config(
                crate::config::Location::Code,
                err.to_string(),
                "report this as a Sandloom bug",
            )])
        })?;
        report.trace();
        Ok(Running {
            infra: Arc::new(infra),
            drivers: attempted,
            report,
            stop_timeout: self.config.stop_timeout(),
        })
    }
}

struct RunningDriver {
    capability: String,
    instance: String,
    driver: String,
    lifecycle: Box<dyn ErasedLifecycle>,
}

/// Started infrastructure. Hand [`infra`](Running::infra) to modules; call
/// [`shutdown`](Running::shutdown) before exiting.
pub struct Running {
    infra: Arc<Infra>,
    drivers: Vec<RunningDriver>,
    report: StartupReport,
    stop_timeout: Duration,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("infra", &self.infra)
            .field("drivers", &self.drivers.len())
            .finish_non_exhaustive()
    }
}

impl Running {
    /// The handle modules use.
    pub fn infra(&self) -> &Arc<Infra> {
        &self.infra
    }

    /// What was started.
    pub fn report(&self) -> &StartupReport {
        &self.report
    }

    /// Ask every driver for its health, in start order.
    pub async fn health(&self) -> Vec<(String, Health)> {
        let mut out = Vec::with_capacity(self.drivers.len());
        for driver in &self.drivers {
            let health = match tokio::time::timeout(
                self.stop_timeout,
                AssertUnwindSafe(driver.lifecycle.health()).catch_unwind(),
            )
            .await
            {
                Ok(Ok(health)) => health,
                Ok(Err(payload)) => Health::Unhealthy(format!(
                    "health check panicked: {}",
                    panic_message(payload.as_ref())
                )),
                Err(_) => Health::Unhealthy(format!(
                    "health check took over {} ms",
                    self.stop_timeout.as_millis()
                )),
            };
            out.push((format!("{}.{}", driver.capability, driver.instance), health));
        }
        out
    }

    /// Stop every driver in reverse start order, each under the stop timeout. Drivers whose stop
    /// fails are reported; the others are still stopped.
    ///
    /// # Errors
    /// SANDLOOM-B030 problems for drivers that failed, panicked or timed out while stopping.
    pub async fn shutdown(mut self) -> Result<(), StartupError> {
        let problems = stop_all(&mut self.drivers, self.stop_timeout).await;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StartupError::new(problems))
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.drivers.is_empty() {
            tracing::warn!(
                target: "sandloom",
                drivers = self.drivers.len(),
                "sandloom infrastructure dropped without `shutdown`; drivers were not stopped"
            );
        }
    }
}

async fn stop_all(drivers: &mut Vec<RunningDriver>, timeout: Duration) -> Vec<Problem> {
    let mut problems = Vec::new();
    while let Some(driver) = drivers.pop() {
        let outcome = AssertUnwindSafe(driver.lifecycle.stop()).catch_unwind();
        let reason = match tokio::time::timeout(timeout, outcome).await {
            Ok(Ok(Ok(()))) => {
                tracing::debug!(target: "sandloom", capability = %driver.capability, instance = %driver.instance, "stopped");
                continue;
            }
            Ok(Ok(Err(error))) => error_chain(error.as_ref()),
            Ok(Err(payload)) => format!("stop panicked: {}", panic_message(payload.as_ref())),
            Err(_) => format!("stop did not finish within {} ms", timeout.as_millis()),
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

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
