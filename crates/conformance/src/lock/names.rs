//! Lock obligations: which names and ttls are accepted, and that names are independent.

use super::leases::{acquire_free, expect_held, expect_release};
use super::{LONG, LockSettings};
use crate::expect_kind;
use crate::harness::Instance;
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::Lease;
use std::time::Duration;

pub(super) async fn empty_name_or_zero_ttl_is_invalid_input<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    expect_kind(
        "acquire(\"\")",
        ErrorKind::InvalidInput,
        &lock.acquire("", LONG).await,
    )?;
    expect_kind(
        "acquire with a zero ttl",
        ErrorKind::InvalidInput,
        &lock.acquire("kit-zero", Duration::ZERO).await,
    )?;
    let lease = acquire_free(lock, "kit-zero", LONG)
        .await
        .map_err(|e| format!("after a refused zero-ttl acquire: {e}"))?;
    expect_kind(
        "refresh with a zero ttl",
        ErrorKind::InvalidInput,
        &lock.refresh(&lease, Duration::ZERO).await,
    )?;
    expect_held(
        lock,
        "kit-zero",
        "a refused zero-ttl refresh must not end it",
    )
    .await?;
    let nameless = Lease::new("", lease.token.clone(), lease.fence, lease.expires_at);
    expect_kind(
        "release of a lease on \"\"",
        ErrorKind::InvalidInput,
        &lock.release(&nameless).await,
    )?;
    expect_kind(
        "refresh of a lease on \"\"",
        ErrorKind::InvalidInput,
        &lock.refresh(&nameless, LONG).await,
    )?;
    expect_release(lock, &lease, true, "refused calls must not touch it").await
}

/// How many locks `many_locks_are_held_at_once` holds: more than a table that sweeps or evicts
/// every thousand entries keeps.
pub(super) const MANY: usize = 1500;

pub(super) async fn many_locks_are_held_at_once<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let mut leases = Vec::with_capacity(MANY);
    for n in 0..MANY {
        leases.push(acquire_free(lock, &format!("kit-many-{n}"), LONG).await?);
        if n % 100 == 0 {
            // Short leases among the long ones: a sweep of the ended ones must spare the rest.
            acquire_free(lock, &format!("kit-brief-{n}"), Duration::from_millis(1)).await?;
        }
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    for n in (0..MANY).step_by(7).chain([MANY - 1]) {
        expect_held(
            lock,
            &format!("kit-many-{n}"),
            &format!("one of {MANY} locks held at once (the {n}th acquired)"),
        )
        .await?;
    }
    for lease in &leases {
        expect_release(
            lock,
            lease,
            true,
            "one of many locks, released by its holder",
        )
        .await?;
    }
    Ok(())
}

pub(super) async fn distinct_names_are_independent<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let long = format!("kit-{}", "n".repeat(196));
    let names = [
        "kit-job",
        "kit-Job",
        "kit-job-2",
        "kit-jo",
        "kit-job ",
        " kit-job",
        "x-kit-job",
        "kit-jöb",
        "kit-jo\u{308}b", // ö as o + combining diaeresis (NFD)
        "kit-工作",
        "kit-j%6Fb", // `%6F` is `o`, percent-encoded
        "kit-job.",
        "kit-job/",
        long.as_str(),
    ];
    let mut leases = Vec::new();
    for name in names {
        leases.push(
            acquire_free(lock, name, LONG)
                .await
                .map_err(|e| format!("{e} (other names are held, not this one)"))?,
        );
    }
    for name in names {
        expect_held(lock, name, "its own lease is valid").await?;
    }
    expect_release(lock, &leases[0], true, "its holder releases it").await?;
    acquire_free(lock, names[0], LONG)
        .await
        .map_err(|e| format!("after release: {e}"))?;
    for name in &names[1..] {
        expect_held(lock, name, "only another lock was released").await?;
    }
    for lease in &leases[1..] {
        expect_release(lock, lease, true, "its holder releases it").await?;
    }
    Ok(())
}
