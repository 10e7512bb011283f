//! The type-erased entries that driver crates link into the binary, and the slices holding them.
//!
//! The kernel never names a provider trait: `sandloom-driverkit`'s macros turn a typed driver
//! into a [`DriverEntry`] of plain data and function pointers. Nothing here runs before `main`,
//! and nothing is constructed until `INFRA` selects it.
//!
//! Read the registry with [`drivers`] and [`capabilities`], and what a driver declares for some
//! options with [`DriverEntry::features_for`]: tools such as `sandloom-cli` read nothing else.
//! The items hidden from these docs are the contract between driverkit's macros and the kernel,
//! versioned with both, not public API: entries are made with
//! `sandloom_driverkit::register_driver!` and `define_capability!` only.
//!
//! ```
//! use sandloom_kernel::registry::{capabilities, drivers, Stability};
//!
//! // What this binary can serve: the capabilities it knows, and the drivers linked for them.
//! for spec in capabilities().iter().filter(|spec| spec.stability == Stability::Stable) {
//!     let names: Vec<&str> = drivers()
//!         .iter()
//!         .filter(|entry| entry.capability == spec.name)
//!         .map(|entry| entry.name)
//!         .collect();
//!     println!("{} {}: {}", spec.name, spec.contract_version, names.join(", "));
//! }
//! ```

use std::any::Any;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use linkme::distributed_slice;
use semver::Version;

use crate::options::{OptionsError, RawOptions};

#[doc(hidden)]
pub use crate::options::accepts_unknown_keys;

/// A boxed error from driver code.
#[doc(hidden)]
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;
/// A boxed, sendable future.
#[doc(hidden)]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The bytes a driver's `start` or `stop` future may take to be held inline by the kernel
/// rather than boxed: room for every built-in driver's (16 to 40 bytes, but 168 for
/// `secrets.file`'s `start`, which rescans its directory under a lock) and for any whose
/// lifecycle does little, so that starting and stopping them allocates nothing of its own. A
/// backend's `start`, which connects, is larger (`cache.redis`: 1.2 KB, `taskqueue.postgres`:
/// 2 KB) and boxed, one allocation beside its round trips, as every lifecycle future was before.
#[doc(hidden)]
pub const LIFECYCLE_FUTURE_BYTES: usize = 192;
/// A driver's `start` or `stop` as the kernel runs it: owning the driver, held inline in
/// [`LIFECYCLE_FUTURE_BYTES`] when it fits. Unpolled, it can still move (into a task, on a
/// multi-threaded runtime); once polled in place it stays there until it ends or is dropped.
#[doc(hidden)]
pub type LifecycleFuture =
    sandloom_sdk_infra::OpFuture<'static, Result<(), BoxError>, LIFECYCLE_FUTURE_BYTES>;

/// Whether a capability's contract is stable.
///
/// ```
/// use sandloom_kernel::registry::Stability;
/// assert_eq!(Stability::Experimental.to_string(), "experimental");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    /// Public, with a conformance kit; semver applies.
    Stable,
    /// May change in a minor release; refused in `production` without the accepted risk
    /// `experimental_capability` (SANDLOOM-B023).
    Experimental,
}

impl fmt::Display for Stability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Stable => "stable",
            Self::Experimental => "experimental",
        })
    }
}

