//! Which instance serves each capability after a reload: the old one or the new one.
//!
//! Before reload `n`, [`mark`] leaves a mark on each instance serving: a cache key, an object,
//! a task, a held lock, all named `id-n`. After it, [`serving`] looks for the mark through the
//! `Arc` handles held since startup and through the accessors: an instance that still has it is
//! the old one, one that does not is new (each variant's store is its own: a fresh memory
//! instance, or a Redis prefix, Postgres namespace or directory of its own, and the mark's name
//! is new at each reload). Secrets are told apart by value (`probe` is the variant's tag) and
//! `notifier.memory` by the outbox the message reaches. A handle that errors is neither.

use std::sync::Arc;
use std::time::Duration;

use sandloom::Running;
use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::lock::Lock;
use sandloom::sdk::notifier::{Message, Notifier};
use sandloom::sdk::objectstore::ObjectStore;
use sandloom::sdk::secrets::Secrets;
use sandloom::sdk::taskqueue::{EnqueueOptions, TaskQueue};
use sandloom::sdk::{CACHE, Cache, ErrorKind, LOCK, NOTIFIER, OBJECT_STORE, SECRETS, TASK_QUEUE};
use sandloom_embedded::MemoryNotifier;

use crate::variants::{PROBE, Variant};

/// The `Arc` handles a module would hold, taken once at startup.
#[derive(Clone)]
pub(crate) struct Handles {
    pub(crate) cache: Arc<dyn Cache>,
    pub(crate) notifier: Arc<dyn Notifier>,
    pub(crate) objects: Arc<dyn ObjectStore>,
    pub(crate) queue: Arc<dyn TaskQueue>,
    pub(crate) lock: Arc<dyn Lock>,
    pub(crate) secrets: Arc<dyn Secrets>,
}

impl Handles {
    pub(crate) fn of(running: &Running) -> Self {
        let infra = running.infra();
        Self {
            cache: infra.capability_arc(&CACHE, "default").unwrap(),
            notifier: infra.capability_arc(&NOTIFIER, "default").unwrap(),
            objects: infra.capability_arc(&OBJECT_STORE, "default").unwrap(),
            queue: infra.capability_arc(&TASK_QUEUE, "default").unwrap(),
            lock: infra.capability_arc(&LOCK, "default").unwrap(),
            secrets: infra.capability_arc(&SECRETS, "default").unwrap(),
        }
    }
}

const HELD: Duration = Duration::from_mins(2);

/// Leave mark `n` on every instance serving now, through the accessors.
pub(crate) async fn mark(running: &Running, n: usize) {
    let infra = running.infra();
    let id = format!("id-{n}");
    infra
        .cache()
        .unwrap()
        .set(&id, Bytes::from("mark"))
        .await
        .unwrap();
    infra
        .object_store()
        .unwrap()
        .put(&id, Bytes::from("mark"))
        .await
        .unwrap();
    infra
        .task_queue()
        .unwrap()
        .enqueue(&id, Bytes::from("mark"), EnqueueOptions::default())
        .await
        .unwrap();
    let lease = infra.lock().unwrap().acquire(&id, HELD).await.unwrap();
    assert!(lease.is_some(), "mark {n}: the lock `{id}` was not free");
}

