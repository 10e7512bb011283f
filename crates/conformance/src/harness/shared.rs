//! The driver under test behind its contract's gate, shared with the tasks an obligation spawns.

use std::any::Any;
use std::sync::Arc;

use sandloom_driverkit::__private::Gate;
use sandloom_driverkit::{Driver, ProvidedBy};

/// The driver under test, shared: clone it into the tasks an obligation spawns.
///
/// ```
/// # use sandloom_conformance::Instance;
/// # use sandloom_driverkit::cache::CacheProvider;
/// fn spawn_writer<T: CacheProvider>(i: &Instance<T>) -> tokio::task::JoinHandle<()> {
///     let driver = i.shared();
///     tokio::spawn(async move { let _ = driver.set("k", "v".into()).await; })
/// }
/// ```
pub struct Shared<T>(Arc<dyn Gated<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.driver()
    }
}

/// A gate, whatever its contract: the driver inside it.
trait Gated<T>: Send + Sync {
    fn driver(&self) -> &T;
}

impl<T: Driver, G: Gate<T>> Gated<T> for G {
    fn driver(&self) -> &T {
        Gate::driver(self)
    }
}

/// Put `driver` behind the gate of contract `C`, as the kernel does.
pub(crate) fn serve<C: ProvidedBy<T>, T: Driver>(
    driver: T,
    features: &[&'static str],
) -> (Shared<T>, Box<dyn Any + Send + Sync>) {
    // Telemetry on, as the kernel builds instances by default: the kit exercises that path too.
    let context = sandloom_driverkit::__private::GateContext {
        features,
        instance: &"kit".into(),
        driver: "under-test",
        telemetry: true,
    };
    let gated = Arc::new(C::Gate::wrap(driver, &context));
    let operations: Arc<C::Operations> = C::upcast(Arc::clone(&gated));
    (Shared(gated), Box::new(operations))
}

/// How a kit puts a driver behind its contract's gate.
pub(crate) type ServeFn<T> = fn(T, &[&'static str]) -> (Shared<T>, Box<dyn Any + Send + Sync>);