/// A capability: what a driver of it must implement and may declare.
///
/// Built-in specs are linked by the kernel; a third-party package defines its own with
/// `sandloom_driverkit::define_capability!`.
///
/// ```
/// use sandloom_kernel::registry::{capabilities, Stability};
///
/// let cache = capabilities().iter().find(|spec| spec.name == "cache").unwrap();
/// assert_eq!(cache.stability, Stability::Stable);
/// assert_eq!(cache.contract_version.major, 1);
/// assert_eq!(cache.required_operations, ["get", "set", "delete"]);
/// assert_eq!(cache.features, ["ttl", "increment", "bulk"]);
/// assert_eq!(cache.package, "sandloom-kernel");
///
/// let lock = capabilities().iter().find(|spec| spec.name == "lock").unwrap();
/// assert_eq!((lock.stability, lock.contract_version.major), (Stability::Stable, 1));
/// ```
#[derive(Debug)]
pub struct CapabilitySpec {
    /// The name used in `INFRA` (`cache`).
    pub name: &'static str,
    /// Stable or experimental.
    pub stability: Stability,
    /// The version of the contract linked into this binary.
    ///
    /// A driver is accepted when its `contract_version` has the same **major** version (ADR-0011,
    /// decision 5), the major being the leftmost non-zero component, as Cargo reads it
    /// ([`contract_compatible`]): only another major is refused (SANDLOOM-B022, whose action
    /// names [`package`](Self::package) and says whether the driver or the contract is behind).
    /// Minor and patch differences are accepted in both directions: a driver written for 1.4
    /// runs with contract 1.3 and with 1.5; 0.1.1 runs with 0.1.0. Under 1.0 the minor is the
    /// major: 0.2 and 0.1 are refused together, as are 1.0 and 0.9, and 0.0.2 and 0.0.1. So a
    /// contract must only ever add to a major version what existing drivers can do without: a
    /// change that breaks drivers needs the next major (0.1 → 0.2 before 1.0).
    ///
    /// ```
    /// use sandloom_kernel::registry::capabilities;
    ///
    /// let cache = capabilities().iter().find(|spec| spec.name == "cache").unwrap();
    /// // Drivers written for any 1.x of `cache` are accepted; 0.x and 2.x are refused.
    /// assert_eq!(cache.contract_version.major, 1);
    /// ```
    pub contract_version: Version,
    /// Operations every driver implements; never features.
    pub required_operations: &'static [&'static str],
    /// Optional features a driver may declare.
    pub features: &'static [&'static str],
    /// The package that defines the spec.
    pub package: &'static str,
}

/// How one driver is found, checked and built. Produced by `sandloom_driverkit::register_driver!`.
///
/// ```
/// use sandloom_kernel::registry::{drivers, DriverEntry};
///
/// fn find(capability: &str, name: &str) -> Option<&'static DriverEntry> {
///     drivers().iter().find(|entry| entry.capability == capability && entry.name == name)
/// }
/// if let Some(entry) = find("cache", "memory") {
///     println!("{} {} declares {:?}", entry.package, entry.contract_version, (entry.supported_features)());
/// }
/// // This example links no driver crate; an application names its own in `link_drivers!`.
/// assert!(find("cache", "memory").is_none());
/// ```
pub struct DriverEntry {
    /// The capability it serves (`cache`).
    pub capability: &'static str,
    /// Its driver name (`memory`); `INFRA` selects it as `driver = "memory"`.
    pub name: &'static str,
    /// The package that registered it (`env!("CARGO_PKG_NAME")` of the registering crate).
    pub package: &'static str,
    /// The contract version the driver was written against. Accepted with any linked contract
    /// of the same major version; see [`CapabilitySpec::contract_version`].
    pub contract_version: Version,
    /// Every feature the driver may declare, for any options.
    pub supported_features: fn() -> &'static [&'static str],
    /// Deserialize the driver's options and compute the features they give. Builds nothing.
    /// Read it through [`DriverEntry::features_for`]: [`ParsedOptions`] is driverkit's.
    #[doc(hidden)]
    pub parse_options: fn(&RawOptions) -> Result<ParsedOptions, OptionsError>,
    /// Whether the options type accepts a key it does not know, given options it parsed:
    /// [`accepts_unknown_keys`] of the driver's `Options` (SANDLOOM-B022 when it does).
    #[doc(hidden)]
    pub accepts_unknown_keys: fn(&RawOptions) -> bool,
    /// The JSON Schema (draft 2020-12, as JSON text) of the driver's options, when its options
    /// type describes its own (`schemars::JsonSchema`); `None` when it does not, and then no
    /// schema is guessed (`infra schema` lists the driver as "schema unknown").
    pub options_schema: fn() -> Option<String>,
    /// Construct the driver from parsed options. Must not do I/O; that belongs in `start`.
    /// Only the kernel calls it, on what `parse_options` gave.
    #[doc(hidden)]
    pub build: fn(ParsedOptions, &BuildContext<'_>) -> Result<BuiltDriver, BoxError>,
}

impl DriverEntry {
    /// The features the driver declares for `options`: its options type reads them (refusing
    /// what it would refuse at startup) and its `features_for` answers. Builds nothing, starts
    /// nothing; for tools that describe the linked drivers (`infra drivers`). Driver code runs
    /// here, so a tool that must survive a panicking driver catches it.
    ///
    /// ```
    /// use sandloom_kernel::RawOptions;
    /// use sandloom_kernel::registry::drivers;
    ///
    /// // This example links no driver crate; an application's binary has its own.
    /// for entry in drivers() {
    ///     match entry.features_for(&RawOptions::default()) {
    ///         Ok(features) => println!("{}.{} with no options: {features:?}", entry.capability, entry.name),
    ///         Err(error) => println!("{}.{} needs options: {error}", entry.capability, entry.name),
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// The [`OptionsError`] of the driver's options type when it refuses `options` (an unknown
    /// key, a wrong type, a missing required option).
    pub fn features_for(&self, options: &RawOptions) -> Result<Vec<&'static str>, OptionsError> {
        (self.parse_options)(options).map(|parsed| parsed.features)
    }
}

