//! Live reconfiguration: [`Running::reload`](crate::Running::reload) changes the running
//! instances to a new `INFRA` the way Envoy changes a cluster (issue 26).
//!
//! 1. **Check first**: the new configuration is resolved in full, as `check` resolves it
//!    (names, versions, options, features, every linked module's `requires!`). Any problem
//!    refuses the whole reload, coded and located, and nothing changes.
//! 2. **Plan**: [`plan::ReloadPlan::between`] the running and the new configuration: each
//!    instance is kept, replaced, added or removed.
//! 3. **Build beside**: each replaced (or re-added) instance is constructed and started beside
//!    the old one, in start order (capability, then instance; the `secrets` instances others
//!    read from first), and must pass its health check (healthy or degraded) within its
//!    `health_timeout_ms`. Its secret references are read then, from the store that serves
//!    after the reload (a store the reload rebuilds gives its new instance's value): a rotated
//!    secret reaches every instance a reload replaces.
//! 4. **Keep on failure**: any failure — construction, `start` failing, panicking, hanging past
//!    `start_timeout_ms` or blocking its thread, an unhealthy check — stops the new instances
//!    already started and refuses the reload; every old instance keeps serving, untouched.
//! 5. **Swap**: each instance's route (what every handle modules hold is) is switched to the
//!    new instance in one atomic store, instance after instance in start order. From its store
//!    on, every new operation on that instance goes to the new one; an operation already begun
//!    finishes on the old one. Instances are swapped one at a time, not all at one instant: no
//!    operation spans two instances, so none can see a mix.
//! 6. **Drain, then stop**: the old instances are stopped once the operations begun on them
//!    have ended, or when `stop_timeout_ms` (of the configuration they were started with) has
//!    run out, whichever comes first; the count left is logged and reported. The rotation watch
//!    follows the new configuration (new references watched, removed ones forgotten).
//!
//! What a reload cannot do, and why:
//!
//! - **Add an instance** that was not configured at startup: the `Infra` handed to modules
//!   holds one route per instance configured at startup, and its accessors are field reads
//!   that never change (that is what makes them free). Such a reload is refused (SANDLOOM-B010);
//!   restart to add an instance.
//! - **Remove an instance** for good: a removed instance is drained and stopped, but its handles
//!   stay valid and answer `Stopped` (as after shutdown), and configuring it again in a later
//!   reload serves them again (reported as added).
//! - **The kernel's top-level settings** (`environment`, `accepted_risks`, timeouts,
//!   `health_interval_ms`) apply to what the reload starts and drains from then on; there is
//!   nothing else to restart for them.
//! - **An instance whose driver was built without a route** (a test double that builds its
//!   entry by hand, not through `register_driver!`) cannot be replaced (SANDLOOM-B022).
//!
//! What a reload would do is [`ReloadPlan`] (also printed by `infra diff OLD NEW`); with the
//! `reload-triggers` feature, [`triggers`] start one on a changed `INFRA` file, on SIGHUP, or
//! for the instances that read a rotated secret (`ReloadOnRotation`, which replaces exactly
//! those instances although their configuration did not change).
//!
//! ```
//! use sandloom_kernel::InfraConfig;
//! use sandloom_kernel::reload::{Change, ReloadPlan};
//!
//! let old = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "old.toml").unwrap();
//! let new = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\ncapacity = 10", "new.toml").unwrap();
//! let plan = ReloadPlan::between(&old, &new);
//! assert_eq!(plan.instances[0].change, Change::Replaced { reasons: vec!["option `capacity` added".into()] });
//! ```

pub mod plan;
mod report;
mod running;
mod secrets;
#[cfg(test)]
mod tests;
#[cfg(feature = "reload-triggers")]
pub mod triggers;

pub use plan::{Change, InstanceChange, ReloadPlan};

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sandloom_sdk_infra::Requirement;

pub use report::{InstanceReload, Outcome, ReloadError, ReloadReport};

use crate::config::{InfraConfig, Location, order_by_location};
use crate::construct::construct;
use crate::error::{Problem, UnusableReason};
use crate::health::{Check, Checks, Prober};
use crate::lifecycle::{Attempted, Attempts, timers_enabled};
use crate::link::LinkedDrivers;
use crate::registry::{self, BuildContext, ErasedLifecycle, ErasedRoute, Health, Retired};
use crate::resolve::{Inputs, PlannedInstance, resolve, unusable};
use crate::wait;

