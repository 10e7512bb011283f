//! Startup (all-or-nothing), health and shutdown (reverse start order).

use std::sync::Arc;

use sandloom_sdk_infra::secrets::Secrets;
use sandloom_sdk_infra::{Infra, InfraBuilder, Requirement, linked_requirements};

use crate::config::InfraConfig;
use crate::config::Location;
use crate::config::order_by_location;
use crate::construct::construct;
use crate::error::StartAttempts;
use crate::error::{Problem, ShutdownError, StartupError, UnusableReason};
use crate::health::{HealthReport, Prober};
use crate::lifecycle::{self, Attempted, Attempts, Started, timers_enabled};
use crate::link::LinkedDrivers;
use crate::references::Stores;
use crate::registry::{self, BuildContext, ErasedLifecycle, Health};
use crate::reload::{Live, Shared, Slot, health_checks};
use crate::report::{Line, ReportLine, ReportParts, StartupReport};
use crate::resolve::{Inputs, InstanceNames, PlannedInstance, resolve, unusable};
use crate::rotation;
use crate::wait;

mod waves;

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
    /// Secrets watched for rotation besides those references use (`Kernel::watch_secret`,
    /// in `rotation/mod.rs`).
    pub(crate) watched: Vec<crate::references::uses::SecretUse>,
}

impl Kernel {
    /// A kernel for `config`, with the driver crates `linked` by
    /// [`link_drivers!`](crate::link_drivers). Every module requirement linked into the binary
    /// (declared with `sandloom_sdk_infra::requires!`) is checked.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let kernel = Kernel::new(InfraConfig::embedded_defaults(), sandloom_kernel::link_drivers!());
    /// assert_eq!(kernel.config().origin(), "embedded defaults");
    /// ```
    pub fn new(config: InfraConfig, linked: LinkedDrivers) -> Self {
        Self {
            config,
            linked,
            requirements: linked_requirements().to_vec(),
            watched: Vec::new(),
        }
    }

    /// Also check these requirements (for modules that declare them as values).
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    /// use sandloom_sdk_infra::{cache, Requirement, CACHE};
    ///
    /// const SESSIONS: Requirement = Requirement::new(&CACHE, "sessions", &[cache::TTL], "billing");
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let kernel = Kernel::new(config, sandloom_kernel::link_drivers!()).require(&[SESSIONS]);
    /// let err = kernel.check().unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B020"]);
    /// assert!(err.to_string().contains("module `billing` requires `cache.sessions`"));
    /// ```
    #[must_use]
    pub fn require(mut self, requirements: &[Requirement]) -> Self {
        self.requirements.extend_from_slice(requirements);
        self
    }

    /// The configuration.
    ///
    /// ```
    /// use sandloom_kernel::{Environment, InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::embedded_defaults().with_environment(Environment::Test);
    /// let kernel = Kernel::new(config, sandloom_kernel::link_drivers!());
    /// assert_eq!(kernel.config().environment(), Environment::Test);
    /// ```
    pub fn config(&self) -> &InfraConfig {
        &self.config
    }

    /// Dry run: resolve and validate everything — names, conflicts, contract versions, options,
    /// features, requirements, experimental use — without constructing or starting any driver.
    /// It needs no runtime.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("[cach.default]\ndriver = \"memory\"", "infra.toml").unwrap();
    /// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// assert!(err.to_string().contains("unknown capability `cach` (did you mean `cache`?)"));
    /// // A dry run reports what it found; it refused nothing.
    /// assert!(err.to_string().starts_with("Sandloom check (a dry run; nothing was started): 1 problem found."));
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let report = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap();
    /// assert!(report.lines.is_empty());
    /// ```
    ///
    /// # Errors
    /// Every problem startup would report before constructing drivers — those the
    /// configuration kept while it was read ([`InfraConfig::problems`]) included — ordered by
    /// location.
    pub fn check(&self) -> Result<StartupReport, StartupError> {
        let planned = self.resolve().map_err(StartupError::check)?;
        Ok(self.report(&planned))
    }

