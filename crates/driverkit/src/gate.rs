//! The feature gate: what modules call is the driver wrapped so that an optional operation whose
//! feature the instance did not declare answers `Unsupported`, whatever the type implements.
//!
//! Features may depend on options (`features_for`), so a type can implement `set_with_ttl` and
//! still have instances without `ttl`; the gate makes the declaration, not the implementation,
//! decide. Required operations pass straight through: the gate is one struct around the driver,
//! not another pointer to chase.

use std::time::Duration;

use async_trait::async_trait;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{self, Cache};
use sandloom_sdk_infra::notifier::{self, Message, Notifier, Receipt};
use sandloom_sdk_infra::objectstore::{
    self, ListOptions, ListPage, ObjectMeta, ObjectStore, PutCondition,
};
use sandloom_sdk_infra::taskqueue::{self, EnqueueOptions, Reservation, Task, TaskQueue};
use sandloom_sdk_infra::{InfraError, InfraResult};

use crate::Driver;

/// A driver as the kernel holds it: itself, or itself behind a feature gate.
pub trait Gate<T: Driver>: Send + Sync + Sized + 'static {
    /// Wrap `driver`, whose instance declared `features`.
    fn wrap(driver: T, features: &[&'static str]) -> Self;
    /// The driver, for its lifecycle.
    fn driver(&self) -> &T;
}

/// No gate: third-party capabilities, whose optional operations driverkit does not know.
impl<T: Driver> Gate<T> for T {
    fn wrap(driver: T, _features: &[&'static str]) -> Self {
        driver
    }

    fn driver(&self) -> &T {
        self
    }
}

macro_rules! gate_type {
    ($(#[$doc:meta])* $name:ident { $($flag:ident: $feature:expr),* $(,)? }) => {
        $(#[$doc])*
        pub struct $name<T> {
            driver: T,
            $($flag: bool,)*
        }

        impl<T: Driver> Gate<T> for $name<T> {
            fn wrap(driver: T, features: &[&'static str]) -> Self {
                Self {
                    driver,
                    $($flag: features.contains(&$feature),)*
                }
            }

            fn driver(&self) -> &T {
                &self.driver
            }
        }
    };
}

gate_type!(
    /// A cache behind its feature gate.
    CacheGate { ttl: cache::TTL, increment: cache::INCREMENT, bulk: cache::BULK }
);
gate_type!(
    /// A notifier behind its feature gate.
    NotifierGate { batch: notifier::BATCH }
);
gate_type!(
    /// An object store behind its feature gate.
    ObjectStoreGate { conditional_put: objectstore::CONDITIONAL_PUT }
);
gate_type!(
    /// A task queue behind its feature gate.
    TaskQueueGate { delay: taskqueue::DELAY, dead_letter: taskqueue::DEAD_LETTER }
);

fn refuse<V>(capability: &'static str, operation: &str, feature: &str) -> InfraResult<V> {
    Err(InfraError::unsupported(capability, operation, feature))
}

#[async_trait]
impl<T: Cache + Driver> Cache for CacheGate<T> {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        self.driver.get(key).await
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        self.driver.set(key, value).await
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        self.driver.delete(key).await
    }

    async fn set_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> InfraResult<()> {
        if !self.ttl {
            return refuse(cache::NAME, "set_with_ttl", cache::TTL);
        }
        self.driver.set_with_ttl(key, value, ttl).await
    }

    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        if !self.increment {
            return refuse(cache::NAME, "increment", cache::INCREMENT);
        }
        self.driver.increment(key, delta).await
    }

    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        if !self.bulk {
            return refuse(cache::NAME, "get_many", cache::BULK);
        }
        self.driver.get_many(keys).await
    }

    async fn set_many(&self, entries: &[(&str, Bytes)]) -> InfraResult<()> {
        if !self.bulk {
            return refuse(cache::NAME, "set_many", cache::BULK);
        }
        self.driver.set_many(entries).await
    }

    async fn delete_many(&self, keys: &[&str]) -> InfraResult<u64> {
        if !self.bulk {
            return refuse(cache::NAME, "delete_many", cache::BULK);
        }
        self.driver.delete_many(keys).await
    }
}

#[async_trait]
impl<T: Notifier + Driver> Notifier for NotifierGate<T> {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.driver.send(message).await
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        if !self.batch {
            return refuse(notifier::NAME, "send_batch", notifier::BATCH);
        }
        self.driver.send_batch(messages).await
    }
}

#[async_trait]
impl<T: ObjectStore + Driver> ObjectStore for ObjectStoreGate<T> {
    async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        self.driver.put(key, data).await
    }

    async fn get(&self, key: &str) -> InfraResult<Bytes> {
        self.driver.get(key).await
    }

    async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        self.driver.head(key).await
    }

    async fn delete(&self, key: &str) -> InfraResult<()> {
        self.driver.delete(key).await
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> InfraResult<ListPage> {
        self.driver.list(prefix, options).await
    }

    async fn put_if(
        &self,
        key: &str,
        data: Bytes,
        condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        if !self.conditional_put {
            return refuse(objectstore::NAME, "put_if", objectstore::CONDITIONAL_PUT);
        }
        self.driver.put_if(key, data, condition).await
    }
}

#[async_trait]
impl<T: TaskQueue + Driver> TaskQueue for TaskQueueGate<T> {
    async fn enqueue(
        &self,
        queue: &str,
        payload: Bytes,
        options: EnqueueOptions,
    ) -> InfraResult<String> {
        if options.delay.is_some() && !self.delay {
            return refuse(taskqueue::NAME, "enqueue with a delay", taskqueue::DELAY);
        }
        self.driver.enqueue(queue, payload, options).await
    }

    async fn reserve(&self, queue: &str, wait: Duration) -> InfraResult<Option<Reservation>> {
        self.driver.reserve(queue, wait).await
    }

    async fn ack(&self, reservation: &Reservation) -> InfraResult<()> {
        self.driver.ack(reservation).await
    }

    async fn nack(
        &self,
        reservation: &Reservation,
        retry_after: Option<Duration>,
    ) -> InfraResult<()> {
        self.driver.nack(reservation, retry_after).await
    }

    async fn dead_letters(&self, queue: &str, limit: usize) -> InfraResult<Vec<Task>> {
        if !self.dead_letter {
            return refuse(taskqueue::NAME, "dead_letters", taskqueue::DEAD_LETTER);
        }
        self.driver.dead_letters(queue, limit).await
    }
}