/// The metric counting reloads, labelled `outcome`: `applied`, `unchanged` or `refused`.
///
/// ```
/// assert_eq!(sandloom_kernel::reload::RELOADS_METRIC, "sandloom.reloads");
/// ```
pub const RELOADS_METRIC: &str = "sandloom.reloads";

/// What `Running` and its [`Reloader`]s share.
pub(crate) struct Shared {
    /// The rotation watchers, which follow each reload. First: dropped (and so aborted) before
    /// the drivers they call.
    pub(crate) rotation: crate::rotation::Follow,
    pub(crate) linked: LinkedDrivers,
    pub(crate) requirements: Vec<Requirement>,
    /// One reload (or shutdown) at a time; `true` once shutdown has begun.
    pub(crate) turn: tokio::sync::Mutex<bool>,
    /// Never held across an `await`.
    pub(crate) live: Mutex<Live>,
}

/// What runs now.
pub(crate) struct Live {
    pub(crate) config: InfraConfig,
    /// The running drivers, in start order.
    pub(crate) attempts: Attempts,
    /// Every instance `Infra` has, running or removed.
    pub(crate) slots: Vec<Slot>,
    /// The health checks, made when first needed ([`Live::checks`]): a probe, a readiness
    /// call. Most processes never ask between start and shutdown, and making a check per
    /// driver at every start was part of startup's cost (`BENCHMARKS.md`, issue 27).
    pub(crate) checks: Option<Arc<Checks>>,
    pub(crate) prober: Option<Prober>,
    pub(crate) last: Option<ReloadReport>,
}

/// One instance of `Infra`.
pub(crate) struct Slot {
    /// The linked entry's name of the capability, and the instance's name shared with its
    /// driver's [`Attempted`] record.
    pub(crate) capability: &'static str,
    pub(crate) instance: Arc<str>,
    pub(crate) route: Option<Arc<dyn ErasedRoute>>,
    /// 1 at startup, one more at each replacement.
    pub(crate) version: u64,
    /// `false` once a reload removed it.
    pub(crate) serving: bool,
}

impl Shared {
    pub(crate) fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Live {
    /// The health checks of the running drivers, made now if they were not yet.
    pub(crate) fn checks(&mut self) -> Arc<Checks> {
        let checks = self
            .checks
            .get_or_insert_with(|| Arc::new(health_checks(&self.config, &self.attempts)));
        Arc::clone(checks)
    }

    fn slot(&self, capability: &str, instance: &str) -> Option<&Slot> {
        self.slots
            .iter()
            .find(|s| s.capability == capability && *s.instance == *instance)
    }

    fn slot_mut(&mut self, capability: &str, instance: &str) -> Option<&mut Slot> {
        self.slots
            .iter_mut()
            .find(|s| s.capability == capability && *s.instance == *instance)
    }
}

/// A cheap, cloneable handle that reloads the running configuration, for triggers running in
/// tasks of their own (a file watch, a signal). It does not keep the drivers alive: once the
/// [`Running`](crate::Running) it came from is shut down or dropped, it refuses.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// let reloader = running.reloader();
/// let trigger = tokio::spawn(async move {
///     reloader.reload(InfraConfig::from_toml_str("", "infra.toml").unwrap()).await
/// });
/// let report = trigger.await.unwrap().unwrap();
/// assert!(report.applied && report.instances.is_empty());
/// running.shutdown().await.unwrap();
/// # }
/// ```
#[derive(Clone)]
pub struct Reloader {
    pub(crate) shared: std::sync::Weak<Shared>,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader")
            .field("running", &(self.shared.strong_count() > 0))
            .finish()
    }
}

impl Reloader {
    /// As [`Running::reload`](crate::Running::reload).
    ///
    /// ```
    /// # use sandloom_kernel::{InfraConfig, Kernel};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let reloader = running.reloader();
    /// running.shutdown().await.unwrap();
    /// let err = reloader.reload(InfraConfig::from_toml_str("", "infra.toml").unwrap()).await.unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Running::reload`](crate::Running::reload); also SANDLOOM-B010 once the
    /// infrastructure was shut down.
    pub async fn reload(&self, new: InfraConfig) -> Result<ReloadReport, ReloadError> {
        match self.shared.upgrade() {
            Some(shared) => reload(&shared, new).await,
            None => Err(ReloadError::new(vec![shut_down()])),
        }
    }
}

