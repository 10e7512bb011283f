//! What an obligation is given: the started instance, and what the kit knows of it.

use std::any::Any;
use std::sync::Arc;

use sandloom_driverkit::Contract;

use super::request::KitRequest;
use super::secret_rules::SecretRules;
use super::shared::Shared;

/// A started instance under test and what the kit knows of it: what an obligation is given.
///
/// The instance was made through the kernel's own steps: options from the kit's closure,
/// `validate`, `features_for`, the features checked against the contract as startup checks
/// them, `from_options` with the contract's feature gate around it, then `start`; the kit stops
/// it afterwards. An obligation reaches the driver itself with
/// [`driver`](Self::driver) (its own behaviour, undeclared features included), and what a module
/// gets with [`served`](Self::served) (through the gate, as the kernel serves it).
///
/// ```
/// use sandloom_conformance::Instance;
/// use sandloom_driverkit::cache::{CacheCapability, CacheProvider, TTL};
///
/// // An obligation of a kit: checks what it can, and says what went wrong otherwise.
/// async fn remembers<T: CacheProvider>(i: &Instance<T>, _: &()) -> Result<(), String> {
///     let cache = i.served::<CacheCapability>(); // what modules get
///     cache.set("k", "v".into()).await.map_err(|e| format!("set failed: {e}"))?;
///     if i.declares(TTL) {
///         // … exercise the feature; otherwise check that it answers `Unsupported`.
///     }
///     Ok(())
/// }
/// ```
pub struct Instance<T> {
    /// The driver, inside its gate; shared, so obligations can spawn tasks on several threads.
    pub(crate) driver: Shared<T>,
    /// `Arc<C::Operations>` of the kit's contract `C`: the gated driver as modules get it.
    pub(crate) operations: Box<dyn Any + Send + Sync>,
    pub(crate) features: Vec<&'static str>,
    pub(crate) request: KitRequest,
    /// The kit's declared secrets, for the secrets obligation.
    pub(crate) secrets: Arc<dyn SecretRules<T>>,
}

impl<T: 'static> Instance<T> {
    /// The driver under test, itself (not through the gate).
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// # use sandloom_driverkit::cache::CacheProvider;
    /// async fn empty<T: CacheProvider>(i: &Instance<T>) -> bool {
    ///     matches!(i.driver().get("never-written").await, Ok(None))
    /// }
    /// ```
    pub fn driver(&self) -> &T {
        &self.driver
    }

    /// The driver under test, shared, for tasks an obligation spawns.
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// # use sandloom_driverkit::cache::CacheProvider;
    /// fn spawn_writer<T: CacheProvider>(i: &Instance<T>) -> tokio::task::JoinHandle<()> {
    ///     let driver = i.shared();
    ///     tokio::spawn(async move { let _ = driver.set("k", "v".into()).await; })
    /// }
    /// ```
    pub fn shared(&self) -> Shared<T> {
        self.driver.clone()
    }

    /// The driver as modules get it: behind the feature gate of the kit's contract `C`, so an
    /// operation of an undeclared feature answers `Unsupported` whatever the driver implements.
    ///
    /// # Panics
    /// When `C` is not the contract the kit was built for (a bug in the kit).
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// use sandloom_driverkit::cache::{CacheCapability, CacheProvider};
    /// async fn served_empty<T: CacheProvider>(i: &Instance<T>) -> bool {
    ///     matches!(i.served::<CacheCapability>().get("never-written").await, Ok(None))
    /// }
    /// ```
    pub fn served<C: Contract>(&self) -> &C::Operations {
        match self.operations.downcast_ref::<Arc<C::Operations>>() {
            Some(operations) => operations,
            None => panic!(
                "the kit was not built for the contract `{}`: pass that contract to `Kit::build`",
                C::NAME
            ),
        }
    }

    /// [`served`](Self::served), owned: for helpers that keep the operations in a task (the
    /// lock's keep-alive).
    pub(crate) fn served_arc<C: Contract>(&self) -> Arc<C::Operations> {
        match self.operations.downcast_ref::<Arc<C::Operations>>() {
            Some(operations) => Arc::clone(operations),
            None => panic!(
                "the kit was not built for the contract `{}`: pass that contract to `Kit::build`",
                C::NAME
            ),
        }
    }

    /// Whether the instance declared `feature` (its `features_for` of its options).
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// fn bulk<T: 'static>(i: &Instance<T>) -> bool { i.declares("bulk") }
    /// ```
    pub fn declares(&self, feature: &str) -> bool {
        self.features.contains(&feature)
    }

    /// Every feature the instance declared.
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// fn none<T: 'static>(i: &Instance<T>) -> bool { i.features().is_empty() }
    /// ```
    pub fn features(&self) -> &[&'static str] {
        &self.features
    }

    /// What the kit asked of this instance.
    ///
    /// ```
    /// # use sandloom_conformance::Instance;
    /// fn scratch<T: 'static>(i: &Instance<T>) -> &std::path::Path { &i.request().scratch_dir }
    /// ```
    pub fn request(&self) -> &KitRequest {
        &self.request
    }
}
