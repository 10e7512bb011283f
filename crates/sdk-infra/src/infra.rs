//! The `Infra` handle modules receive, and its accessors.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::cache::Cache;
use crate::capability::{CapabilityRef, DEFAULT_INSTANCE};
use crate::lock::Lock;
use crate::notifier::Notifier;
use crate::objectstore::ObjectStore;
use crate::secrets::Secrets;
use crate::taskqueue::TaskQueue;
use crate::{CACHE, LOCK, NOTIFIER, OBJECT_STORE, SECRETS, TASK_QUEUE};

/// An accessor found nothing usable under the capability and instance it was asked for.
///
/// ```
/// use sandloom_sdk_infra::{Infra, CACHE};
/// let infra = Infra::builder().build().unwrap();
/// let err = infra.capability(&CACHE, "sessions").err().unwrap();
/// assert!(err.to_string().contains("no instance `sessions` of capability `cache`"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    /// No instance of that name is configured.
    #[error(
        "no instance `{instance}` of capability `{capability}` is configured (configured: {}); \
         add `[{capability}.{instance}]` to INFRA, or declare it with `requires!` so startup checks it",
        if configured.is_empty() { "none".to_string() } else { configured.join(", ") }
    )]
    NotConfigured {
        /// The capability asked for.
        capability: String,
        /// The instance asked for.
        instance: String,
        /// The instances of that capability that are configured, sorted.
        configured: Vec<String>,
    },
    /// The instance exists but implements another operation trait than the key names: a
    /// `CapabilityRef` was declared with the wrong trait for its capability name.
    #[error(
        "instance `{instance}` of capability `{capability}` does not implement the operation \
         trait of this CapabilityRef; check the trait the key was declared with"
    )]
    WrongType {
        /// The capability asked for.
        capability: String,
        /// The instance asked for.
        instance: String,
    },
    /// Two instances with the same capability and name were added to a builder.
    #[error("instance `{instance}` of capability `{capability}` was added twice")]
    Duplicate {
        /// The capability.
        capability: String,
        /// The instance.
        instance: String,
    },
}

struct Slot {
    capability: &'static str,
    instance: Name,
    // Always an `Arc<P>` for the `P` of the capability's key; see `InfraBuilder::with_erased`.
    operations: Box<dyn Any + Send + Sync>,
}

/// An instance's name: the caller's own, or one the runtime shares with its other records of
/// the instance (its report line, its telemetry), which saves a copy per instance at every
/// start.
enum Name {
    Owned(Box<str>),
    Shared(Arc<str>),
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Self::Owned(name) => name,
            Self::Shared(name) => name,
        }
    }
}

/// The capabilities an application configured, as modules see them.
///
/// Resolve what you use once (at module setup) and keep the reference: the accessors look up a
/// name, the reference they return costs nothing more to use than a held `Arc<dyn Trait>`.
/// The default-instance shorthands ([`cache`](Infra::cache) and friends) are a field read.
///
/// ```
/// use std::sync::Arc;
/// use sandloom_sdk_infra::{Cache, CacheOps, Infra, InfraResult, CACHE};
/// # use sandloom_sdk_infra::{bytes::Bytes};
/// # struct NullCache;
/// # impl CacheOps for NullCache {
/// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
/// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
/// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
/// # }
///
/// // In a module's unit test, build an Infra around a fake; in an application the kernel builds it.
/// let infra = Infra::builder()
///     .with(&CACHE, "default", Arc::new(NullCache) as Arc<dyn Cache>)
///     .build()
///     .unwrap();
/// let cache: &dyn Cache = infra.cache().unwrap();
/// assert!(infra.capability(&CACHE, "default").is_ok());
/// ```
pub struct Infra {
    slots: Box<[Slot]>,
    cache: Option<Arc<dyn Cache>>,
    notifier: Option<Arc<dyn Notifier>>,
    object_store: Option<Arc<dyn ObjectStore>>,
    task_queue: Option<Arc<dyn TaskQueue>>,
    lock: Option<Arc<dyn Lock>>,
    secrets: Option<Arc<dyn Secrets>>,
}

