//! Running an obligation: a fresh instance, made as the kernel makes one and started, the
//! obligation on a Tokio runtime of its own under a time limit, its panics and hangs caught, and
//! the instance stopped afterwards.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use sandloom_driverkit::Driver;
use sandloom_kernel::__private::panic_message;

use super::build::make;
use super::instance::Instance;
use super::kit::Kit;
use super::request::{Failure, KitRequest, OBLIGATION_TIME_LIMIT};
use super::secret_rules::SecretRules;

impl<T: Driver, S: Send + Sync + 'static> Kit<T, S> {
    async fn instance(&self, scratch: &Path, namespace: String) -> Result<Instance<T>, String> {
        let request = KitRequest {
            scratch_dir: scratch.to_path_buf(),
            namespace,
            visibility_timeout: Duration::from_millis(400),
            max_attempts: 3,
            unreachable: false,
        };
        let options = (self.options)(&request);
        // The kernel's own steps, not a copy of them (see `build.rs`).
        let made = make(self.name, self.serve, options).map_err(|not| not.message())?;
        made.driver
            .start()
            .await
            .map_err(|err| format!("start failed: {err}"))?;
        Ok(Instance {
            driver: made.driver,
            operations: made.operations,
            features: made.features,
            request,
            secrets: Arc::clone(&self.secrets) as Arc<dyn SecretRules<T>>,
        })
    }

    /// Run `check` on a fresh, started instance; stop it afterwards (unless the check did).
    pub(super) fn run<F>(&self, obligation: &str, check: F) -> Result<(), Failure>
    where
        F: for<'a> FnOnce(&'a Instance<T>) -> BoxFuture<'a, Result<(), String>>,
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
            let instance = AssertUnwindSafe(self.instance(scratch.path(), namespace))
                .catch_unwind()
                .await
                .map_err(|payload| {
                    fail(format!("the driver panicked: {}", panic_message(&*payload)))
                })?
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
                    panic_message(&*payload)
                ))),
                Err(_) => Err(fail(format!(
                    "did not finish within {} s",
                    OBLIGATION_TIME_LIMIT.as_secs()
                ))),
            }
        })
    }
}