/// The instance a driver is built for, as its gate needs it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct BuildContext<'a> {
    /// The instance name (`default`), shared: the kernel's records of the instance and its
    /// gate's telemetry hold the one `Arc` (a copy each was an allocation per instance at every
    /// start).
    pub instance: &'a Arc<str>,
    /// The features the instance declares for its options (`features_for`): what the gate
    /// allows. The kernel moves them here out of [`ParsedOptions::features`], and keeps them
    /// for its report once the driver is built, rather than copying them.
    pub features: &'a [&'static str],
    /// Whether its operations are traced and measured (`telemetry` in `INFRA`, default on).
    pub telemetry: bool,
}

impl fmt::Debug for DriverEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverEntry")
            .field("capability", &self.capability)
            .field("name", &self.name)
            .field("package", &self.package)
            .field("contract_version", &self.contract_version)
            .finish_non_exhaustive()
    }
}

/// A driver's options after deserialization, with the features they give.
#[doc(hidden)]
pub struct ParsedOptions {
    /// The typed options, erased (`T::Options` of the driver).
    pub value: Box<dyn Any + Send>,
    /// `features_for(&options)` of the driver. Startup moves them into the
    /// [`BuildContext`] before building.
    pub features: Vec<&'static str>,
}

/// A constructed driver, not yet started.
#[doc(hidden)]
pub struct BuiltDriver {
    /// Its lifecycle: an `Arc`, which the kernel shares between the driver's records (made
    /// so by the driver's build, rather than boxed and moved into one: that was an allocation
    /// per instance at every start).
    pub lifecycle: Arc<dyn ErasedLifecycle>,
    /// Its operations as `Arc<dyn OperationTrait>` (`Arc<dyn Cache>`), erased, for `Infra`.
    /// Built by driverkit, this is the instance's [`ErasedRoute`] as the operation trait.
    pub operations: Box<dyn Any + Send + Sync>,
    /// What `operations` routes through, so that a reload can point it at another driver of
    /// the same capability; `None` for a driver made without one (test doubles), whose
    /// instance a reload refuses to replace.
    pub route: Option<Arc<dyn ErasedRoute>>,
}

/// The route of an instance: what [`BuiltDriver::operations`] is, seen by the kernel.
///
/// The contract between driverkit's macros and the kernel (hidden, versioned with both):
///
/// - every handle modules hold (the `&dyn Trait` of an accessor, the `Arc` of
///   `capability_arc`) is the route, never the driver, so one store switches all of them;
/// - the route reads what it serves without a lock (an `arc-swap` load), and an operation keeps
///   what it read until it ends, so it finishes on the instance it began on;
/// - [`route_to`](Self::route_to) switches the route, in one atomic store, to what another
///   route of the same capability serves (the freshly built instance's), and hands back the
///   instance served before, whose [`Retired::holders`] counts the operations still on it.
pub trait ErasedRoute: Send + Sync {
    /// What the route serves now, erased, for a route of the same capability to take over.
    fn current(&self) -> Box<dyn Any + Send + Sync>;
    /// From now on, route every handle to what `next` serves; returns what was served before.
    ///
    /// # Errors
    /// When `next` is the route of another capability (nothing changes then).
    fn route_to(&self, next: &dyn ErasedRoute) -> Result<Box<dyn Retired>, BoxError>;
}

/// An instance a route no longer serves, kept alive until the operations begun on it end.
pub trait Retired: Send + Sync {
    /// Operations that began on it before the switch and have not ended (exact once the switch
    /// has returned: no operation can begin on it any more).
    fn holders(&self) -> usize;
}

/// A driver's health as it reports it.
///
/// ```
/// use sandloom_kernel::Health;
/// assert!(Health::Healthy.is_healthy());
/// assert!(!Health::Unhealthy("connection refused".into()).is_healthy());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Working.
    Healthy,
    /// Working, with a problem worth a look.
    Degraded(String),
    /// Not working.
    Unhealthy(String),
}