impl Reloader {
    /// Reload the running configuration, replacing the `forced` instances (rotated secrets).
    #[cfg_attr(not(feature = "reload-triggers"), allow(dead_code))]
    pub(crate) async fn reload_forced(
        &self,
        forced: Vec<Forced>,
    ) -> Result<ReloadReport, ReloadError> {
        match self.shared.upgrade() {
            Some(shared) => reload_with(&shared, None, &forced).await,
            None => Err(ReloadError::new(vec![shut_down()])),
        }
    }

    /// The running instances whose options refer to a secret.
    #[cfg_attr(not(feature = "reload-triggers"), allow(dead_code))]
    pub(crate) fn reading_secrets(&self) -> Vec<(String, String)> {
        self.shared.upgrade().map_or_else(Vec::new, |shared| {
            shared
                .live()
                .config
                .instances()
                .filter(|i| !i.references.is_empty())
                .map(|i| (i.capability.clone(), i.instance.clone()))
                .collect()
        })
    }
}

fn shut_down() -> Problem {
    Problem::config(
        Location::Code,
        "the infrastructure this reload was meant for has been shut down",
        "reload a running infrastructure: call `reload` before `shutdown`",
    )
}

/// A new instance started beside an old one.
struct Fresh {
    capability: &'static str,
    instance: Arc<str>,
    driver: &'static str,
    route: Arc<dyn ErasedRoute>,
    lifecycle: Arc<dyn ErasedLifecycle>,
    /// Its features, as its options give them.
    features: Vec<&'static str>,
    /// A `secrets` instance's operations: the references of the instances built after it in
    /// the same reload read from it.
    secrets: Option<Arc<dyn sandloom_sdk_infra::secrets::Secrets>>,
}

/// See the module documentation.
pub(crate) async fn reload(shared: &Shared, new: InfraConfig) -> Result<ReloadReport, ReloadError> {
    reload_with(shared, Some(new), &[]).await
}

/// An instance a reload replaces although its configuration did not change, and why (a secret
/// it reads was rotated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Forced {
    pub(crate) capability: String,
    pub(crate) instance: String,
    pub(crate) reason: String,
}

