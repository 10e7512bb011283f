//! A copy of the path before issue 27, as the baseline of "what a call through the route
//! costs": the operation trait made dyn-compatible by `#[async_trait]` (one box per call for the
//! route's future), the route loading the instance from an `ArcSwap` and running the gate's work
//! (drain, telemetry when listened, the drain's cut) around the driver's future, itself boxed by
//! `#[async_trait]` behind `dyn`: two allocations per `get`. Only `get` is copied (the
//! benchmarks call nothing else); the reroute after a reload, a cold path, is left out.

use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use sandloom::sdk::InfraResult;
use sandloom::sdk::bytes::Bytes;
use sandloom_driverkit::__private::{GateContext, GateState, poll_gated};

/// The operation trait as it was: `async_trait`.
#[async_trait]
pub(crate) trait OldCache: Send + Sync {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>>;
}

/// The no-op driver as it was written: `#[async_trait]` on its impl.
pub(crate) struct OldNoop;

#[async_trait]
impl OldCache for OldNoop {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        Ok(None)
    }
}

/// The gate as a route held it: its state, then the driver, unsized (`dyn OldCache`).
struct OldGated<T: ?Sized> {
    state: GateState,
    driver: T,
}

/// The route as it was: what `infra.cache()` handed out.
pub(crate) struct OldRoute {
    current: ArcSwap<Arc<OldGated<dyn OldCache>>>,
}

#[async_trait]
impl OldCache for OldRoute {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        let current = self.current.load();
        let gate: &OldGated<dyn OldCache> = &current;
        let _in_flight = gate.state.enter()?;
        let future = gate.driver.get(key);
        if gate.state.listened() {
            let future = gate.state.observe(0, "cache.get", future);
            let mut future = pin!(future);
            let mut waiter = pin!(None);
            poll_fn(|cx| poll_gated(&gate.state, false, future.as_mut(), waiter.as_mut(), cx)).await
        } else {
            let mut future = pin!(future);
            let mut waiter = pin!(None);
            poll_fn(|cx| poll_gated(&gate.state, false, future.as_mut(), waiter.as_mut(), cx)).await
        }
    }
}

/// `Infra` reduced to its `cache()` accessor (a field read, as today's), over the old route.
pub(crate) struct OldInfra {
    cache: Option<Arc<dyn OldCache>>,
}

impl OldInfra {
    /// The old route over the no-op driver, telemetry on (nothing listens in the benchmarks).
    pub(crate) fn new() -> Self {
        let gated: Arc<OldGated<dyn OldCache>> = Arc::new(OldGated {
            state: GateState::new(
                "cache",
                &["get", "set", "delete"],
                &GateContext {
                    features: &[],
                    instance: &"default".into(),
                    driver: "noop",
                    telemetry: true,
                },
            ),
            driver: OldNoop,
        });
        Self {
            cache: Some(Arc::new(OldRoute {
                current: ArcSwap::from_pointee(gated),
            })),
        }
    }

    /// As `Infra::cache` is.
    #[inline]
    pub(crate) fn cache(&self) -> Option<&dyn OldCache> {
        self.cache.as_deref()
    }
}
