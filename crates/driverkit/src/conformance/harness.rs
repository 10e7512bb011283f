//! Running one obligation on one fresh instance, with its panics and hangs contained.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::FutureExt as _;

use crate::Driver;

/// What a kit asks of the instance it is about to build. The closure passed to a kit maps it to
/// the driver's options.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::conformance::cache::CacheConformance;
/// use sandloom_driverkit::conformance::KitRequest;
/// use sandloom_driverkit::NoOptions;
/// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
/// # use sandloom_driverkit::cache::{Cache, CacheProvider};
/// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
/// # /// Stores nothing: a stand-in for a driver under test.
/// # pub struct ForgetfulCache;
/// # #[async_trait]
/// # impl Cache for ForgetfulCache {
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
}

/// An obligation of a kit failed.
///
/// ```
/// let failure = sandloom_driverkit::conformance::Failure::new("get_missing_key_returns_none", "got Some");
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
    /// use sandloom_driverkit::conformance::Failure;
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

/// How long one obligation may take before it fails as hung.
pub(crate) const OBLIGATION_TIME_LIMIT: Duration = Duration::from_mins(1);

/// A started instance under test and what the kit knows of it.
pub(crate) struct Instance<T> {
    /// Shared, so obligations can spawn tasks on several threads.
    pub(crate) driver: std::sync::Arc<T>,
    pub(crate) features: Vec<&'static str>,
    pub(crate) request: KitRequest,
}

impl<T> Instance<T> {
    pub(crate) fn declares(&self, feature: &str) -> bool {
        self.features.contains(&feature)
    }
}

/// Builds instances from the driver author's closure.
type OptionsFn<T> = dyn Fn(&KitRequest) -> <T as Driver>::Options + Send + Sync;

pub(crate) struct Factory<T: Driver> {
    options: Box<OptionsFn<T>>,
}

impl<T: Driver> Factory<T> {
    pub(crate) fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Self {
            options: Box::new(options),
        }
    }

    async fn instance(&self, scratch: &Path, namespace: String) -> Result<Instance<T>, String> {
        let request = KitRequest {
            scratch_dir: scratch.to_path_buf(),
            namespace,
            visibility_timeout: Duration::from_millis(400),
            max_attempts: 3,
        };
        let options = (self.options)(&request);
        let features = T::features_for(&options);
        let driver =
            T::from_options(options).map_err(|err| format!("construction failed: {err}"))?;
        driver
            .start()
            .await
            .map_err(|err| format!("start failed: {err}"))?;
        Ok(Instance {
            driver: std::sync::Arc::new(driver),
            features,
            request,
        })
    }

    /// Run `check` on a fresh, started instance; stop it afterwards (unless the check did).
    pub(crate) fn run<F>(&self, obligation: &str, check: F) -> Result<(), Failure>
    where
        F: for<'a> FnOnce(
            &'a Instance<T>,
        ) -> futures_util::future::BoxFuture<'a, Result<(), String>>,
    {
        let fail = |message: String| Failure::new(obligation, message);
        let scratch = tempfile::tempdir()
            .map_err(|err| fail(format!("cannot create a scratch directory: {err}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|err| fail(format!("cannot start a Tokio runtime: {err}")))?;
        let namespace = format!("kit-{obligation}-{}", std::process::id());
        runtime.block_on(async {
            let instance = self
                .instance(scratch.path(), namespace)
                .await
                .map_err(fail)?;
            let outcome = tokio::time::timeout(
                OBLIGATION_TIME_LIMIT,
                AssertUnwindSafe(check(&instance)).catch_unwind(),
            )
            .await;
            // Stopping twice must be harmless; the stop obligation stops on its own.
            let _ = AssertUnwindSafe(instance.driver.stop())
                .catch_unwind()
                .await;
            match outcome {
                Ok(Ok(Ok(()))) => Ok(()),
                Ok(Ok(Err(message))) => Err(fail(message)),
                Ok(Err(payload)) => Err(fail(format!(
                    "the driver panicked: {}",
                    payload
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_default()
                ))),
                Err(_) => Err(fail(format!(
                    "did not finish within {} s",
                    OBLIGATION_TIME_LIMIT.as_secs()
                ))),
            }
        })
    }
}

/// The part every kit shares: its name list and how a test reports.
pub(crate) fn assert_outcome(outcome: Result<(), Failure>) {
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

pub(crate) fn assert_names(kit: &str, known: &[&str], generated: &[&str]) {
    let missing: Vec<&&str> = known.iter().filter(|n| !generated.contains(n)).collect();
    let unknown: Vec<&&str> = generated.iter().filter(|n| !known.contains(n)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{kit}: the test macro and the kit disagree; without a test: {missing:?}; unknown: {unknown:?}"
    );
}

/// A future that borrows the instance, boxed (obligations are plain `async fn`s).
pub(crate) fn boxed<'a, F>(future: F) -> futures_util::future::BoxFuture<'a, Result<(), String>>
where
    F: Future<Output = Result<(), String>> + Send + 'a,
{
    Box::pin(future)
}
