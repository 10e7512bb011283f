//! From a typed driver to the kernel's type-erased entry. Used by the macros only.

// Hidden glue for macro expansions; its errors are the driver's own, documented on `Driver`.
#![allow(clippy::missing_errors_doc)]

use std::marker::PhantomData;
use std::sync::Arc;

use sandloom_kernel::registry::{
    BoxError, BoxFuture, BuildContext, BuiltDriver, ErasedLifecycle, ParsedOptions,
};
use sandloom_kernel::{Health, OptionsError, RawOptions};

use crate::contract::ProvidedBy;
use crate::driver::Driver;
use crate::gate::{Gate, GateContext};
use crate::route::Route;

/// Deserialize `T::Options` and compute its features.
pub fn parse_options<T: Driver>(raw: &RawOptions) -> Result<ParsedOptions, OptionsError> {
    let options: T::Options = raw.deserialize()?;
    // The option the driver names, if any, is where the kernel places the error in `INFRA`.
    T::validate(&options)
        .map_err(|err| OptionsError::refused_by_driver(err.option().to_vec(), err.message()))?;
    let features = T::features_for(&options);
    Ok(ParsedOptions {
        value: Box::new(options),
        features,
    })
}

/// Construct `T`, put it behind the gate of contract `C`, and erase it into the kernel's form.
pub fn build<T: Driver, C: ProvidedBy<T>>(
    parsed: ParsedOptions,
    context: &BuildContext<'_>,
    driver: &'static str,
) -> Result<BuiltDriver, BoxError> {
    let ParsedOptions { value, features } = parsed;
    let options = value
        .downcast::<T::Options>()
        .map_err(|_| BoxError::from("options parsed for another driver type (a Sandloom bug)"))?;
    let context = GateContext {
        features: &features,
        instance: context.instance,
        driver,
        telemetry: context.telemetry,
    };
    let gated = Arc::new(C::Gate::wrap(T::from_options(*options)?, &context));
    // Modules get the route, never the gate: a reload switches what the route serves.
    let route = Arc::new(Route::<C>::new(C::erase(Arc::clone(&gated))));
    Ok(BuiltDriver {
        operations: Box::new(C::routed(Arc::clone(&route))),
        route: Some(route),
        lifecycle: Arc::new(Lifecycle::<T, C::Gate>(gated, PhantomData)),
    })
}

struct Lifecycle<T, G>(Arc<G>, PhantomData<fn() -> T>);

impl<T: Driver, G: Gate<T>> ErasedLifecycle for Lifecycle<T, G> {
    fn start(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.driver().start().await.map_err(BoxError::from) })
    }

    fn stop(&self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { self.0.driver().stop().await.map_err(BoxError::from) })
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(self.0.driver().health())
    }

    // One box per `start` and `stop` the kernel calls, not the default's two.
    fn start_owned(self: Arc<Self>) -> BoxFuture<'static, Result<(), BoxError>>
    where
        Self: 'static,
    {
        Box::pin(async move { self.0.driver().start().await.map_err(BoxError::from) })
    }

    fn stop_owned(self: Arc<Self>) -> BoxFuture<'static, Result<(), BoxError>>
    where
        Self: 'static,
    {
        Box::pin(async move { self.0.driver().stop().await.map_err(BoxError::from) })
    }

    fn begin_drain(&self) {
        self.0.state().begin_drain();
    }

    fn in_flight(&self) -> usize {
        self.0.state().in_flight()
    }

    fn abandon(&self) {
        self.0.state().abandon();
    }
}
