//! One instance of the driver under test, made as the kernel makes one: the options
//! `validate`d, `features_for` asked, then the kernel's own steps (`construct::make`: the
//! features checked against the contract's spec and the driver's `supported_features`, then the
//! construction behind the contract's gate, a panic caught). Not started.

use std::any::Any;

use sandloom_driverkit::__private::{BoxError, BuildContext, BuiltDriver, ParsedOptions};
use sandloom_driverkit::{Driver, DriverError, Health};
use sandloom_kernel::registry::{ErasedLifecycle, capabilities};

use super::shared::{ServeFn, Shared};

/// The instance, not yet started.
pub(crate) struct Made<T> {
    /// The driver inside its gate.
    pub(crate) driver: Shared<T>,
    /// `Arc<C::Operations>`: what modules get.
    pub(crate) operations: Box<dyn Any + Send + Sync>,
    /// What `features_for` declared.
    pub(crate) features: Vec<&'static str>,
}

/// Why no instance was made.
pub(crate) enum NotMade {
    /// `validate` refused the options.
    Invalid(DriverError),
    /// `from_options` failed.
    Construction(DriverError),
    /// The kernel would refuse it (its description), or the contract's spec is not linked.
    Refused(String),
}

impl NotMade {
    /// The failure of an obligation whose instance could not be made.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Invalid(error) => format!("the kit's options were refused: {error}"),
            Self::Construction(error) => format!("construction failed: {error}"),
            Self::Refused(reasons) => format!("the kernel would refuse this instance: {reasons}"),
        }
    }
}

/// Make an instance of `T` for the contract `contract` from `options`, gated by `serve`.
pub(crate) fn make<T: Driver>(
    contract: &'static str,
    serve: ServeFn<T>,
    options: T::Options,
) -> Result<Made<T>, NotMade> {
    T::validate(&options).map_err(NotMade::Invalid)?;
    let features = T::features_for(&options);
    let Some(spec) = capabilities().iter().find(|spec| spec.name == contract) else {
        return Err(NotMade::Refused(format!(
            "the spec of the `{contract}` contract is not linked into this test binary"
        )));
    };
    // Kept aside by the construction step: the typed driver (the kernel's form erases it), or
    // the driver's own error (the secrets obligation reads its `Debug` and causes).
    let mut made: Option<Shared<T>> = None;
    let mut failed: Option<DriverError> = None;
    let parsed = ParsedOptions {
        value: Box::new(options),
        features: features.clone(),
    };
    // The gate itself is built by `serve`, telemetry on; this is the kernel's form of the same.
    let context = BuildContext {
        instance: &"kit".into(),
        features: &features,
        telemetry: true,
    };
    let built = sandloom_kernel::__private::construct::make(
        spec,
        T::supported_features(),
        parsed,
        &context,
        |parsed, _| {
            let options = parsed.value.downcast::<T::Options>().map_err(|_| {
                BoxError::from("options made for another driver type (a Sandloom bug)")
            })?;
            match T::from_options(*options) {
                Ok(driver) => {
                    let (driver, operations) = serve(driver, &parsed.features);
                    made = Some(driver.clone());
                    Ok(BuiltDriver {
                        operations,
                        lifecycle: std::sync::Arc::new(Lifecycle(driver)),
                        // The kit calls the gate directly; it never reloads.
                        route: None,
                    })
                }
                Err(error) => {
                    let message = BoxError::from(error.to_string());
                    failed = Some(error);
                    Err(message)
                }
            }
        },
    );
    if let Some(error) = failed {
        return Err(NotMade::Construction(error));
    }
    let built = built.map_err(NotMade::Refused)?;
    let driver = made.ok_or_else(|| {
        NotMade::Refused("the driver was not constructed (a Sandloom bug)".into())
    })?;
    Ok(Made {
        driver,
        operations: built.operations,
        features,
    })
}

/// The kernel's form of the driver's lifecycle; the kit drives the typed driver itself.
struct Lifecycle<T>(Shared<T>);

impl<T: Driver> ErasedLifecycle for Lifecycle<T> {
    fn start(&self) -> sandloom_kernel::registry::BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.start().await.map_err(BoxError::from) })
    }

    fn stop(&self) -> sandloom_kernel::registry::BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.stop().await.map_err(BoxError::from) })
    }

    fn health(&self) -> sandloom_kernel::registry::BoxFuture<'_, Health> {
        Box::pin(self.0.health())
    }
}
