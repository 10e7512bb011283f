//! From a typed driver to the kernel's type-erased entry. Used by the macros only.

// Hidden glue for macro expansions; its errors are the driver's own, documented on `Driver`.
#![allow(clippy::missing_errors_doc)]

use std::sync::Arc;

use sandloom_kernel::registry::{BoxError, BoxFuture, BuiltDriver, ErasedLifecycle, ParsedOptions};
use sandloom_kernel::{Health, OptionsError, RawOptions};

use crate::driver::Driver;

/// Deserialize `T::Options` and compute its features.
pub fn parse_options<T: Driver>(raw: &RawOptions) -> Result<ParsedOptions, OptionsError> {
    let options: T::Options = raw.deserialize()?;
    let features = T::features_for(&options);
    Ok(ParsedOptions {
        value: Box::new(options),
        features,
    })
}

/// Construct `T` and erase it into the kernel's form.
pub fn build<T: Driver, Ops: ?Sized + Send + Sync + 'static>(
    parsed: ParsedOptions,
    upcast: fn(Arc<T>) -> Arc<Ops>,
) -> Result<BuiltDriver, BoxError> {
    let options = parsed
        .value
        .downcast::<T::Options>()
        .map_err(|_| BoxError::from("options parsed for another driver type (a Sandloom bug)"))?;
    let driver = Arc::new(T::from_options(*options)?);
    Ok(BuiltDriver {
        operations: Box::new(upcast(Arc::clone(&driver))),
        lifecycle: Box::new(Lifecycle(driver)),
    })
}

struct Lifecycle<T>(Arc<T>);

impl<T: Driver> ErasedLifecycle for Lifecycle<T> {
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.start().await.map_err(BoxError::from) })
    }

    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.stop().await.map_err(BoxError::from) })
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(self.0.health())
    }
}
