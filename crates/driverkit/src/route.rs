//! The route: what `Infra` holds for an instance, so that a reload can switch every handle
//! modules hold to a new driver at one instant (issue 26).
//!
//! A route is the one object behind an instance's `&dyn Cache` and `Arc<dyn Cache>`. It holds
//! the instance's gated driver in an [`ArcSwap`]: each operation loads it without a lock (a
//! thread-local debt slot, no shared reference count written), runs the gate's work — drain,
//! features, telemetry — on what it loaded, and calls the driver. The operation keeps what it
//! loaded until it ends, so it finishes on the instance it began on, even if the route is
//! switched meanwhile. [`ErasedRoute::route_to`] switches it: one store, after which every new
//! operation goes to the new instance. The gate's work is generated into the route's impl of
//! the operation trait (`__gate!`) rather than called on a gate object: one boxed future per
//! call, as without a route, instead of two.
//!
//! A reload drains the old instance as soon as the route is switched: an operation that loaded
//! the old instance just before the switch and reaches its gate after the drain began is
//! refused there, and one declared `#[waits]` still waiting on it is cut. Neither has had an
//! effect (`GateExit::may_run_elsewhere`), so the route runs it again on the instance it now
//! serves (`Route::rerouted`): the caller of a long poll never sees a reload. Only an operation
//! that can be cut clones its arguments for that; a refused one has not handed its arguments
//! to its driver yet. An operation whose arguments are bound to the instance left behind (a
//! `changes` cursor it issued) is not run again with them: its declaration says how to answer
//! on the new instance instead (`#[waits = "…", rebind = path]`, see sdk-infra's `declare.rs`),
//! since only the contract knows which arguments an instance issued. At shutdown the route
//! keeps serving the draining instance, so nothing runs again: refused and cut operations
//! answer `Stopped`.

use std::any::Any;
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};
use sandloom_kernel::registry::{BoxError, ErasedRoute, Retired};

use crate::contract::Contract;

/// What an operation holds of the instance it runs on, the gated driver `G` as a route loaded
/// it: the instance cannot be freed under it, and a reload waits for it before stopping it.
pub type Held<G> = Guard<Arc<Arc<G>>>;

/// The route of an instance of contract `C`: see the module documentation.
pub struct Route<C: Contract> {
    current: ArcSwap<Arc<C::Gated>>,
}

impl<C: Contract> Route<C> {
    /// A route serving `gated`.
    pub fn new(gated: Arc<C::Gated>) -> Self {
        Self {
            current: ArcSwap::from_pointee(gated),
        }
    }

    /// What the route serves now. Hold it for the whole operation: the instance cannot be freed
    /// under it, and a reload waits for it before stopping the instance.
    #[inline]
    pub fn load(&self) -> Guard<Arc<Arc<C::Gated>>> {
        self.current.load()
    }

    /// What the route serves now, when that is another instance than `loaded`: where an
    /// operation that `loaded` refused or cut ([`GateExit::may_run_elsewhere`]) runs again.
    /// `None` while the route still serves `loaded` (a shutdown, not a reload): the operation
    /// then answers as `loaded` did, and never runs twice on one instance.
    ///
    /// [`GateExit::may_run_elsewhere`]: crate::__private::GateExit::may_run_elsewhere
    #[cold]
    pub fn rerouted(
        &self,
        loaded: &Guard<Arc<Arc<C::Gated>>>,
    ) -> Option<Guard<Arc<Arc<C::Gated>>>> {
        let now = self.current.load();
        (!Arc::ptr_eq(&**now, &**loaded)).then_some(now)
    }
}

impl<C: Contract> ErasedRoute for Route<C> {
    fn current(&self) -> Box<dyn Any + Send + Sync> {
        Box::new(self.current.load_full())
    }

    fn route_to(&self, next: &dyn ErasedRoute) -> Result<Box<dyn Retired>, BoxError> {
        let next = next
            .current()
            .downcast::<Arc<Arc<C::Gated>>>()
            .map_err(|_| {
                BoxError::from(format!(
                    "a route of `{}` was asked to serve another capability's instance (a Sandloom bug)",
                    C::NAME
                ))
            })?;
        // After `swap` returns, every reader that loaded the old value holds a counted
        // reference to it (arc-swap pays the debts of the value it replaces), so the count of
        // `Before` is exact from here on.
        Ok(Box::new(Before(self.current.swap(*next))))
    }
}

/// What a route served before a switch.
struct Before<X>(Arc<X>);

impl<X: Send + Sync> Retired for Before<X> {
    fn holders(&self) -> usize {
        // Ours is the one reference that is not an operation's.
        Arc::strong_count(&self.0).saturating_sub(1)
    }
}