    fn resolve(&self) -> Result<Vec<PlannedInstance<'_>>, Vec<Problem>> {
        let resolved = resolve(&Inputs {
            config: &self.config,
            drivers: registry::drivers(),
            specs: registry::capabilities(),
            requirements: &self.requirements,
            linked: &self.linked,
        });
        if self.config.instances().all(|i| i.references.is_empty()) {
            return resolved;
        }
        let mut problems = crate::references::judge(&self.config, registry::drivers());
        match resolved {
            Ok(planned) if problems.is_empty() => return Ok(planned),
            Ok(_) => {}
            Err(found) => problems.extend(found),
        }
        order_by_location(&mut problems, &self.config);
        Err(problems)
    }

    fn report(&self, planned: &[PlannedInstance<'_>]) -> StartupReport {
        StartupReport {
            environment: self.config.environment(),
            origin: self.config.origin().to_owned(),
            lines: planned
                .iter()
                .map(|p| ReportLine {
                    capability: p.config.capability.to_owned(),
                    instance: p.config.instance.to_owned(),
                    driver: p.config.driver.to_owned(),
                    package: p.entry.package,
                    contract_version: p.entry.contract_version.clone(),
                    features: p.options.features.clone(),
                    stability: p.spec.stability,
                    start_attempts: 0,
                })
                .collect(),
        }
    }

    /// The report of a startup, empty: its lines are added as instances are planned.
    fn lines(&self) -> ReportParts {
        ReportParts {
            environment: self.config.environment(),
            origin: std::sync::Arc::clone(&self.config.origin),
            lines: Vec::new(),
        }
    }

    /// The report's lines for `planned`, as startup keeps them ([`Line`]). Their features are
    /// moved in when each instance is built (`start_wave`), rather than copied here.
    fn lines_of<'p>(planned: &'p [PlannedInstance<'_>]) -> impl Iterator<Item = Line> + 'p {
        planned.iter().map(|p| Line {
            entry: p.entry,
            stability: p.spec.stability,
            instance: Arc::from(p.config.instance),
            features: Vec::new(),
            start_attempts: 0,
        })
    }

    /// Resolve, construct and start every selected driver, in a fixed order (by capability,
    /// then instance). All or nothing: if anything fails, every driver whose start was attempted
    /// is stopped in reverse order, and the error lists every problem found, ordered by
    /// location.
    ///
    /// Each `start` runs as its own task under the start timeout and has its panics caught. A
    /// `start` that blocks its thread past the timeout cannot be cancelled: startup waits for it
    /// (up to the stop timeout) before stopping it, reports it as blocking with the time it
    /// took, and, if it is still running then, stops it in the background once it ends.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // This example configures nothing and links no driver crate; see the crate docs for an
    /// // application's `main`.
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// assert!(running.report().lines.is_empty());
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    ///
    /// Outside a Tokio runtime, `start` refuses with SANDLOOM-B001 instead of panicking:
    ///
    /// ```
    /// # use sandloom_kernel::{InfraConfig, Kernel};
    /// # fn block_on<F: Future>(future: F) -> F::Output { // this future does not wait
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     match std::pin::pin!(future).poll(&mut cx) {
    /// #         std::task::Poll::Ready(output) => output,
    /// #         std::task::Poll::Pending => unreachable!(),
    /// #     }
    /// # }
    /// let kernel = Kernel::new(InfraConfig::embedded_defaults(), sandloom_kernel::link_drivers!());
    /// let err = block_on(kernel.start()).unwrap_err(); // a bare executor, not Tokio
    /// assert_eq!(err.codes(), ["SANDLOOM-B001"]);
    /// ```
    ///
    /// # Errors
    /// A [`StartupError`] listing every problem, each with its code.
    pub async fn start(self) -> Result<Running, StartupError> {
        if tokio::runtime::Handle::try_current().is_err() || !timers_enabled() {
            return Err(StartupError::new(vec![Problem::NoRuntime]));
        }
        let mut report = self.lines();
        // From here on, every driver whose start is attempted is in `attempts`: if this future
        // is dropped half-way (the caller gave up), its drop stops them.
        let mut attempts = Attempts {
            drivers: Vec::new(),
            stop_timeout: self.config.stop_timeout(),
        };
        let mut slots = Vec::new();
        let infra = if self.config.instances().any(|i| !i.references.is_empty()) {
            // The stores start first, and their values are read into the options of the rest.
            // Boxed: its future is larger than the one wave's below (2.3 KB against 1.6 KB),
            // and held inline it made every start's future as large, moved by whoever awaits
            // it; an allocation is little beside reading the secrets.
            Box::pin(self.start_in_waves(
                &mut report.lines,
                &mut attempts,
                &mut slots,
                waves::Last::Start,
            ))
            .await?
        } else {
            let planned = self.resolve().map_err(StartupError::new)?;
            report.lines.extend(Self::lines_of(&planned));
            let wave = Wave {
                lines: &mut report.lines,
                attempts: &mut attempts,
                stores: None,
                slots: &mut slots,
            };
            self.start_wave(planned, wave, Infra::builder())
                .await
                .map_err(StartupError::new)?
        };
        let mut problems = Vec::new();
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
        // The health checks are made when first needed: by the probe, if there is one.
        let checks = self
            .config
            .health_interval()
            .map(|_| Arc::new(health_checks(&self.config, &attempts)));
        let prober = self
            .config
            .health_interval()
            .zip(checks.as_ref())
            .map(|(interval, checks)| Prober::spawn(Arc::clone(checks), interval));
        // Every instance is up: from here on a change of a used secret is a rotation.
        let infra = Arc::new(infra);
        let rotation = rotation::Follow::start(
            Arc::clone(&infra),
            self.watched,
            &self.config,
            rotation::store_features(
                report
                    .lines
                    .iter()
                    .map(|l| (l.entry.capability, &*l.instance, &l.features[..])),
            ),
            rotation::Timing::default(),
        );
        Ok(Running {
            infra,
            rotations: Arc::clone(&rotation.rotations),
            report: std::sync::OnceLock::new(),
            lines: report,
            shared: Arc::new(Shared {
                rotation,
                linked: self.linked,
                requirements: self.requirements,
                turn: tokio::sync::Mutex::new(false),
                live: std::sync::Mutex::new(Live {
                    config: self.config,
                    attempts,
                    slots,
                    checks,
                    prober,
                    last: None,
                }),
            }),
        })
    }
}

/// What one wave of startup adds to: the report, the drivers attempted (of every wave), and
/// the stores started so far (when later waves read from them).
struct Wave<'w> {
    lines: &'w mut Vec<Line>,
    attempts: &'w mut Attempts,
    stores: Option<&'w mut Stores>,
    /// The routes of the instances started, for `Running::reload`.
    slots: &'w mut Vec<Slot>,
}

impl Kernel {
    /// Construct every planned instance, then start each in order, adding them to `infra`. A
    /// `secrets` instance started is kept in the wave's stores. When anything fails, every
    /// driver attempted (in this wave or before) is stopped, in reverse order, and the problems
    /// are returned, ordered by location.
    async fn start_wave(
        &self,
        planned: Vec<PlannedInstance<'_>>,
        wave: Wave<'_>,
        mut infra: InfraBuilder,
    ) -> Result<InfraBuilder, Vec<Problem>> {
        let Wave {
            lines,
            attempts,
            mut stores,
            slots,
        } = wave;
        let timeout = self.config.start_timeout();
        // Each sized once: growing them was a few allocations per start.
        let mut built = Vec::with_capacity(planned.len());
        attempts.drivers.reserve(planned.len());
        slots.reserve(planned.len());
        let mut problems = Vec::new();
        for plan in planned {
            let PlannedInstance {
                config,
                spec,
                entry,
                mut options,
            } = plan;
            // The instance's name, made once for its report line: its records and its gate's
            // telemetry share it.
            let line = lines.iter().position(|line| {
                line.entry.capability == config.capability && *line.instance == *config.instance
            });
            let instance: Arc<str> = match line {
                Some(index) => Arc::clone(&lines[index].instance),
                None => Arc::from(config.instance),
            };
            // Its features go to the gate, then to its report line: moved, not copied.
            let features = std::mem::take(&mut options.features);
            let context = BuildContext {
                instance: &instance,
                features: &features,
                telemetry: config.telemetry,
            };
            match construct(entry.build, options, &context) {
                Ok(driver) => {
                    if let Some(index) = line {
                        lines[index].features = features;
                    }
                    built.push((config, spec.name, entry, driver, line, instance));
                }
                Err(failure) => problems.push(unusable(&config, entry, failure)),
            }
        }
        if !problems.is_empty() {
            // Nothing of this wave was started; dropping the built drivers releases them.
            problems.extend(attempts.stop_all().await);
            return Err(problems);
        }
        for (config, capability, entry, driver, line, instance) in built {
            let lifecycle: Arc<dyn ErasedLifecycle> = driver.lifecycle;
            // A failed or timed-out start may have acquired something; stop releases it too.
            attempts.drivers.push(Attempted {
                capability: entry.capability,
                instance: Arc::clone(&instance),
                driver: entry.name,
                lifecycle: Arc::clone(&lifecycle),
            });
            let (started, tried) = self.start_waiting(&lifecycle, &config).await;
            // Its report line gets the number of attempts.
            if let Some(index) = line {
                lines[index].start_attempts = tried.count;
            }
            let Some(reason) = failure(started, timeout, tried, attempts) else {
                if let Some(stores) = stores.as_deref_mut()
                    && let Some(secrets) = driver.operations.downcast_ref::<Arc<dyn Secrets>>()
                {
                    stores.insert(config.instance.to_owned(), Arc::clone(secrets));
                }
                infra =
                    infra.with_erased_shared(capability, Arc::clone(&instance), driver.operations);
                slots.push(Slot {
                    capability: entry.capability,
                    instance,
                    route: driver.route,
                    version: 1,
                    serving: true,
                });
                continue;
            };
            problems.push(unusable(&config, entry, reason));
        }
        if !problems.is_empty() {
            problems.extend(attempts.stop_all().await);
            order_by_location(&mut problems, &self.config);
            return Err(problems);
        }
        Ok(infra)
    }
}

impl Kernel {
    /// Start one driver; while it fails with a transient error, start it again until its
    /// `start_wait_ms` is spent (`wait.rs`).
    async fn start_waiting(
        &self,
        lifecycle: &Arc<dyn ErasedLifecycle>,
        names: &InstanceNames<'_>,
    ) -> (Started, StartAttempts) {
        let wait = self
            .config
            .instance(names.capability, names.instance)
            .map_or(self.config.start_wait(), |i| i.start_wait(&self.config));
        let starting = wait::Starting {
            capability: names.capability,
            instance: names.instance,
            driver: names.driver,
        };
        let bounds = (self.config.start_timeout(), self.config.stop_timeout());
        wait::start(lifecycle, &starting, bounds, wait).await
    }
}

/// Why a `start` that was just attempted (the last of `attempts`) failed, or `None` if it
/// succeeded.
pub(crate) fn failure(
    started: Started,
    timeout: std::time::Duration,
    tried: StartAttempts,
    attempts: &mut Attempts,
) -> Option<UnusableReason> {
    Some(match started {
        Started::Done => return None,
        Started::Failed { message, .. } => UnusableReason::StartFailed {
            message,
            attempts: tried,
        },
        Started::Panicked(message) => UnusableReason::Panicked {
            phase: "start",
            message,
        },
        Started::TimedOut => UnusableReason::TimedOut {
            after: timeout,
            attempts: tried,
        },
        Started::Blocked {
            elapsed,
            still_running,
        } => {
            let ended = still_running.is_none();
            if let Some(task) = still_running {
                // `stop` must not run beside a `start` that is still running: the driver is
                // stopped once it ends, not with the others.
                if let Some(attempted) = attempts.drivers.pop() {
                    lifecycle::stop_when_started(task, attempted, attempts.stop_timeout);
                }
            }
            UnusableReason::BlockedThread {
                timeout,
                elapsed,
                ended,
            }
        }
    })
}

/// Started infrastructure. Hand [`infra`](Running::infra) to modules; call
/// [`shutdown`](Running::shutdown) before exiting. Dropped without `shutdown`, it stops the
/// drivers from a background task on the current runtime, and warns.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel, Running};
///
/// async fn serve(running: &Running) {
///     let infra = running.infra();
///     // ... hand `infra` to modules, serve requests ...
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// serve(&running).await;
/// running.shutdown().await.unwrap();
/// # }
/// ```
pub struct Running {
    infra: Arc<Infra>,
    /// What the rotation watchers (in `shared`, which reloads restart) found (`Running::secret_rotations`, in `rotation/mod.rs`).
    pub(crate) rotations: Arc<rotation::Rotations>,
    /// What was started, made from `lines` when first asked for ([`Running::report`]).
    report: std::sync::OnceLock<StartupReport>,
    lines: ReportParts,
    /// The running drivers, their routes and health checks, shared with
    /// [`Reloader`](crate::reload::Reloader)s.
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("infra", &self.infra)
            .field("drivers", &self.shared.live().attempts.drivers.len())
            .finish_non_exhaustive()
    }
}