impl Infra {
    /// Start building an `Infra` (the kernel does this; module tests may too).
    ///
    /// ```
    /// let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert_eq!(infra.instances().count(), 0);
    /// ```
    pub fn builder() -> InfraBuilder {
        InfraBuilder { slots: Vec::new() }
    }

    /// The instance `instance` of the capability keyed by `capability`.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Infra, CACHE};
    /// # let infra = Infra::builder().build().unwrap();
    /// match infra.capability(&CACHE, "sessions") {
    ///     Ok(cache) => { /* keep `cache` for the module's lifetime */ }
    ///     Err(err) => eprintln!("{err}"),
    /// }
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when there is no such instance, listing those there are;
    /// [`AccessError::WrongType`] when the key's trait does not match the instance.
    #[inline]
    pub fn capability<P: ?Sized + 'static>(
        &self,
        capability: &CapabilityRef<P>,
        instance: &str,
    ) -> Result<&P, AccessError> {
        self.arc_ref(capability, instance).map(|arc| &**arc)
    }

    /// Like [`capability`](Infra::capability), but an owned `Arc` for code that must outlive the
    /// borrow (a spawned task).
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Infra, NOTIFIER};
    /// # let infra = Infra::builder().build().unwrap();
    /// assert!(infra.capability_arc(&NOTIFIER, "default").is_err());
    /// ```
    ///
    /// # Errors
    /// As [`capability`](Infra::capability).
    #[inline]
    pub fn capability_arc<P: ?Sized + 'static>(
        &self,
        capability: &CapabilityRef<P>,
        instance: &str,
    ) -> Result<Arc<P>, AccessError> {
        self.arc_ref(capability, instance).map(Arc::clone)
    }

    /// The `default` instance of any capability.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Infra, TASK_QUEUE};
    /// # let infra = Infra::builder().build().unwrap();
    /// assert!(infra.default_instance(&TASK_QUEUE).is_err());
    /// ```
    ///
    /// # Errors
    /// As [`capability`](Infra::capability).
    #[inline]
    pub fn default_instance<P: ?Sized + 'static>(
        &self,
        capability: &CapabilityRef<P>,
    ) -> Result<&P, AccessError> {
        self.capability(capability, DEFAULT_INSTANCE)
    }

    /// The `default` cache.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.cache().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` cache is configured.
    #[inline]
    pub fn cache(&self) -> Result<&dyn Cache, AccessError> {
        self.cache
            .as_deref()
            .ok_or_else(|| self.missing_default(CACHE.name()))
    }

    /// The `default` notifier.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.notifier().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` notifier is configured.
    #[inline]
    pub fn notifier(&self) -> Result<&dyn Notifier, AccessError> {
        self.notifier
            .as_deref()
            .ok_or_else(|| self.missing_default(NOTIFIER.name()))
    }

    /// The `default` object store.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.object_store().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` object store is configured.
    #[inline]
    pub fn object_store(&self) -> Result<&dyn ObjectStore, AccessError> {
        self.object_store
            .as_deref()
            .ok_or_else(|| self.missing_default(OBJECT_STORE.name()))
    }

    /// The `default` task queue.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.task_queue().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` task queue is configured.
    #[inline]
    pub fn task_queue(&self) -> Result<&dyn TaskQueue, AccessError> {
        self.task_queue
            .as_deref()
            .ok_or_else(|| self.missing_default(TASK_QUEUE.name()))
    }

    /// The `default` lock.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.lock().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` lock is configured.
    #[inline]
    pub fn lock(&self) -> Result<&dyn Lock, AccessError> {
        self.lock
            .as_deref()
            .ok_or_else(|| self.missing_default(LOCK.name()))
    }

    /// The `default` secrets store.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// assert!(infra.secrets().is_err());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::NotConfigured`] when no `default` secrets store is configured.
    #[inline]
    pub fn secrets(&self) -> Result<&dyn Secrets, AccessError> {
        self.secrets
            .as_deref()
            .ok_or_else(|| self.missing_default(SECRETS.name()))
    }

    /// Every configured `(capability, instance)`, sorted.
    ///
    /// ```
    /// # let infra = sandloom_sdk_infra::Infra::builder().build().unwrap();
    /// for (capability, instance) in infra.instances() {
    ///     println!("{capability}.{instance}");
    /// }
    /// ```
    pub fn instances(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.slots
            .iter()
            .map(|slot| (slot.capability, &*slot.instance))
    }

    fn arc_ref<P: ?Sized + 'static>(
        &self,
        capability: &CapabilityRef<P>,
        instance: &str,
    ) -> Result<&Arc<P>, AccessError> {
        let name = capability.name();
        // An application has a handful of instances: a walk that compares lengths first (no
        // string read for most slots) and bytes for equality only beats a binary search that
        // orders strings at every step (BENCHMARKS.md).
        let slot = self
            .slots
            .iter()
            .find(|slot| {
                slot.instance.len() == instance.len()
                    && slot.capability.len() == name.len()
                    && *slot.instance == *instance
                    && slot.capability == name
            })
            .ok_or_else(|| self.not_configured(name, instance))?;
        slot.operations
            .downcast_ref::<Arc<P>>()
            .ok_or_else(|| AccessError::WrongType {
                capability: name.to_owned(),
                instance: instance.to_owned(),
            })
    }

    // The typed default is absent: either nothing is configured, or what is configured is not
    // the built-in operation trait (a driver registered under a built-in name with another one).
    #[cold]
    fn missing_default(&self, capability: &'static str) -> AccessError {
        if self
            .slots
            .iter()
            .any(|slot| slot.capability == capability && &*slot.instance == DEFAULT_INSTANCE)
        {
            AccessError::WrongType {
                capability: capability.to_owned(),
                instance: DEFAULT_INSTANCE.to_owned(),
            }
        } else {
            self.not_configured(capability, DEFAULT_INSTANCE)
        }
    }

    #[cold]
    fn not_configured(&self, capability: &str, instance: &str) -> AccessError {
        AccessError::NotConfigured {
            capability: capability.to_owned(),
            instance: instance.to_owned(),
            configured: self
                .slots
                .iter()
                .filter(|slot| slot.capability == capability)
                .map(|slot| slot.instance.to_string())
                .collect(),
        }
    }

    fn typed_default<P: ?Sized + 'static>(
        slots: &[Slot],
        capability: &CapabilityRef<P>,
    ) -> Option<Arc<P>> {
        slots
            .iter()
            .find(|slot| {
                slot.capability == capability.name() && &*slot.instance == DEFAULT_INSTANCE
            })
            .and_then(|slot| slot.operations.downcast_ref::<Arc<P>>())
            .cloned()
    }
}