/// [`reload`] to `new` (`None`: the configuration running now), replacing the `forced`
/// instances as well as those whose configuration changed.
pub(crate) async fn reload_with(
    shared: &Shared,
    new: Option<InfraConfig>,
    forced: &[Forced],
) -> Result<ReloadReport, ReloadError> {
    if tokio::runtime::Handle::try_current().is_err() || !timers_enabled() {
        return Err(ReloadError::new(vec![Problem::NoRuntime]));
    }
    let closed = shared.turn.lock().await;
    if *closed {
        return Err(ReloadError::new(vec![shut_down()]));
    }
    let old = shared.live().config.clone();
    let new = new.unwrap_or_else(|| old.clone());
    let mut plan = ReloadPlan::between(&old, &new);
    force(&mut plan, forced);
    // A store replaced for a rotated secret it reads replaces its readers too.
    plan.replace_readers_of_rebuilt_stores(&new);

    // 1. Check first, as `check` does: nothing is built when anything is wrong.
    let planned = match check(shared, &new) {
        Ok(planned) => planned,
        Err(problems) => return Err(refuse(shared, &plan, &new, problems)),
    };

    // 2. What to build, and what a reload cannot do.
    let mut problems = Vec::new();
    let mut to_build = Vec::new();
    {
        let live = shared.live();
        for instance in planned {
            let names = instance.config;
            match change_of(&plan, names.capability, names.instance) {
                Some(Change::Replaced { .. } | Change::Added) => {}
                _ => continue,
            }
            match live.slot(names.capability, names.instance) {
                None => problems.push(cannot_add(&new, names.capability, names.instance)),
                Some(slot) if slot.route.is_none() => problems.push(unusable(
                    &names,
                    instance.entry,
                    UnusableReason::NotReplaceable,
                )),
                Some(_) => to_build.push(instance),
            }
        }
    }
    if !problems.is_empty() {
        return Err(refuse(shared, &plan, &new, problems));
    }

    // 3. Build and start beside the old instances, each reference read from the store that
    // serves after the reload; 4. keep them on any failure.
    let fresh = match secrets::build_reading_secrets(shared, &new, to_build).await {
        Ok(fresh) => fresh,
        Err(problems) => return Err(refuse(shared, &plan, &new, problems)),
    };
    let rebuilt_stores: Vec<(String, Vec<&'static str>)> = fresh
        .iter()
        .filter(|f| f.capability == crate::references::SECRETS)
        .map(|f| (f.instance.to_string(), f.features.clone()))
        .collect();
    let running = new.clone();

    // 5. Swap, in start order; then the running state follows.
    let Switched {
        retired,
        old_drivers,
        failed,
        report,
    } = switch(&mut shared.live(), fresh, &plan, new);
    let mut report = report;
    // The secrets watched for rotation are the new configuration's from now on.
    shared
        .rotation
        .follow(&running, rebuilt_stores, old.stop_timeout())
        .await;
    drop(running);
    for (fresh, error) in failed {
        tracing::error!(target: "sandloom", capability = %fresh.capability, instance = %fresh.instance, "{error}");
        let mut attempts = Attempts {
            drivers: vec![Attempted {
                capability: fresh.capability,
                instance: fresh.instance,
                driver: fresh.driver,
                lifecycle: fresh.lifecycle,
            }],
            stop_timeout: old.stop_timeout(),
        };
        for problem in attempts.stop_all().await {
            tracing::error!(target: "sandloom", "{problem}");
        }
    }

    // 6. Drain the old instances, then stop them. In `Attempts` from here on: were this future
    // dropped half-way, its drop would still stop them.
    let mut stopping = Attempts {
        drivers: old_drivers,
        stop_timeout: old.stop_timeout(),
    };
    report.left_in_flight = drain_retired(&retired, &stopping.drivers, old.stop_timeout()).await;
    drop(retired);
    for problem in stopping.stop_all().await {
        tracing::error!(target: "sandloom", "{problem}");
    }
    if report.left_in_flight > 0 {
        shared.live().last = Some(report.clone());
    }
    drop(closed);
    record(&report, "applied");
    Ok(report)
}

/// Resolve `new` in full, as `check` does (its secret references judged, not read).
fn check<'a>(
    shared: &'a Shared,
    new: &'a InfraConfig,
) -> Result<Vec<PlannedInstance<'a>>, Vec<Problem>> {
    let inputs = Inputs {
        config: new,
        drivers: registry::drivers(),
        specs: registry::capabilities(),
        requirements: &shared.requirements,
        linked: &shared.linked,
    };
    let mut problems = if new.instances().any(|i| !i.references.is_empty()) {
        crate::references::judge(new, registry::drivers())
    } else {
        Vec::new()
    };
    match resolve(&inputs) {
        Ok(planned) if problems.is_empty() => Ok(planned),
        Ok(_) => Err(problems),
        Err(found) => {
            problems.extend(found);
            Err(problems)
        }
    }
}

/// What [`switch`] leaves to do: drain and stop the old instances.
struct Switched {
    retired: Vec<Box<dyn Retired>>,
    old_drivers: Vec<Attempted>,
    /// New instances whose route could not be switched (a bug), to stop.
    failed: Vec<(Fresh, String)>,
    report: ReloadReport,
}

