//! The workers: each runs every operation of one capability in a loop, half the time through the
//! accessor (`running.infra().cache()`), half through the `Arc` taken at startup, and records
//! every answer in the [`Tally`]. The idle waiters wait longer than the stop timeout, the way a
//! long-poll consumer does.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sandloom::Running;
use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::lock::Lock;
use sandloom::sdk::notifier::{Message, Notifier};
use sandloom::sdk::objectstore::{ListOptions, ObjectStore, PutCondition};
use sandloom::sdk::secrets::Secrets;
use sandloom::sdk::taskqueue::{EnqueueOptions, TaskQueue};
use sandloom::sdk::{Cache, InfraResult};

use crate::identity::Handles;
use crate::tally::Tally;
use crate::variants::{PROBE, SECRETS};

/// What every worker shares.
#[derive(Clone)]
pub(crate) struct Crew {
    pub(crate) running: Arc<Running>,
    pub(crate) handles: Handles,
    pub(crate) tally: Arc<Tally>,
    pub(crate) stop: Arc<AtomicBool>,
    /// How long an idle waiter waits: longer than the stop timeout.
    pub(crate) idle_wait: Duration,
}

impl Crew {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// Run `future` as `operation`, begun now, and record its answer.
    async fn op<T>(
        &self,
        operation: &'static str,
        token: Option<u64>,
        future: impl Future<Output = InfraResult<T>>,
    ) -> InfraResult<T> {
        let began = self.tally.window.now();
        let at = std::time::Instant::now();
        let result = future.await;
        self.tally
            .record(operation, began, token, at.elapsed(), &result);
        result
    }
}

/// Which handle iteration `n` uses.
fn by_arc(n: u64) -> bool {
    n % 2 == 1
}

pub(crate) async fn cache(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    while crew.running() {
        n += 1;
        let cache: &dyn Cache = if by_arc(n) {
            &*crew.handles.cache
        } else {
            crew.running.infra().cache().unwrap()
        };
        let key = format!("c{worker}-{}", n % 32);
        let value = Bytes::from(format!("v{n}"));
        let began = crew.tally.window.now();
        let set = crew.op("set", None, cache.set(&key, value.clone())).await;
        let got = crew.op("get", None, cache.get(&key)).await;
        if set.is_ok()
            && !crew.tally.window.crossed(began)
            && let Ok(got) = got
            && got.as_ref() != Some(&value)
        {
            crew.tally.mismatch(&format!("cache {key}: {got:?}"));
        }
        let ttl_key = format!("c{worker}-ttl");
        let _ = crew
            .op(
                "set_with_ttl",
                None,
                cache.set_with_ttl(&ttl_key, value.clone(), Duration::from_mins(1)),
            )
            .await;
        let _ = crew
            .op(
                "increment",
                None,
                cache.increment(&format!("c{worker}-n"), 1),
            )
            .await;
        let (a, b) = (format!("c{worker}-m1"), format!("c{worker}-m2"));
        let _ = crew
            .op(
                "set_many",
                None,
                cache.set_many(&[(&a, value.clone()), (&b, value.clone())]),
            )
            .await;
        let _ = crew
            .op("get_many", None, cache.get_many(&[&a, &b, &key]))
            .await;
        let _ = crew
            .op("delete_many", None, cache.delete_many(&[&a, &b]))
            .await;
        let _ = crew.op("delete", None, cache.delete(&ttl_key)).await;
        tokio::task::yield_now().await;
    }
}

pub(crate) async fn notifier(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    while crew.running() {
        n += 1;
        let notifier: &dyn Notifier = if by_arc(n) {
            &*crew.handles.notifier
        } else {
            crew.running.infra().notifier().unwrap()
        };
        let message = Message::new("ops@example.com", format!("n{worker}-{n}"));
        let _ = crew.op("send", None, notifier.send(&message)).await;
        let batch = [message.clone(), message.with_subject("second")];
        let began = crew.tally.window.now();
        let at = std::time::Instant::now();
        let answers = notifier.send_batch(&batch).await;
        let elapsed = at.elapsed();
        // Each message's answer counts as one operation; the batch's own answer as another.
        if let Ok(answers) = &answers {
            for answer in answers {
                crew.tally
                    .record("send_batch (one message)", began, None, elapsed, answer);
            }
        }
        crew.tally
            .record("send_batch", began, None, elapsed, &answers);
        tokio::task::yield_now().await;
    }
}

pub(crate) async fn objectstore(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    while crew.running() {
        n += 1;
        let store: &dyn ObjectStore = if by_arc(n) {
            &*crew.handles.objects
        } else {
            crew.running.infra().object_store().unwrap()
        };
        let key = format!("o{worker}/{n}");
        let data = Bytes::from(format!("object {n}"));
        let began = crew.tally.window.now();
        let put = crew.op("put", None, store.put(&key, data.clone())).await;
        let got = crew.op("get", Some(began), store.get(&key)).await;
        if put.is_ok()
            && !crew.tally.window.crossed(began)
            && let Ok(got) = &got
            && got != &data
        {
            crew.tally.mismatch(&format!("object {key}"));
        }
        let _ = crew.op("head", Some(began), store.head(&key)).await;
        let _ = crew
            .op(
                "list",
                None,
                store.list(
                    &format!("o{worker}/"),
                    ListOptions::default().with_limit(10),
                ),
            )
            .await;
        let fresh = format!("o{worker}/if-{n}");
        let _ = crew
            .op(
                "put_if (absent)",
                None,
                store.put_if(&fresh, data.clone(), PutCondition::IfAbsent),
            )
            .await;
        // The etag is a token of the instance that stored the object.
        if let Ok(Some(etag)) = put.map(|meta| meta.etag) {
            let _ = crew
                .op(
                    "put_if (match)",
                    Some(began),
                    store.put_if(&key, data.clone(), PutCondition::IfMatch(etag)),
                )
                .await;
        }
        let _ = crew.op("delete", Some(began), store.delete(&fresh)).await;
        let _ = crew.op("delete", Some(began), store.delete(&key)).await;
        tokio::task::yield_now().await;
    }
}

