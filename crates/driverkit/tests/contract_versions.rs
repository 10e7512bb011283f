//! Pinned signatures: one implementation of every provider trait, written against the exact
//! signatures of its contract version, every optional operation included. Changing a signature
//! breaks the build of this file; that is the point. A new contract version gets a new pinned
//! implementation next to these, and the runtime's spec version is asserted below, so bumping
//! one without the other fails too.

#![allow(clippy::unused_async)]

use std::time::Duration;

use sandloom_driverkit::cache::{CacheOps, CacheProvider};
use sandloom_driverkit::lock::{Lease, LockOps, LockProvider};
use sandloom_driverkit::notifier::{Message, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::objectstore::{
    ListOptions, ListPage, ObjectMeta, ObjectStoreOps, ObjectStoreProvider, PutCondition,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::taskqueue::{
    EnqueueOptions, Reservation, Task, TaskQueueOps, TaskQueueProvider,
};
use sandloom_driverkit::{Driver, DriverError, Health, NoOptions, Version};

/// One type implementing every contract, so the lifecycle is written once.
struct Pinned;

fn nothing<T>() -> InfraResult<T> {
    Err(InfraError::invalid_input("pinned", "signature pin only"))
}

impl Driver for Pinned {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn features_for(_options: &NoOptions) -> Vec<&'static str> {
        Vec::new()
    }
    fn from_options(_options: NoOptions) -> Result<Self, DriverError> {
        Ok(Self)
    }
    async fn start(&self) -> Result<(), DriverError> {
        Ok(())
    }
    async fn stop(&self) -> Result<(), DriverError> {
        Ok(())
    }
    async fn health(&self) -> Health {
        Health::Healthy
    }
}

// cache 1.0
impl CacheOps for Pinned {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        nothing()
    }
    async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> {
        nothing()
    }
    async fn delete(&self, _key: &str) -> InfraResult<bool> {
        nothing()
    }
    async fn set_with_ttl(&self, _key: &str, _value: Bytes, _ttl: Duration) -> InfraResult<()> {
        nothing()
    }
    async fn increment(&self, _key: &str, _delta: i64) -> InfraResult<i64> {
        nothing()
    }
    async fn get_many(&self, _keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        nothing()
    }
    async fn set_many(&self, _entries: &[(&str, Bytes)]) -> InfraResult<()> {
        nothing()
    }
    async fn delete_many(&self, _keys: &[&str]) -> InfraResult<u64> {
        nothing()
    }
}
impl CacheProvider for Pinned {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

// notifier 1.0
impl NotifierOps for Pinned {
    async fn send(&self, _message: &Message) -> InfraResult<Receipt> {
        nothing()
    }
    async fn send_batch(&self, _messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        nothing()
    }
}
impl NotifierProvider for Pinned {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

// objectstore 1.0
impl ObjectStoreOps for Pinned {
    async fn put(&self, _key: &str, _data: Bytes) -> InfraResult<ObjectMeta> {
        nothing()
    }
    async fn get(&self, _key: &str) -> InfraResult<Bytes> {
        nothing()
    }
    async fn head(&self, _key: &str) -> InfraResult<ObjectMeta> {
        nothing()
    }
    async fn delete(&self, _key: &str) -> InfraResult<()> {
        nothing()
    }
    async fn list(&self, _prefix: &str, _options: ListOptions) -> InfraResult<ListPage> {
        nothing()
    }
    async fn put_if(
        &self,
        _key: &str,
        _data: Bytes,
        _condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        nothing()
    }
}
impl ObjectStoreProvider for Pinned {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

// taskqueue 1.0
impl TaskQueueOps for Pinned {
    async fn enqueue(
        &self,
        _queue: &str,
        _payload: Bytes,
        _options: EnqueueOptions,
    ) -> InfraResult<String> {
        nothing()
    }
    async fn reserve(&self, _queue: &str, _wait: Duration) -> InfraResult<Option<Reservation>> {
        nothing()
    }
    async fn ack(&self, _reservation: &Reservation) -> InfraResult<()> {
        nothing()
    }
    async fn nack(
        &self,
        _reservation: &Reservation,
        _retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        nothing()
    }
    async fn dead_letters(&self, _queue: &str, _limit: usize) -> InfraResult<Vec<Task>> {
        nothing()
    }
}
impl TaskQueueProvider for Pinned {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

// lock 1.0
impl LockOps for Pinned {
    async fn acquire(&self, _name: &str, _ttl: Duration) -> InfraResult<Option<Lease>> {
        nothing()
    }
    async fn acquire_wait(
        &self,
        _name: &str,
        _ttl: Duration,
        _timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        nothing()
    }
    async fn release(&self, _lease: &Lease) -> InfraResult<bool> {
        nothing()
    }
    async fn refresh(&self, _lease: &Lease, _ttl: Duration) -> InfraResult<Lease> {
        nothing()
    }
}
impl LockProvider for Pinned {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[test]
fn the_runtime_contract_versions_are_the_pinned_ones() {
    let pinned = [
        ("cache", <Pinned as CacheProvider>::CONTRACT_VERSION),
        ("notifier", <Pinned as NotifierProvider>::CONTRACT_VERSION),
        (
            "objectstore",
            <Pinned as ObjectStoreProvider>::CONTRACT_VERSION,
        ),
        ("taskqueue", <Pinned as TaskQueueProvider>::CONTRACT_VERSION),
        ("lock", <Pinned as LockProvider>::CONTRACT_VERSION),
    ];
    for (name, version) in pinned {
        let spec = sandloom_kernel::registry::capabilities()
            .iter()
            .find(|spec| spec.name == name)
            .unwrap_or_else(|| panic!("no spec `{name}`"));
        assert_eq!(
            spec.contract_version, version,
            "the runtime's `{name}` contract is {}, the pinned signatures are {version}: pin the new version's signatures in a new implementation",
            spec.contract_version
        );
    }
}