/// Switch each instance's route to its fresh instance, in start order, and make the running
/// state the new configuration's (drivers, versions, health checks, probe).
fn switch(live: &mut Live, fresh: Vec<Fresh>, plan: &ReloadPlan, new: InfraConfig) -> Switched {
    let mut retired: Vec<Box<dyn Retired>> = Vec::new();
    let mut old_drivers: Vec<Attempted> = Vec::new();
    let mut failed = Vec::new();
    for fresh in fresh {
        let Some(route) = live
            .slot(fresh.capability, &fresh.instance)
            .and_then(|slot| slot.route.clone())
        else {
            continue; // checked before anything was built
        };
        match route.route_to(&*fresh.route) {
            Ok(before) => retired.push(before),
            Err(error) => {
                // Cannot happen: resolution gives an instance a driver of its own capability.
                failed.push((fresh, error.to_string()));
                continue;
            }
        }
        // The fresh instance's own route is dropped here: only the instance's route in
        // `Infra` may hold what it serves, or the old one's count of holders would be off.
        let Fresh {
            capability,
            instance,
            driver,
            lifecycle,
            route: _,
            features: _,
            secrets: _,
        } = fresh;
        let attempted = Attempted {
            capability,
            instance: Arc::clone(&instance),
            driver,
            lifecycle,
        };
        let running = &mut live.attempts.drivers;
        if let Some(index) = running
            .iter()
            .position(|d| d.capability == capability && d.instance == instance)
        {
            old_drivers.push(std::mem::replace(&mut running[index], attempted));
        } else {
            let at = insertion_point(running, capability, &instance);
            running.insert(at, attempted);
        }
        if let Some(slot) = live.slot_mut(capability, &instance) {
            slot.version += 1;
            slot.serving = true;
        }
    }
    // Removed instances: drained and stopped by the caller; their routes answer `Stopped`.
    for line in plan
        .instances
        .iter()
        .filter(|l| l.change == Change::Removed)
    {
        if let Some(index) = live
            .attempts
            .drivers
            .iter()
            .position(|d| d.capability == line.capability && *d.instance == *line.instance)
        {
            old_drivers.push(live.attempts.drivers.remove(index));
        }
        if let Some(slot) = live.slot_mut(&line.capability, &line.instance) {
            slot.serving = false;
        }
    }
    live.attempts.stop_timeout = new.stop_timeout();
    live.config = new;
    live.checks = None;
    live.prober = live
        .config
        .health_interval()
        .map(|interval| Prober::spawn(live.checks(), interval));
    let report = applied_report(live, plan, &failed);
    live.last = Some(report.clone());
    Switched {
        retired,
        old_drivers,
        failed,
        report,
    }
}

/// Replace the `forced` instances: a kept one is replaced for its reason, a replaced one gets
/// it among its reasons; one added, removed or not configured is left as the plan has it.
fn force(plan: &mut ReloadPlan, forced: &[Forced]) {
    for forced in forced {
        let Some(line) = plan
            .instances
            .iter_mut()
            .find(|l| l.capability == forced.capability && l.instance == forced.instance)
        else {
            continue;
        };
        match &mut line.change {
            Change::Kept => {
                line.change = Change::Replaced {
                    reasons: vec![forced.reason.clone()],
                };
            }
            Change::Replaced { reasons } if !reasons.contains(&forced.reason) => {
                reasons.push(forced.reason.clone());
            }
            _ => {}
        }
    }
}

fn change_of<'a>(plan: &'a ReloadPlan, capability: &str, instance: &str) -> Option<&'a Change> {
    plan.instances
        .iter()
        .find(|line| line.capability == capability && line.instance == instance)
        .map(|line| &line.change)
}

fn cannot_add(new: &InfraConfig, capability: &str, instance: &str) -> Problem {
    Problem::config(
        new.instance(capability, instance)
            .map_or(Location::Code, |i| i.location.clone()),
        format!(
            "a reload cannot add `[{capability}.{instance}]`: the `Infra` handed to modules holds the instances configured at startup, and its accessors never change"
        ),
        format!(
            "restart the application to add `{capability}.{instance}`, or leave it out of this reload"
        ),
    )
}

/// Where a re-added instance goes among the running ones: start order.
fn insertion_point(drivers: &[Attempted], capability: &str, instance: &str) -> usize {
    drivers
        .iter()
        .position(|d| (d.capability, &*d.instance) > (capability, instance))
        .unwrap_or(drivers.len())
}