impl Running {
    /// The handle modules use. Clone the `Arc` to hand it to modules and spawned tasks.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let infra = Arc::clone(running.infra());
    /// let worker = tokio::spawn(async move { infra.instances().count() });
    /// assert_eq!(worker.await.unwrap(), 0); // nothing is configured in this example
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn infra(&self) -> &Arc<Infra> {
        &self.infra
    }

    /// What was started.
    ///
    /// ```
    /// use sandloom_kernel::{Environment, InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// println!("{}", running.report()); // a table: instance, driver, package, contract, features
    /// assert_eq!(running.report().environment, Environment::Development);
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn report(&self) -> &StartupReport {
        self.report.get_or_init(|| self.lines.report())
    }

    /// Ask every driver for its health, each under its `health_timeout_ms` (all at once), and
    /// list the answers in start order. A check that does not answer in time is
    /// [`Health::Unhealthy`], naming the timeout; one that panics is unhealthy too. See
    /// [`readiness`](Self::readiness) for the same with the aggregate readiness.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let unhealthy: Vec<String> = running
    ///     .health()
    ///     .await
    ///     .into_iter()
    ///     .filter(|(_, health)| !health.is_healthy())
    ///     .map(|(instance, health)| format!("{instance}: {health:?}"))
    ///     .collect();
    /// assert!(unhealthy.is_empty());
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub async fn health(&self) -> Vec<(String, Health)> {
        self.readiness()
            .await
            .instances
            .into_iter()
            .map(|checked| (checked.qualified_name(), checked.health))
            .collect()
    }

