//! Example module: a tiny order desk, written the way application modules use Sandloom.
//!
//! It depends on `sandloom-sdk-infra` only. It declares what it needs with `requires!`, so an
//! application whose `INFRA` lacks any of it refuses to start, instead of failing here later.

use std::time::Duration;

use sandloom_sdk_infra::notifier::Message;
use sandloom_sdk_infra::objectstore::ListOptions;
use sandloom_sdk_infra::taskqueue::EnqueueOptions;
use sandloom_sdk_infra::{
    AccessError, CACHE, Cache, Infra, InfraError, InfraResult, NOTIFIER, Notifier, OBJECT_STORE,
    ObjectStore, TASK_QUEUE, TaskQueue, cache, requires,
};

requires!(CACHE, features = [cache::INCREMENT]);
requires!(NOTIFIER);
requires!(OBJECT_STORE);
requires!(TASK_QUEUE);

const CONFIRMATIONS: &str = "order-confirmations";

/// The order desk: each capability resolved once, then used directly.
pub struct OrderDesk<'a> {
    cache: &'a dyn Cache,
    notifier: &'a dyn Notifier,
    store: &'a dyn ObjectStore,
    queue: &'a dyn TaskQueue,
}

impl<'a> OrderDesk<'a> {
    /// Resolve the capabilities the desk uses.
    ///
    /// # Errors
    /// An [`AccessError`] when one is not configured (startup checks this already).
    pub fn new(infra: &'a Infra) -> Result<Self, AccessError> {
        Ok(Self {
            cache: infra.cache()?,
            notifier: infra.notifier()?,
            store: infra.object_store()?,
            queue: infra.task_queue()?,
        })
    }

    /// Record an order and queue its confirmation; returns the order's key in the store.
    ///
    /// # Errors
    /// Any failure of the infrastructure.
    pub async fn place_order(&self, customer: &str, item: &str) -> InfraResult<String> {
        let number = self.cache.increment("orders:last-number", 1).await?;
        let key = format!("orders/{number:06}.txt");
        let record = format!("customer={customer}\nitem={item}\n");
        self.store.put(&key, record.into()).await?;
        self.queue
            .enqueue(CONFIRMATIONS, key.clone().into(), EnqueueOptions::default())
            .await?;
        Ok(key)
    }

    /// Send the confirmations that are waiting; returns how many were sent.
    ///
    /// # Errors
    /// Any failure of the infrastructure. A confirmation that fails is nacked and retried later.
    pub async fn send_confirmations(&self) -> InfraResult<usize> {
        let mut sent = 0;
        while let Some(reservation) = self
            .queue
            .reserve(CONFIRMATIONS, Duration::from_millis(50))
            .await?
        {
            match self.confirm(&reservation.task.payload).await {
                Ok(()) => {
                    self.queue.ack(&reservation).await?;
                    sent += 1;
                }
                Err(err) => {
                    self.queue
                        .nack(&reservation, Some(Duration::from_secs(1)))
                        .await?;
                    return Err(err);
                }
            }
        }
        Ok(sent)
    }

    async fn confirm(&self, payload: &[u8]) -> InfraResult<()> {
        let key = std::str::from_utf8(payload)
            .map_err(|_| InfraError::invalid_input("taskqueue", "order key is not UTF-8"))?;
        let record = self.store.get(key).await?;
        let record = String::from_utf8_lossy(&record);
        let customer = record
            .lines()
            .find_map(|line| line.strip_prefix("customer="))
            .unwrap_or("unknown");
        let message = Message::new(customer, format!("Your order {key} is confirmed."))
            .with_subject("Order confirmed");
        self.notifier.send(&message).await?;
        Ok(())
    }

    /// Every recorded order's key, following pages to the end.
    ///
    /// # Errors
    /// Any failure of the object store.
    pub async fn orders(&self) -> InfraResult<Vec<String>> {
        let mut keys = Vec::new();
        let mut options = ListOptions::default();
        loop {
            let page = self.store.list("orders/", options.clone()).await?;
            keys.extend(page.objects.into_iter().map(|meta| meta.key));
            match page.next {
                Some(next) => options = options.after(next),
                None => return Ok(keys),
            }
        }
    }
}
