//! Benchmarks only: [`Synthetic`], a driver of all four public capabilities that does nothing,
//! registered under thousands of names by the synthetic driver crates
//! (`sandloom-bench-synthetic-10` … `-10000`), and the lookup types of the hand-written
//! alternatives those crates generate ([`Found`], [`Registry`]).
//!
//! ```
//! use sandloom_bench_synthetic::{Found, Registry};
//! let mut registry = Registry::default();
//! registry.register("cache", "memory", Found::Builtin(0));
//! registry.register("cache", "memory", Found::Synthetic(0));
//! assert_eq!(registry.get("cache", "memory"), Some(Found::Builtin(0)));
//! assert_eq!(registry.conflicts(), [("cache", "memory")]);
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Duration;

use sandloom_driverkit::cache::{CacheOps, CacheProvider};
use sandloom_driverkit::notifier::{Message, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::objectstore::{
    ListOptions, ListPage, ObjectMeta, ObjectStoreOps, ObjectStoreProvider,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{EnqueueOptions, Reservation, TaskQueueOps, TaskQueueProvider};
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};

/// What a hand-written lookup finds for a `(capability, name)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The built-in driver at this index of `sandloom_bench_synthetic_gen::BUILTIN`.
    Builtin(usize),
    /// Synthetic driver `index` (`<stem>-<index>`).
    Synthetic(usize),
}

/// A runtime registry as plugin systems build one: a `HashMap` filled at startup by explicit
/// `register()` calls, which notes every name registered twice.
#[derive(Debug, Default)]
pub struct Registry {
    drivers: HashMap<(&'static str, &'static str), Found>,
    conflicts: Vec<(&'static str, &'static str)>,
}

impl Registry {
    /// Register `found` as `capability.name`; a second registration of a name is a conflict,
    /// and the first one stays.
    pub fn register(&mut self, capability: &'static str, name: &'static str, found: Found) {
        match self.drivers.entry((capability, name)) {
            Entry::Vacant(slot) => {
                slot.insert(found);
            }
            Entry::Occupied(_) => self.conflicts.push((capability, name)),
        }
    }

    /// The driver registered as `capability.name`.
    pub fn get(&self, capability: &str, name: &str) -> Option<Found> {
        // `HashMap` is covariant in its key: the `'static` keys read as shorter-lived ones.
        let drivers: &HashMap<(&str, &str), Found> = &self.drivers;
        drivers.get(&(capability, name)).copied()
    }

    /// Names registered more than once.
    pub fn conflicts(&self) -> &[(&'static str, &'static str)] {
        &self.conflicts
    }
}

/// A driver that does nothing: every operation answers `Unavailable`. Never selected by the
/// benchmarks, only linked, so that resolution has entries to scan.
#[derive(Debug)]
pub struct Synthetic;

fn unavailable<T>(capability: &'static str) -> InfraResult<T> {
    Err(InfraError::unavailable(
        capability,
        "a synthetic driver does nothing",
    ))
}

impl Driver for Synthetic {
    type Options = NoOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Synthetic)
    }
}

impl CacheOps for Synthetic {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        unavailable("cache")
    }

    async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> {
        unavailable("cache")
    }

    async fn delete(&self, _key: &str) -> InfraResult<bool> {
        unavailable("cache")
    }
}

impl CacheProvider for Synthetic {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

impl NotifierOps for Synthetic {
    async fn send(&self, _message: &Message) -> InfraResult<Receipt> {
        unavailable("notifier")
    }
}

impl NotifierProvider for Synthetic {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

impl ObjectStoreOps for Synthetic {
    async fn put(&self, _key: &str, _data: Bytes) -> InfraResult<ObjectMeta> {
        unavailable("objectstore")
    }

    async fn get(&self, _key: &str) -> InfraResult<Bytes> {
        unavailable("objectstore")
    }

    async fn head(&self, _key: &str) -> InfraResult<ObjectMeta> {
        unavailable("objectstore")
    }

    async fn delete(&self, _key: &str) -> InfraResult<()> {
        unavailable("objectstore")
    }

    async fn list(&self, _prefix: &str, _options: ListOptions) -> InfraResult<ListPage> {
        unavailable("objectstore")
    }
}

impl ObjectStoreProvider for Synthetic {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

impl TaskQueueOps for Synthetic {
    async fn enqueue(
        &self,
        _queue: &str,
        _payload: Bytes,
        _options: EnqueueOptions,
    ) -> InfraResult<String> {
        unavailable("taskqueue")
    }

    async fn reserve(&self, _queue: &str, _wait: Duration) -> InfraResult<Option<Reservation>> {
        unavailable("taskqueue")
    }

    async fn ack(&self, _reservation: &Reservation) -> InfraResult<()> {
        unavailable("taskqueue")
    }

    async fn nack(
        &self,
        _reservation: &Reservation,
        _retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        unavailable("taskqueue")
    }
}

impl TaskQueueProvider for Synthetic {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
