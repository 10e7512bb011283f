//! Typed capability keys.

use std::fmt;
use std::marker::PhantomData;

/// A typed key for a capability: its name, and the operation trait its instances implement.
///
/// `CapabilityRef<dyn Cache>` is how a module says "the cache capability" to
/// [`Infra::capability`](crate::Infra::capability) and gets back a `&dyn Cache`, with no
/// downcasting in module code. Built-in keys are [`CACHE`](crate::CACHE),
/// [`NOTIFIER`](crate::NOTIFIER), [`OBJECT_STORE`](crate::OBJECT_STORE),
/// [`TASK_QUEUE`](crate::TASK_QUEUE), [`LOCK`](crate::LOCK) and the experimental
/// [`SECRETS`](crate::SECRETS).
///
/// A package that defines its own capability declares its own key next to its operation trait:
///
/// ```
/// use sandloom_sdk_infra::CapabilityRef;
///
/// pub trait Search: Send + Sync {
///     fn query(&self, text: &str) -> Vec<String>;
/// }
/// pub const SEARCH: CapabilityRef<dyn Search> = CapabilityRef::new("search");
/// assert_eq!(SEARCH.name(), "search");
/// ```
pub struct CapabilityRef<P: ?Sized> {
    name: &'static str,
    // `fn() -> Box<P>`: covariant, and Send + Sync whatever P is, so keys can live in statics.
    operations: PhantomData<fn() -> Box<P>>,
}

impl<P: ?Sized> CapabilityRef<P> {
    /// A key for the capability called `name`.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{CapabilityRef, Cache};
    /// const MY_CACHE: CapabilityRef<dyn Cache> = CapabilityRef::new("cache");
    /// assert_eq!(MY_CACHE.name(), "cache");
    /// ```
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            operations: PhantomData,
        }
    }

    /// The capability name, as written in `INFRA` (`cache`, `objectstore`, …).
    ///
    /// ```
    /// assert_eq!(sandloom_sdk_infra::OBJECT_STORE.name(), "objectstore");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<P: ?Sized> Clone for CapabilityRef<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: ?Sized> Copy for CapabilityRef<P> {}

impl<P: ?Sized> fmt::Debug for CapabilityRef<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CapabilityRef").field(&self.name).finish()
    }
}

/// The instance name used when a module does not name one.
///
/// ```
/// assert_eq!(sandloom_sdk_infra::DEFAULT_INSTANCE, "default");
/// ```
pub const DEFAULT_INSTANCE: &str = "default";