    /// Check every driver now, as [`health`](Self::health), and fold the answers into a
    /// [`Readiness`](crate::Readiness): ready when all are healthy, degraded when some are
    /// degraded and none is unhealthy, not ready when any is unhealthy. The result is also kept for
    /// [`last_health`](Self::last_health), and every change of an instance's state (healthy,
    /// degraded, unhealthy) is logged (target `sandloom`).
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let report = running.readiness().await;
    /// let status = if report.readiness.is_ready() { 200 } else { 503 };
    /// assert_eq!(status, 200);
    /// print!("{report}"); // "ready: 0 instances", then one line per instance
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub async fn readiness(&self) -> HealthReport {
        let checks = self.shared.live().checks();
        checks.run().await
    }

    /// The result of the last health check, without checking: the periodic probe's (with
    /// `health_interval_ms` in `INFRA`), or the last [`readiness`](Self::readiness) or
    /// [`health`](Self::health) call's. `None` before the first check has ended.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("health_interval_ms = 10000", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// // A readiness endpoint answers from the last probe, at once, and checks only before
    /// // the first probe has ended.
    /// let report = match running.last_health() {
    ///     Some(report) => report,
    ///     None => running.readiness().await,
    /// };
    /// assert!(report.readiness.is_ready());
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn last_health(&self) -> Option<HealthReport> {
        // No check made yet: none has run either.
        self.shared.live().checks.as_ref()?.last()
    }

