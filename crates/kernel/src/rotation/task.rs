//! One store's watcher task: a long poll on `changes`, or a poll of every used secret by
//! version or keyed digest. Store errors are logged and counted, and retried with backoff;
//! `Stopped` ends the task; nothing here panics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sandloom_sdk_infra::secrets::Secrets;
use sandloom_sdk_infra::{ErrorKind, InfraError, InfraResult};

use super::digest::{Digest, digest};
use super::{Mode, Rotations, StoreWatch};
use crate::telemetry::ROTATION_ERRORS_METRIC;

/// The watcher's clock: how long one `changes` call may wait, and the backoff after errors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// The `wait` of each `changes` call.
    pub(crate) watch_wait: Duration,
    /// The pause after the first error of a run of errors; doubled after each next one.
    pub(crate) backoff_first: Duration,
    /// The longest pause after errors.
    pub(crate) backoff_max: Duration,
    /// The shortest time between two `changes` calls that found nothing: a driver that
    /// answers at once whatever `wait` says must not make the watcher spin.
    pub(crate) min_round: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            watch_wait: Duration::from_secs(30),
            backoff_first: Duration::from_millis(500),
            backoff_max: Duration::from_mins(1),
            min_round: Duration::from_millis(50),
        }
    }
}

impl Timing {
    /// The pause after `failures` errors in a row (1 or more).
    pub(crate) fn backoff(&self, failures: u32) -> Duration {
        let factor = 1_u32 << failures.saturating_sub(1).min(16);
        self.backoff_first
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// Watch one store until it answers `Stopped` (or the task is cancelled).
pub(crate) async fn run(store: StoreWatch, rotations: Arc<Rotations>, timing: Timing) {
    match store.mode {
        Mode::Watch => watch(&store, &rotations, timing).await,
        Mode::PollVersions(interval) => poll(&store, &rotations, timing, interval, true).await,
        Mode::PollDigests(interval) => poll(&store, &rotations, timing, interval, false).await,
    }
    tracing::debug!(
        target: "sandloom::secrets",
        store = %store.store,
        "the store is stopped: its rotation watcher ends"
    );
}

async fn watch(store: &StoreWatch, rotations: &Rotations, timing: Timing) {
    // 0: changes made from the first call on (everything before is what the instances read).
    let mut cursor = 0;
    let mut failures = 0_u32;
    loop {
        let began = tokio::time::Instant::now();
        match store.secrets.changes(cursor, timing.watch_wait).await {
            Ok(changes) => {
                recovered(store, &mut failures);
                cursor = changes.cursor;
                // Relisted: a reload replaced the store's instance while we waited, so the
                // names are everything it holds, not rotations. The reload that rebuilt it
                // also watches it afresh and cancels this watcher; until then, follow it.
                if !changes.relisted {
                    for name in &changes.names {
                        if let Some(dependents) = store.watched.get(name) {
                            rotations.record(store.rotation(name, dependents));
                        }
                    }
                }
                if changes.names.is_empty() {
                    tokio::time::sleep_until(began + timing.min_round).await;
                }
            }
            Err(err) if err.kind() == ErrorKind::Stopped => return,
            Err(err) => {
                failures += 1;
                if err.kind() == ErrorKind::InvalidInput && cursor != 0 {
                    // The store no longer knows our cursor (its history was reset: a
                    // restarted backend). Follow it from now on; say that changes made in
                    // between may have been missed.
                    cursor = 0;
                }
                let pause = timing.backoff(failures);
                failed(store, &err, 1, failures, pause);
                tokio::time::sleep(pause).await;
            }
        }
    }
}

/// What was last seen of one secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Not read yet, or every read failed so far: a first answer is no change.
    Unknown,
    /// `NotFound`.
    Absent,
    Version(u64),
    Digest(Digest),
}

async fn poll(
    store: &StoreWatch,
    rotations: &Rotations,
    timing: Timing,
    interval: Duration,
    by_version: bool,
) {
    let mut seen: BTreeMap<&str, Seen> = store
        .watched
        .keys()
        .map(|name| (name.as_str(), Seen::Unknown))
        .collect();
    let mut failures = 0_u32;
    loop {
        let mut errors = 0;
        let mut last_error = None;
        for (name, last) in &mut seen {
            let now = match look(store.secrets.as_ref(), name, by_version).await {
                Ok(now) => now,
                Err(err) if err.kind() == ErrorKind::Stopped => return,
                Err(err) => {
                    errors += 1;
                    last_error = Some(err);
                    continue;
                }
            };
            if *last != Seen::Unknown
                && *last != now
                && let Some(dependents) = store.watched.get(*name)
            {
                rotations.record(store.rotation(name, dependents));
            }
            *last = now;
        }
        let pause = match last_error {
            None => {
                recovered(store, &mut failures);
                interval
            }
            Some(err) => {
                failures += 1;
                let pause = interval.max(timing.backoff(failures));
                failed(store, &err, errors, failures, pause);
                pause
            }
        };
        tokio::time::sleep(pause).await;
    }
}

/// The state of one secret now. The value read for a digest is a `Secret`, zeroed when it
/// is dropped here; only its digest leaves.
async fn look(secrets: &dyn Secrets, name: &str, by_version: bool) -> InfraResult<Seen> {
    let answer = if by_version {
        secrets.current_version(name).await.map(Seen::Version)
    } else {
        secrets
            .get(name)
            .await
            .map(|value| Seen::Digest(digest(value.expose())))
    };
    match answer {
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(Seen::Absent),
        other => other,
    }
}

/// Log and count `errors` errors of one round (the last of them shown).
fn failed(store: &StoreWatch, err: &InfraError, errors: u64, failures: u32, pause: Duration) {
    metrics::counter!(
        ROTATION_ERRORS_METRIC,
        "store" => store.store.clone(),
        "outcome" => err.kind().as_str()
    )
    .increment(errors);
    // A driver's error names the secret at most, never a value (the contract's rule).
    tracing::warn!(
        target: "sandloom::secrets",
        store = %store.store,
        outcome = err.kind().as_str(),
        error = %err,
        errors,
        failures,
        retry_in_ms = pause.as_millis() as u64,
        "the secrets store could not be checked for rotated secrets; retrying"
    );
}

fn recovered(store: &StoreWatch, failures: &mut u32) {
    if *failures > 0 {
        tracing::info!(
            target: "sandloom::secrets",
            store = %store.store,
            after_failures = *failures,
            "the secrets store answers again: rotation is watched again"
        );
        *failures = 0;
    }
}