pub(crate) async fn taskqueue(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    let queue_name = format!("t{worker}");
    while crew.running() {
        n += 1;
        let queue: &dyn TaskQueue = if by_arc(n) {
            &*crew.handles.queue
        } else {
            crew.running.infra().task_queue().unwrap()
        };
        let payload = Bytes::from(format!("task {n}"));
        let _ = crew
            .op(
                "enqueue",
                None,
                queue.enqueue(&queue_name, payload.clone(), EnqueueOptions::default()),
            )
            .await;
        let _ = crew
            .op(
                "enqueue (delay)",
                None,
                queue.enqueue(
                    &queue_name,
                    payload.clone(),
                    EnqueueOptions::default().with_delay(Duration::from_millis(1)),
                ),
            )
            .await;
        let _ = crew
            .op(
                "enqueue (dedupe)",
                None,
                queue.enqueue(
                    &queue_name,
                    payload,
                    EnqueueOptions::default().with_idempotency_key(format!("k{worker}-{n}")),
                ),
            )
            .await;
        for turn in 0..3 {
            let taken = crew.tally.window.now();
            let reserved = crew
                .op(
                    "reserve",
                    None,
                    queue.reserve(&queue_name, Duration::from_millis(20)),
                )
                .await;
            let Ok(Some(reservation)) = reserved else {
                break;
            };
            if turn == 1 {
                let _ = crew
                    .op("nack", Some(taken), queue.nack(&reservation, None))
                    .await;
            } else {
                let _ = crew.op("ack", Some(taken), queue.ack(&reservation)).await;
            }
        }
        let _ = crew
            .op("dead_letters", None, queue.dead_letters(&queue_name, 10))
            .await;
        tokio::task::yield_now().await;
    }
}

pub(crate) async fn lock(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    let ttl = Duration::from_secs(5);
    while crew.running() {
        n += 1;
        let lock: &dyn Lock = if by_arc(n) {
            &*crew.handles.lock
        } else {
            crew.running.infra().lock().unwrap()
        };
        let name = format!("l{worker}-{}", n % 4);
        let granted = crew.tally.window.now();
        if let Ok(Some(lease)) = crew.op("acquire", None, lock.acquire(&name, ttl)).await {
            let lease = crew
                .op("refresh", Some(granted), lock.refresh(&lease, ttl))
                .await
                .unwrap_or(lease);
            let _ = crew
                .op("release", Some(granted), lock.release(&lease))
                .await;
        }
        let granted = crew.tally.window.now();
        let waited = crew
            .op(
                "acquire_wait",
                None,
                lock.acquire_wait(&name, ttl, Duration::from_millis(20)),
            )
            .await;
        if let Ok(Some(lease)) = waited {
            let _ = crew
                .op("release", Some(granted), lock.release(&lease))
                .await;
        }
        tokio::task::yield_now().await;
    }
}

pub(crate) async fn secrets(crew: Crew, worker: usize) {
    let mut n = 0_u64;
    while crew.running() {
        n += 1;
        let secrets: &dyn Secrets = if by_arc(n) {
            &*crew.handles.secrets
        } else {
            crew.running.infra().secrets().unwrap()
        };
        let name = SECRETS[(n as usize + worker) % SECRETS.len()];
        let _ = crew.op("get", None, secrets.get(name)).await;
        let _ = crew.op("get", None, secrets.get(PROBE)).await;
        let _ = crew
            .op("current_version", None, secrets.current_version(name))
            .await;
        let _ = crew
            .op("get_version", None, secrets.get_version(name, 1))
            .await;
        let _ = crew.op("list", None, secrets.list("")).await;
        let _ = crew
            .op("changes", None, secrets.changes(0, Duration::ZERO))
            .await;
        tokio::task::yield_now().await;
    }
}

/// Waiters that wait longer than the stop timeout: a consumer long-polling an empty queue, a
/// contender for a lock held elsewhere, a watcher of secrets that do not change.
pub(crate) async fn idle(crew: Crew, which: usize) {
    let wait = crew.idle_wait;
    while crew.running() {
        match which {
            0 => {
                let _ = crew
                    .op(
                        "reserve (idle)",
                        None,
                        crew.handles.queue.reserve("idle", wait),
                    )
                    .await;
            }
            1 => {
                let since = crew.tally.window.now();
                let lock = &crew.handles.lock;
                let held = crew
                    .op("acquire (idle)", None, lock.acquire("idle", wait * 4))
                    .await;
                let _ = crew
                    .op(
                        "acquire_wait (idle)",
                        None,
                        lock.acquire_wait("idle", wait, wait),
                    )
                    .await;
                if let Ok(Some(lease)) = held {
                    let _ = crew
                        .op("release (idle)", Some(since), lock.release(&lease))
                        .await;
                }
            }
            _ => {
                let since = crew.tally.window.now();
                let cursor = crew
                    .op(
                        "changes (idle)",
                        None,
                        crew.handles.secrets.changes(0, Duration::ZERO),
                    )
                    .await;
                if let Ok(cursor) = cursor {
                    let changes = crew
                        .op(
                            "changes (idle)",
                            Some(since),
                            crew.handles.secrets.changes(cursor.cursor, wait),
                        )
                        .await;
                    if changes.is_ok_and(|changes| changes.relisted) {
                        crew.tally.relisted();
                    }
                }
            }
        }
        tokio::task::yield_now().await;
    }
}