/// Construct, start and health-check each instance to build, in start order. On any problem,
/// every one already started is stopped, and the problems (theirs included) are returned.
async fn build_beside(
    new: &InfraConfig,
    to_build: Vec<PlannedInstance<'_>>,
) -> Result<Vec<Fresh>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut built = Vec::new();
    for mut plan in to_build {
        let instance: Arc<str> = Arc::from(plan.config.instance);
        let features = std::mem::take(&mut plan.options.features);
        let context = BuildContext {
            instance: &instance,
            features: &features,
            telemetry: plan.config.telemetry,
        };
        match construct(plan.entry.build, plan.options, &context) {
            Ok(driver) => built.push((plan.config, plan.entry, driver, features, instance)),
            Err(failure) => problems.push(unusable(&plan.config, plan.entry, failure)),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let timeout = new.start_timeout();
    let mut attempts = Attempts {
        drivers: Vec::new(),
        stop_timeout: new.stop_timeout(),
    };
    let mut fresh = Vec::new();
    for (names, entry, driver, features, instance) in built {
        let lifecycle: Arc<dyn ErasedLifecycle> = driver.lifecycle;
        attempts.drivers.push(Attempted {
            capability: entry.capability,
            instance: Arc::clone(&instance),
            driver: entry.name,
            lifecycle: Arc::clone(&lifecycle),
        });
        let configured = new.instance(names.capability, names.instance);
        let wait = configured.map_or(new.start_wait(), |i| i.start_wait(new));
        let starting = wait::Starting {
            capability: names.capability,
            instance: names.instance,
            driver: names.driver,
        };
        let (started, tried) =
            wait::start(&lifecycle, &starting, (timeout, new.stop_timeout()), wait).await;
        if let Some(reason) = crate::runtime::failure(started, timeout, tried, &mut attempts) {
            problems.push(unusable(&names, entry, reason));
            continue;
        }
        let health_timeout = configured.map_or(new.health_timeout(), |i| i.health_timeout(new));
        let check = Check::new(
            (entry.capability, Arc::clone(&instance), entry.name),
            Arc::clone(&lifecycle),
            health_timeout,
        );
        let health = Checks::new(vec![check])
            .run()
            .await
            .instances
            .pop()
            .map_or(Health::Unhealthy("no answer".to_owned()), |i| i.health);
        if let Health::Unhealthy(reason) = health {
            problems.push(unusable(
                &names,
                entry,
                UnusableReason::Unhealthy { health: reason },
            ));
            continue;
        }
        let secrets = driver
            .operations
            .downcast_ref::<Arc<dyn sandloom_sdk_infra::secrets::Secrets>>()
            .cloned();
        let Some(route) = driver.route else {
            problems.push(unusable(&names, entry, UnusableReason::NotReplaceable));
            continue;
        };
        fresh.push(Fresh {
            capability: entry.capability,
            instance,
            driver: entry.name,
            route,
            lifecycle,
            features,
            secrets,
        });
    }
    if problems.is_empty() {
        // They serve from now on: `attempts` must not stop them when it is dropped.
        attempts.drivers.clear();
        Ok(fresh)
    } else {
        drop(fresh);
        problems.extend(attempts.stop_all().await);
        Err(problems)
    }
}

/// Drain the old instances at once, then wait until none of their operations is in flight and
/// no operation holds a retired instance, for up to `budget`. Returns the operations left when
/// the budget ran out.
///
/// The drain begins right after the swap, without waiting for the operations that loaded an
/// old instance just before it: such an operation is refused by the old gate, and one declared
/// `#[waits]` still waiting there (an idle `reserve`) is cut; neither has had an effect, and
/// the route runs both again on the new instance (driverkit's `route.rs`). Operations already
/// running on an old instance finish there.
async fn drain_retired(retired: &[Box<dyn Retired>], old: &[Attempted], budget: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + budget;
    for driver in old {
        driver.lifecycle.begin_drain();
    }
    let held = || -> usize { retired.iter().map(|r| r.holders()).sum() };
    let mut pause = Duration::from_micros(200);
    let in_flight = || -> usize { old.iter().map(|d| d.lifecycle.in_flight()).sum() };
    while (in_flight() > 0 || held() > 0) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(pause.min(deadline - tokio::time::Instant::now())).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    let left = held().max(in_flight());
    for driver in old {
        let in_flight = driver.lifecycle.in_flight();
        if in_flight > 0 {
            tracing::warn!(
                target: "sandloom",
                capability = %driver.capability,
                instance = %driver.instance,
                in_flight,
                "operations still in flight on the replaced instance after the stop timeout ({} ms); stopping it under them",
                budget.as_millis()
            );
        }
    }
    left
}

/// A health check per running driver, each under its instance's `health_timeout_ms`.
pub(crate) fn health_checks(config: &InfraConfig, attempts: &Attempts) -> Checks {
    Checks::new(
        attempts
            .drivers
            .iter()
            .map(|driver| {
                let timeout = config
                    .instance(driver.capability, &driver.instance)
                    .map_or(config.health_timeout(), |i| i.health_timeout(config));
                Check::new(
                    (
                        driver.capability,
                        Arc::clone(&driver.instance),
                        driver.driver,
                    ),
                    Arc::clone(&driver.lifecycle),
                    timeout,
                )
            })
            .collect(),
    )
}

/// The report of an applied reload, from the running state after the swap.
fn applied_report(
    live: &Live,
    plan: &ReloadPlan,
    swap_problems: &[(Fresh, String)],
) -> ReloadReport {
    let instances = plan
        .instances
        .iter()
        .map(|line| {
            let slot = live.slot(&line.capability, &line.instance);
            let failed = swap_problems
                .iter()
                .find(|(f, _)| f.capability == line.capability && *f.instance == *line.instance);
            let outcome = match (&line.change, failed) {
                (_, Some((_, error))) => Outcome::Refused {
                    codes: Vec::new(),
                    problems: vec![error.clone()],
                },
                (Change::Kept, _) => Outcome::Kept,
                (Change::Replaced { reasons }, _) => Outcome::Replaced {
                    reasons: reasons.clone(),
                },
                (Change::Added, _) => Outcome::Added,
                (Change::Removed, _) => Outcome::Removed,
            };
            InstanceReload {
                capability: line.capability.clone(),
                instance: line.instance.clone(),
                driver: driver_of(live, &line.capability, &line.instance),
                outcome,
                version: slot.map_or(0, |s| s.version),
            }
        })
        .collect();
    ReloadReport {
        applied: true,
        instances,
        left_in_flight: 0,
    }
}

fn driver_of(live: &Live, capability: &str, instance: &str) -> String {
    live.attempts
        .drivers
        .iter()
        .find(|d| d.capability == capability && *d.instance == *instance)
        .map(|d| d.driver.to_owned())
        .or_else(|| {
            live.config
                .instance(capability, instance)
                .map(|i| i.driver.clone())
        })
        .unwrap_or_default()
}

/// A refused reload: nothing changed. Each changed instance is marked refused, with the
/// problems that concern it.
fn refuse(
    shared: &Shared,
    plan: &ReloadPlan,
    new: &InfraConfig,
    mut problems: Vec<Problem>,
) -> ReloadError {
    order_by_location(&mut problems, new);
    let live = shared.live();
    let instances = plan
        .instances
        .iter()
        .map(|line| {
            let own: Vec<&Problem> = problems
                .iter()
                .filter(|p| concerns(p) == Some((&line.capability, &line.instance)))
                .collect();
            let outcome = if line.change == Change::Kept && own.is_empty() {
                Outcome::Kept
            } else {
                Outcome::Refused {
                    codes: own.iter().map(|p| p.code()).collect(),
                    problems: own.iter().map(|p| p.description()).collect(),
                }
            };
            InstanceReload {
                capability: line.capability.clone(),
                instance: line.instance.clone(),
                driver: driver_of(&live, &line.capability, &line.instance),
                outcome,
                version: live
                    .slot(&line.capability, &line.instance)
                    .map_or(0, |s| s.version),
            }
        })
        .collect();
    let report = ReloadReport {
        applied: false,
        instances,
        left_in_flight: 0,
    };
    drop(live);
    record(&report, "refused");
    let error = ReloadError::with_report(problems, report.clone());
    tracing::warn!(target: "sandloom", codes = ?error.codes(), "{error}");
    shared.live().last = Some(report);
    error
}

/// The instance a problem is about, when it is about one.
fn concerns(problem: &Problem) -> Option<(&String, &String)> {
    match problem {
        Problem::Unusable {
            capability,
            instance,
            ..
        }
        | Problem::NoDriver {
            capability,
            instance,
            ..
        }
        | Problem::NoInstance {
            capability,
            instance,
            ..
        }
        | Problem::Experimental {
            capability,
            instance,
            ..
        }
        | Problem::StopFailed {
            capability,
            instance,
            ..
        } => Some((capability, instance)),
        _ => None,
    }
}

/// Log the reload (INFO when applied) and count it.
fn record(report: &ReloadReport, outcome: &'static str) {
    let outcome = if outcome == "applied"
        && report
            .instances
            .iter()
            .all(|line| line.outcome == Outcome::Kept)
    {
        "unchanged"
    } else {
        outcome
    };
    metrics::counter!(RELOADS_METRIC, "outcome" => outcome).increment(1);
    if outcome != "refused" {
        let count = |word: &str| {
            report
                .instances
                .iter()
                .filter(|line| line.outcome.as_str() == word)
                .count()
        };
        tracing::info!(
            target: "sandloom",
            outcome,
            kept = count("kept"),
            replaced = count("replaced"),
            added = count("added"),
            removed = count("removed"),
            left_in_flight = report.left_in_flight,
            "reloaded INFRA"
        );
    }
}