/// Which of `old` and `new` serves each capability after reload `n`: one line per instance
/// that is neither the one `expect_new` says nor answering.
pub(crate) async fn serving(
    running: &Running,
    handles: &Handles,
    n: usize,
    old: &[&Variant],
    new: &[&Variant],
    expect_new: bool,
) -> Vec<String> {
    let id = format!("id-{n}");
    let infra = running.infra();
    let mut seen: Vec<(&str, Result<bool, String>)> = Vec::new();

    let via_arc = handles.cache.get(&id).await;
    let via_accessor = infra.cache().unwrap().get(&id).await;
    seen.push((
        "cache",
        agree(
            via_arc.map(|v| v.is_none()),
            via_accessor.map(|v| v.is_none()),
        ),
    ));

    let via_arc = absent(handles.objects.head(&id).await);
    let via_accessor = absent(infra.object_store().unwrap().head(&id).await);
    seen.push(("objectstore", agree(via_arc, via_accessor)));

    // The mark is the queue's only task: whichever handle takes it, the other finds none.
    let via_arc = handles.queue.reserve(&id, Duration::ZERO).await;
    let queue = match via_arc {
        Ok(Some(reservation)) => {
            let _ = handles.queue.ack(&reservation).await;
            Ok(false)
        }
        Ok(None) => match infra
            .task_queue()
            .unwrap()
            .reserve(&id, Duration::ZERO)
            .await
        {
            Ok(None) => Ok(true),
            Ok(Some(_)) => Err("the accessor found the mark the Arc did not".to_owned()),
            Err(error) => Err(error.to_string()),
        },
        Err(error) => Err(error.to_string()),
    };
    seen.push(("taskqueue", queue));

    let lock = match handles.lock.acquire(&id, Duration::from_secs(1)).await {
        Ok(Some(lease)) => {
            let _ = handles.lock.release(&lease).await;
            Ok(true)
        }
        Ok(None) => match infra
            .lock()
            .unwrap()
            .acquire(&id, Duration::from_secs(1))
            .await
        {
            Ok(None) => Ok(false),
            Ok(Some(_)) => Err("the accessor got the lock the Arc could not".to_owned()),
            Err(error) => Err(error.to_string()),
        },
        Err(error) => Err(error.to_string()),
    };
    seen.push(("lock", lock));

    let tag = |result: sandloom::sdk::InfraResult<sandloom::sdk::Secret<Vec<u8>>>| {
        result
            .map(|secret| secret.expose_str().unwrap_or("").to_owned())
            .map_err(|error| error.to_string())
    };
    let via_arc = tag(handles.secrets.get(PROBE).await);
    let via_accessor = tag(infra.secrets().unwrap().get(PROBE).await);
    let secrets = match (via_arc, via_accessor) {
        (Ok(a), Ok(b)) if a == b && a == new[5].tag => Ok(true),
        (Ok(a), Ok(b)) if a == b && a == old[5].tag => Ok(false),
        (a, b) => Err(format!("`probe` read {a:?} and {b:?}")),
    };
    seen.push(("secrets", secrets));

    seen.push(("notifier", notifier(handles, &id, old[1], new[1]).await));

    let mut problems = Vec::new();
    for (capability, answer) in seen {
        match answer {
            Ok(is_new) if is_new == expect_new => {}
            Ok(is_new) => problems.push(format!(
                "reload {n}: {capability} is served by the {} instance, expected the {}",
                if is_new { "new" } else { "old" },
                if expect_new { "new" } else { "old" }
            )),
            Err(error) => {
                problems.push(format!("reload {n}: {capability} did not answer: {error}"));
            }
        }
    }
    problems
}

/// `Ok(true)`: the new instance (the mark is not there).
fn agree(
    via_arc: sandloom::sdk::InfraResult<bool>,
    via_accessor: sandloom::sdk::InfraResult<bool>,
) -> Result<bool, String> {
    match (via_arc, via_accessor) {
        (Ok(a), Ok(b)) if a == b => Ok(a),
        (a, b) => Err(format!("the Arc answered {a:?}, the accessor {b:?}")),
    }
}

fn absent<T>(result: sandloom::sdk::InfraResult<T>) -> sandloom::sdk::InfraResult<bool> {
    match result {
        Ok(_) => Ok(false),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(true),
        Err(error) => Err(error),
    }
}

/// A message sent through the `Arc` and one through the accessor reach the new variant's outbox
/// and not the old one's, when they have one; a `log` notifier can only be seen to answer.
async fn notifier(
    handles: &Handles,
    id: &str,
    old: &Variant,
    new: &Variant,
) -> Result<bool, String> {
    let message = Message::new("ops@example.com", id);
    handles
        .notifier
        .send(&message)
        .await
        .map_err(|error| error.to_string())?;
    let reached = |variant: &Variant| {
        variant.outbox.as_deref().map(|outbox| {
            MemoryNotifier::outbox(outbox)
                .iter()
                .any(|sent| sent.body == id)
        })
    };
    match (reached(old), reached(new)) {
        (Some(true), Some(true)) => Err("both outboxes got the message".to_owned()),
        (Some(true), _) | (_, Some(false)) => Ok(false),
        (_, Some(true)) | (Some(false), None) => Ok(true),
        // Two `log` notifiers: nothing tells them apart; it answered.
        (None, None) => Err("unknown".to_owned()),
    }
}