    /// Stop every driver in reverse start order, each under the stop timeout. Drivers whose stop
    /// fails are reported; the others are still stopped.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// if let Err(err) = running.shutdown().await {
    ///     eprintln!("{err}"); // SANDLOOM-B030, one problem per driver that did not stop cleanly
    ///     std::process::exit(1);
    /// }
    /// # }
    /// ```
    ///
    /// # Errors
    /// A [`ShutdownError`] of SANDLOOM-B030 problems for drivers that failed, panicked or timed
    /// out while stopping.
    pub async fn shutdown(self) -> Result<(), ShutdownError> {
        // After a reload in progress (a `Reloader`'s) has ended; none begins after this.
        let mut closed = self.shared.turn.lock().await;
        *closed = true;
        // Before the drain: a watcher's long poll would count as in flight, and must not
        // outlive the secrets instances it calls.
        let stop_timeout = self.shared.live().attempts.stop_timeout;
        if let Some(watcher) = self.shared.rotation.take() {
            watcher.stop(stop_timeout).await;
        }
        let mut attempts = {
            let mut live = self.shared.live();
            // Periodic probing stops before the drivers do.
            live.prober = None;
            Attempts {
                drivers: std::mem::take(&mut live.attempts.drivers),
                stop_timeout: live.attempts.stop_timeout,
            }
        };
        drop(closed);
        drain(&attempts.drivers, attempts.stop_timeout).await;
        let problems = attempts.stop_all().await;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ShutdownError::new(problems))
        }
    }
}