impl Health {
    /// `true` for [`Health::Healthy`].
    ///
    /// ```
    /// assert!(!sandloom_kernel::Health::Degraded("slow".into()).is_healthy());
    /// ```
    pub fn is_healthy(&self) -> bool {
        matches!(self, Self::Healthy)
    }
}

/// Lifecycle of a built driver, as the kernel drives it.
#[doc(hidden)]
pub trait ErasedLifecycle: Send + Sync {
    /// Connect, create, warm up.
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>>;
    /// Release everything; afterwards operations answer `Stopped`.
    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>>;
    /// Report health.
    fn health(&self) -> BoxFuture<'_, Health>;
    /// [`start`](Self::start), as a future that owns the driver: what the kernel polls in
    /// place on a single-threaded runtime, and spawns, unpolled, as a task on a multi-threaded
    /// one. Override it to hold the driver's future inline (the default holds `start`'s boxed
    /// future).
    fn start_owned(self: Arc<Self>) -> LifecycleFuture
    where
        Self: 'static,
    {
        LifecycleFuture::new(async move { self.start().await })
    }
    /// [`stop`](Self::stop), as a future that owns the driver; see
    /// [`start_owned`](Self::start_owned).
    fn stop_owned(self: Arc<Self>) -> LifecycleFuture
    where
        Self: 'static,
    {
        LifecycleFuture::new(async move { self.stop().await })
    }
    /// Refuse new operations (they answer `Stopped`); those in flight go on, except the ones
    /// waiting in an operation declared `#[waits]`, which answer `Stopped` at once.
    fn begin_drain(&self) {}
    /// Operations begun and not yet finished.
    fn in_flight(&self) -> usize {
        0
    }
    /// The drain's budget is spent: every operation still pending answers `Stopped` to its
    /// caller, whatever its driver does. Call it after [`begin_drain`](Self::begin_drain),
    /// before `stop`.
    fn abandon(&self) {}
}

/// Every driver linked into the binary. Iteration order is unspecified and means nothing.
#[doc(hidden)]
#[distributed_slice]
pub static DRIVERS: [DriverEntry];

/// Every capability spec linked into the binary. Iteration order is unspecified.
#[doc(hidden)]
#[distributed_slice]
pub static CAPABILITIES: [CapabilitySpec];

/// The linked driver entries.
///
/// ```
/// for entry in sandloom_kernel::registry::drivers() {
///     println!("{}.{} from {}", entry.capability, entry.name, entry.package);
/// }
/// ```
pub fn drivers() -> &'static [DriverEntry] {
    &DRIVERS
}

/// The linked capability specs.
///
/// ```
/// assert!(sandloom_kernel::registry::capabilities().iter().any(|s| s.name == "cache"));
/// ```
pub fn capabilities() -> &'static [CapabilitySpec] {
    &CAPABILITIES
}

/// Whether a driver written against contract version `driver` runs on the contract at
/// `contract`: both have the same major, where the major is the leftmost non-zero component,
/// as Cargo reads a version requirement. Above 1.0, minor and patch may differ either way;
/// under 1.0 the minor is the major (0.1 and 0.2 are incompatible, 0.1.0 and 0.1.4 are not),
/// and under 0.1 the patch is (0.0.1 and 0.0.2 are incompatible). Pre-release and build
/// metadata are not read: contract versions have none.
///
/// Cargo's rule, in one place: the kernel's verdict (SANDLOOM-B022) and driverkit's
/// compile-time check of `CONTRACT_VERSION` both call it, so they cannot disagree. A `const
/// fn`, so that driverkit refuses another major when a driver is compiled.
///
/// ```
/// use sandloom_kernel::registry::contract_compatible;
/// use sandloom_kernel::semver::Version;
///
/// let v = |s: &str| Version::parse(s).unwrap();
/// assert!(contract_compatible(&v("1.9.0"), &v("1.2.0")));
/// assert!(contract_compatible(&v("0.1.4"), &v("0.1.0")));
/// assert!(!contract_compatible(&v("0.2.0"), &v("0.1.0")));
/// assert!(!contract_compatible(&v("0.0.2"), &v("0.0.1")));
/// assert!(!contract_compatible(&v("2.0.0"), &v("1.0.0")));
/// ```
#[must_use]
pub const fn contract_compatible(driver: &Version, contract: &Version) -> bool {
    if driver.major != contract.major {
        false
    } else if driver.major > 0 {
        true
    } else if driver.minor != contract.minor {
        false
    } else if driver.minor > 0 {
        true
    } else {
        driver.patch == contract.patch
    }
}
