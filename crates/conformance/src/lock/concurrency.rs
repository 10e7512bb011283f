//! Lock obligations: one holder, whatever the races between acquirers and refreshes.

use super::leases::{acquire_free, expect_held, expect_release};
use super::{LONG, LockSettings};
use crate::ensure;
use crate::harness::Instance;
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::lock::Lease;
use std::sync::Arc;
use std::time::Duration;

pub(super) async fn concurrent_acquirers_get_exactly_one_lease<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    const TASKS: usize = 16;
    const RACING: usize = 4;
    for round in 0..2 {
        let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let lock = i.shared();
            let barrier = Arc::clone(&barrier);
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                // Several acquires in flight within one task too: a driver that checks, then
                // sets, hands the lock to all of them.
                let acquires = (0..RACING).map(|_| lock.acquire("kit-contended", LONG));
                futures_util::future::try_join_all(acquires)
                    .await
                    .map_err(|e| format!("acquire failed: {e}"))
            }));
        }
        let mut winners = Vec::new();
        for task in tasks {
            let leases = task.await.map_err(|e| format!("a task panicked: {e}"))??;
            winners.extend(leases.into_iter().flatten());
        }
        ensure!(
            winners.len() == 1,
            "{} concurrent acquires of a {} lock gave {} leases, not exactly one",
            TASKS * RACING,
            if round == 0 { "free" } else { "released" },
            winners.len()
        );
        expect_release(&*i.driver, &winners[0], true, "the one winner holds it").await?;
    }
    Ok(())
}

/// How many tasks race in `concurrent_contenders_leave_one_holder`.
pub(super) const TASKS: usize = 16;
/// How many acquires each racing task has in flight at once.
pub(super) const RACING: usize = 4;

/// [`TASKS`] × [`RACING`] acquires of `name` at once (and the holder's `release` of `lease`,
/// when given), answering every lease granted and what the release answered.
pub(super) async fn race<T: LockProvider>(
    i: &Instance<T>,
    name: &'static str,
    release: Option<Lease>,
) -> Result<(Vec<Lease>, Option<bool>), String> {
    let parties = TASKS + usize::from(release.is_some());
    let barrier = Arc::new(tokio::sync::Barrier::new(parties));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let lock = i.shared();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let acquires = (0..RACING).map(|_| lock.acquire(name, LONG));
            futures_util::future::try_join_all(acquires)
                .await
                .map_err(|e| format!("acquire failed: {e}"))
        }));
    }
    let released = match release {
        Some(lease) => {
            let lock = i.shared();
            let barrier = Arc::clone(&barrier);
            let releaser = tokio::spawn(async move {
                barrier.wait().await;
                lock.release(&lease).await
            });
            Some(
                releaser
                    .await
                    .map_err(|e| format!("a task panicked: {e}"))?
                    .map_err(|e| format!("release failed: {e}"))?,
            )
        }
        None => None,
    };
    let mut winners = Vec::new();
    for task in tasks {
        let leases = task.await.map_err(|e| format!("a task panicked: {e}"))??;
        winners.extend(leases.into_iter().flatten());
    }
    Ok((winners, released))
}

/// [`TASKS`] refreshes of one valid lease at once: all succeed with its token, one holder stays.
pub(super) async fn concurrent_refreshes_keep_one_holder<T: LockProvider>(
    i: &Instance<T>,
) -> Result<(), String> {
    let lock = &*i.driver;
    let lease = acquire_free(lock, "kit-race-refresh", LONG).await?;
    let mut tasks = Vec::new();
    let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
    for _ in 0..TASKS {
        let lock = i.shared();
        let lease = lease.clone();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            lock.refresh(&lease, LONG).await
        }));
    }
    for task in tasks {
        let refreshed = task
            .await
            .map_err(|e| format!("a task panicked: {e}"))?
            .map_err(|e| {
                format!("one of {TASKS} concurrent refreshes of a valid lease failed: {e}")
            })?;
        ensure!(
            refreshed.token == lease.token,
            "a concurrent refresh of {lease:?} answered {refreshed:?}: the token must stay"
        );
    }
    expect_held(lock, "kit-race-refresh", "its lease was refreshed").await?;
    expect_release(lock, &lease, true, "concurrent refreshes keep one holder").await
}

pub(super) async fn concurrent_contenders_leave_one_holder<T: LockProvider>(
    i: &Instance<T>,
    s: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let late = s.late();
    // An expired lock: its lease ended, nobody released it.
    let short = Duration::from_millis(100);
    acquire_free(lock, "kit-race-expired", short).await?;
    // Past its end by the declared tolerance: every backend has freed it by then.
    tokio::time::sleep(short + late).await;
    let (winners, _) = race(i, "kit-race-expired", None).await?;
    ensure!(
        winners.len() == 1,
        "{} concurrent acquires of an expired lock gave {} leases, not exactly one",
        TASKS * RACING,
        winners.len()
    );
    expect_release(lock, &winners[0], true, "the one winner holds it").await?;
    // Acquires racing the holder's release.
    let holder = acquire_free(lock, "kit-race-release", LONG).await?;
    let (winners, released) = race(i, "kit-race-release", Some(holder)).await?;
    ensure!(
        released == Some(true),
        "the holder's release, racing acquires, answered {released:?}, not true"
    );
    ensure!(
        winners.len() <= 1,
        "acquires racing the holder's release gave {} leases, not at most one",
        winners.len()
    );
    match winners.first() {
        Some(winner) => {
            expect_held(lock, "kit-race-release", "one acquire won it").await?;
            expect_release(lock, winner, true, "the one winner holds it").await?;
        }
        None => drop(acquire_free(lock, "kit-race-release", LONG).await?),
    }
    // An expired holder's release racing acquirers of its lock: it answers `false` and frees
    // nothing of the winner's (a release that checks the token, then deletes whatever is
    // there, deletes the winner's lease). A few rounds, as a race shows only sometimes.
    for _ in 0..4 {
        let name = "kit-race-stale-release";
        let old = acquire_free(lock, name, short).await?;
        tokio::time::sleep(short + late).await;
        let (winners, released) = race(i, name, Some(old)).await?;
        ensure!(
            released == Some(false) && winners.len() == 1,
            "an expired holder's release racing {} acquires answered {released:?} and they got \
             {} leases: expected false, and exactly one lease",
            TASKS * RACING,
            winners.len()
        );
        expect_held(
            lock,
            name,
            "one acquire won it, and the expired holder's release must not free it",
        )
        .await?;
        expect_release(lock, &winners[0], true, "the one winner holds it").await?;
    }
    concurrent_refreshes_keep_one_holder(i).await
}
