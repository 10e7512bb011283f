//! What a kit asks of an instance, what it reports when an obligation fails, and the timing
//! tolerance it holds drivers to: plain values, shared by every part of the harness.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use sandloom_driverkit::Driver;

/// What a kit asks of the instance it is about to build. The closure passed to a kit maps it to
/// the driver's options.
///
/// ```
/// use std::time::Duration;
/// use sandloom_conformance::cache::CacheConformance;
/// use sandloom_conformance::KitRequest;
/// use sandloom_driverkit::NoOptions;
/// # use sandloom_driverkit::{Driver, DriverError, Version};
/// # use sandloom_driverkit::cache::{CacheOps, CacheProvider};
/// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
/// # /// Stores nothing: a stand-in for a driver under test.
/// # pub struct ForgetfulCache;
/// # impl CacheOps for ForgetfulCache {
/// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
/// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
/// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
/// # }
/// # impl Driver for ForgetfulCache {
/// #     type Options = sandloom_driverkit::NoOptions;
/// #     fn supported_features() -> &'static [&'static str] { &[] }
/// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
/// # }
/// # impl CacheProvider for ForgetfulCache {
/// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
/// # }
///
/// let kit = CacheConformance::<ForgetfulCache>::new(|request: &KitRequest| {
///     assert!(request.scratch_dir.is_dir()); // empty, and removed after the obligation
///     assert!(!request.namespace.is_empty()); // unique per obligation and process
///     assert!(request.visibility_timeout < Duration::from_secs(5));
///     assert!(request.max_attempts >= 2);
///     NoOptions {} // a real driver would build its options from these
/// });
/// assert!(kit.check("get_missing_key_returns_none").is_ok());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct KitRequest {
    /// An empty directory that lives as long as the instance (for file-backed drivers).
    pub scratch_dir: PathBuf,
    /// A unique name for this instance (for drivers on shared servers: a key prefix, a schema,
    /// a queue name), so obligations never see each other's data.
    pub namespace: String,
    /// Task queues: the visibility timeout the kit needs (short, so redelivery is observable).
    pub visibility_timeout: Duration,
    /// Task queues: deliveries before a task is dead-lettered.
    pub max_attempts: u32,
    /// Point the options at an address where nothing answers (say, port 1 of `127.0.0.1`),
    /// keeping every secret: set only for the second instance of the secrets obligation
    /// (see [`Kit::secrets`](crate::Kit::secrets)), which checks the errors of a start that
    /// cannot connect. A driver without a server ignores it.
    pub unreachable: bool,
}

/// An obligation of a kit failed.
///
/// ```
/// let failure = sandloom_conformance::Failure::new("get_missing_key_returns_none", "got Some");
/// assert_eq!(failure.to_string(), "obligation `get_missing_key_returns_none` failed: got Some");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The obligation's name.
    pub obligation: String,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// A failure of `obligation` (kits make these; a driver's own test helpers may too).
    ///
    /// ```
    /// use sandloom_conformance::Failure;
    ///
    /// let failure = Failure::new("set_overwrites", "the second `set` was ignored");
    /// assert_eq!(failure.obligation, "set_overwrites");
    /// assert_eq!(failure.message, "the second `set` was ignored");
    /// ```
    pub fn new(obligation: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            obligation: obligation.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "obligation `{}` failed: {}",
            self.obligation, self.message
        )
    }
}

impl std::error::Error for Failure {}

/// A declared timing tolerance: how far past the moment the contract names a timed event may
/// come (an entry's expiry, the end of a `reserve`'s wait, of a lease or a visibility timeout, a
/// redelivery after `retry_after`), and how far a reported time (a lease's `expires_at`, a
/// receipt's `accepted_at`) may be off. Every timing obligation holds the driver to it as an
/// upper bound; lower bounds ("not before") stay as the kits state them.
///
/// The default, [`Tolerance::DEFAULT`], is tight: an in-memory driver keeps it. A driver for a
/// server may widen it through its kit's `tolerance` builder method, up to [`Tolerance::MAX`];
/// a kit given more answers every obligation with a failure saying so.
///
/// ```
/// use std::time::Duration;
/// use sandloom_conformance::Tolerance;
///
/// assert_eq!(Tolerance::default(), Tolerance::DEFAULT);
/// let widened = Tolerance::new(Duration::from_secs(1)).unwrap();
/// assert_eq!(widened.get(), Duration::from_secs(1));
/// let refused = Tolerance::new(Tolerance::MAX + Duration::from_millis(1)).unwrap_err();
/// assert!(refused.contains("above the maximum"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tolerance(Duration);

impl Tolerance {
    /// The tolerance a kit holds a driver to unless told otherwise: 250 ms.
    pub const DEFAULT: Self = Self(Duration::from_millis(250));
    /// The most a driver may declare: 5 s. Beyond it a timing obligation would say too little
    /// (a 300 ms TTL kept for seconds is not "expired").
    pub const MAX: Duration = Duration::from_secs(5);

    /// A tolerance of `late`.
    ///
    /// # Errors
    /// When `late` is above [`Tolerance::MAX`]: what was asked, and the maximum.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_conformance::Tolerance;
    /// assert!(Tolerance::new(Duration::from_millis(800)).is_ok());
    /// assert!(Tolerance::new(Duration::from_secs(60)).is_err());
    /// ```
    pub fn new(late: Duration) -> Result<Self, String> {
        if late > Self::MAX {
            return Err(format!(
                "a timing tolerance of {late:?} is above the maximum of {:?}: a driver that \
                 needs more does not keep the contract's timing",
                Self::MAX
            ));
        }
        Ok(Self(late))
    }

    /// The tolerance as a duration.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sandloom_conformance::Tolerance;
    /// assert_eq!(Tolerance::DEFAULT.get(), Duration::from_millis(250));
    /// ```
    #[must_use]
    pub const fn get(self) -> Duration {
        self.0
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How long one obligation may take before it fails as hung.
pub(crate) const OBLIGATION_TIME_LIMIT: Duration = Duration::from_mins(1);

/// Builds the options of each instance from the driver author's closure.
pub(crate) type OptionsFn<T> = dyn Fn(&KitRequest) -> <T as Driver>::Options + Send + Sync;