impl fmt::Debug for Infra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.instances().map(|(c, i)| format!("{c}.{i}")))
            .finish()
    }
}

/// Builds an [`Infra`].
///
/// ```
/// use std::sync::Arc;
/// use sandloom_sdk_infra::{Infra, Notifier, NotifierOps, NOTIFIER};
/// # use sandloom_sdk_infra::{InfraResult, notifier::{Message, Receipt}};
/// # struct Quiet;
/// # impl NotifierOps for Quiet {
/// #     async fn send(&self, _: &Message) -> InfraResult<Receipt> { Ok(Receipt::new("0")) }
/// # }
/// let infra = Infra::builder()
///     .with(&NOTIFIER, "ops", Arc::new(Quiet) as Arc<dyn Notifier>)
///     .build()
///     .unwrap();
/// assert!(infra.capability(&NOTIFIER, "ops").is_ok());
/// ```
pub struct InfraBuilder {
    slots: Vec<Slot>,
}

impl InfraBuilder {
    /// Add `operations` as instance `instance` of `capability`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use sandloom_sdk_infra::{CapabilityRef, Infra};
    /// trait Clock: Send + Sync { fn now(&self) -> u64; }
    /// struct Fixed;
    /// impl Clock for Fixed { fn now(&self) -> u64 { 42 } }
    /// const CLOCK: CapabilityRef<dyn Clock> = CapabilityRef::new("clock");
    ///
    /// let infra = Infra::builder().with(&CLOCK, "default", Arc::new(Fixed) as Arc<dyn Clock>).build().unwrap();
    /// assert_eq!(infra.default_instance(&CLOCK).unwrap().now(), 42);
    /// ```
    #[must_use]
    pub fn with<P: ?Sized + Send + Sync + 'static>(
        self,
        capability: &CapabilityRef<P>,
        instance: impl Into<String>,
        operations: Arc<P>,
    ) -> Self {
        self.with_erased(capability.name(), instance, Box::new(operations))
    }

    /// Add an instance whose type the caller has erased. `operations` must hold the `Arc<P>` of
    /// the capability's key (`Arc<dyn Cache>` for `cache`); anything else makes the accessors
    /// answer [`AccessError::WrongType`]. This is how a runtime that does not know the operation
    /// trait (the kernel, for a third-party capability) fills the handle.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use sandloom_sdk_infra::{CapabilityRef, Infra, AccessError};
    /// const NUMBER: CapabilityRef<u32> = CapabilityRef::new("number");
    /// let infra = Infra::builder()
    ///     .with_erased("number", "default", Box::new(Arc::new(7_u32)))
    ///     .with_erased("number", "wrong", Box::new("not an Arc<u32>"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(*infra.default_instance(&NUMBER).unwrap(), 7);
    /// assert!(matches!(infra.capability(&NUMBER, "wrong"), Err(AccessError::WrongType { .. })));
    /// ```
    #[must_use]
    pub fn with_erased(
        mut self,
        capability: &'static str,
        instance: impl Into<String>,
        operations: Box<dyn Any + Send + Sync>,
    ) -> Self {
        self.slots.push(Slot {
            capability,
            instance: Name::Owned(instance.into().into_boxed_str()),
            operations,
        });
        self
    }

    /// [`with_erased`](Self::with_erased), with a name the caller shares rather than copies:
    /// what the kernel adds, its records of the instance holding the same name.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use sandloom_sdk_infra::{CapabilityRef, Infra};
    /// const NUMBER: CapabilityRef<u32> = CapabilityRef::new("number");
    /// let name: Arc<str> = Arc::from("default");
    /// let infra = Infra::builder()
    ///     .with_erased_shared("number", Arc::clone(&name), Box::new(Arc::new(7_u32)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(*infra.default_instance(&NUMBER).unwrap(), 7);
    /// assert_eq!(Arc::strong_count(&name), 2);
    /// ```
    #[doc(hidden)]
    #[must_use]
    pub fn with_erased_shared(
        mut self,
        capability: &'static str,
        instance: Arc<str>,
        operations: Box<dyn Any + Send + Sync>,
    ) -> Self {
        self.slots.push(Slot {
            capability,
            instance: Name::Shared(instance),
            operations,
        });
        self
    }

    /// Finish.
    ///
    /// ```
    /// assert!(sandloom_sdk_infra::Infra::builder().build().is_ok());
    /// ```
    ///
    /// # Errors
    /// [`AccessError::Duplicate`] when one capability and instance were added twice.
    pub fn build(mut self) -> Result<Infra, AccessError> {
        self.slots
            .sort_by(|a, b| (a.capability, &*a.instance).cmp(&(b.capability, &*b.instance)));
        if let Some(pair) = self.slots.windows(2).find(|pair| {
            pair[0].capability == pair[1].capability && *pair[0].instance == *pair[1].instance
        }) {
            return Err(AccessError::Duplicate {
                capability: pair[0].capability.to_owned(),
                instance: pair[0].instance.to_string(),
            });
        }
        let slots = self.slots.into_boxed_slice();
        Ok(Infra {
            cache: Infra::typed_default(&slots, &CACHE),
            notifier: Infra::typed_default(&slots, &NOTIFIER),
            object_store: Infra::typed_default(&slots, &OBJECT_STORE),
            task_queue: Infra::typed_default(&slots, &TASK_QUEUE),
            lock: Infra::typed_default(&slots, &LOCK),
            secrets: Infra::typed_default(&slots, &SECRETS),
            slots,
        })
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Infra>();
    assert_send_sync::<CapabilityRef<dyn Cache>>();
};
