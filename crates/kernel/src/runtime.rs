//! Startup (all-or-nothing), health and shutdown (reverse start order).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use sandloom_sdk_infra::{Infra, Requirement, linked_requirements};

use crate::config::InfraConfig;
use crate::config::Location;
use crate::error::{Problem, ShutdownError, StartupError, UnusableReason};
use crate::lifecycle::{self, Attempted, Attempts, Outcome, error_chain, guarded, timers_enabled};
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
        if tokio::runtime::Handle::try_current().is_err() || !timers_enabled() {
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
                    built.push((config, spec.name, entry.package, driver));
                    continue;
                }
                Ok(Err(error)) => UnusableReason::BuildFailed {
                    message: error_chain(error.as_ref()),
                },
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

        // From here on, every driver whose start is attempted is in `attempts`: if this future
        // is dropped half-way (the caller gave up), its drop stops them.
        let mut attempts = Attempts {
            drivers: Vec::new(),
            stop_timeout: self.config.stop_timeout(),
        };
        let mut infra = Infra::builder();
        for (config, capability, package, driver) in built {
            let lifecycle: Arc<dyn ErasedLifecycle> = Arc::from(driver.lifecycle);
            // A failed or timed-out start may have acquired something; stop releases it too.
            attempts.drivers.push(Attempted {
                capability: config.capability.clone(),
                instance: config.instance.clone(),
                driver: config.driver.clone(),
                lifecycle: Arc::clone(&lifecycle),
            });
            let reason =
                match guarded(&lifecycle, timeout, |l| async move { l.start().await }).await {
                    Outcome::Done(()) => {
                        infra = infra.with_erased(capability, config.instance, driver.operations);
                        continue;
                    }
                    Outcome::Failed(message) => UnusableReason::StartFailed { message },
                    Outcome::Panicked(message) => UnusableReason::Panicked {
                        phase: "start",
                        message,
                    },
                    Outcome::TimedOut => UnusableReason::TimedOut { after: timeout },
                };
            problems.push(Problem::Unusable {
                capability: config.capability,
                instance: config.instance,
                driver: config.driver,
                package,
                reason,
            });
        }
        if !problems.is_empty() {
            problems.extend(attempts.stop_all().await);
            return Err(StartupError::new(problems));
        }

        let infra = match infra.build() {
            Ok(infra) => infra,
            Err(err) => {
                // Resolution keys instances by (capability, instance); a duplicate cannot get here.
                problems.push(Problem::config(
                    Location::Code,
                    err.to_string(),
                    "report this as a Sandloom bug",
                ));
                problems.extend(attempts.stop_all().await);
                return Err(StartupError::new(problems));
            }
        };
        report.trace();
        Ok(Running {
            infra: Arc::new(infra),
            attempts,
            report,
        })
    }
}

/// Started infrastructure. Hand [`infra`](Running::infra) to modules; call
/// [`shutdown`](Running::shutdown) before exiting. Dropped without `shutdown`, it stops the
/// drivers from a background task on the current runtime, and warns.
pub struct Running {
    infra: Arc<Infra>,
    attempts: Attempts,
    report: StartupReport,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("infra", &self.infra)
            .field("drivers", &self.attempts.drivers.len())
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

    /// Ask every driver for its health, in start order, each under the stop timeout.
    pub async fn health(&self) -> Vec<(String, Health)> {
        let mut out = Vec::with_capacity(self.attempts.drivers.len());
        for driver in &self.attempts.drivers {
            let health = lifecycle::health(&driver.lifecycle, self.attempts.stop_timeout).await;
            out.push((format!("{}.{}", driver.capability, driver.instance), health));
        }
        out
    }

    /// Stop every driver in reverse start order, each under the stop timeout. Drivers whose stop
    /// fails are reported; the others are still stopped.
    ///
    /// # Errors
    /// A [`ShutdownError`] of SANDLOOM-B030 problems for drivers that failed, panicked or timed
    /// out while stopping.
    pub async fn shutdown(mut self) -> Result<(), ShutdownError> {
        let problems = self.attempts.stop_all().await;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ShutdownError::new(problems))
        }
    }
}