/// Graceful drain: from now on every instance's operations answer `Stopped`, those waiting in
/// an operation declared `#[waits]` (a long poll) at once, and those already in flight may
/// finish, for up to `budget` in all; then whatever is still pending answers `Stopped` to its
/// caller (which is logged) and the drivers are stopped.
async fn drain(drivers: &[lifecycle::Attempted], budget: std::time::Duration) {
    for driver in drivers {
        driver.lifecycle.begin_drain();
    }
    let deadline = tokio::time::Instant::now() + budget;
    let in_flight = || -> usize { drivers.iter().map(|d| d.lifecycle.in_flight()).sum() };
    // Operations are short next to a shutdown: poll rather than make every operation signal.
    let mut pause = std::time::Duration::from_micros(200);
    while in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(pause.min(deadline - tokio::time::Instant::now())).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(20));
    }
    for driver in drivers {
        let left = driver.lifecycle.in_flight();
        if left > 0 {
            tracing::warn!(
                target: "sandloom",
                capability = %driver.capability,
                instance = %driver.instance,
                in_flight = left,
                "operations still in flight after the stop timeout ({} ms); they answer `Stopped` to their callers and the driver is stopped under them",
                budget.as_millis()
            );
            // Their callers must not wait on a driver that may never answer.
            driver.lifecycle.abandon();
        }
    }
}
