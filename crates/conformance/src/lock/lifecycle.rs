//! Lock obligations: after `stop`, and secrets.

use super::leases::acquire_free;
use super::{LONG, LockSettings};
use crate::expect_kind;
use crate::harness::Instance;
use sandloom_driverkit::lock::LockProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::lock::Lease;
use std::time::{Duration, SystemTime};

pub(super) async fn operations_after_stop_fail_with_stopped<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    let lock = &*i.driver;
    let lease = acquire_free(lock, "kit-stop", LONG).await?;
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "acquire after stop",
        ErrorKind::Stopped,
        &lock.acquire("kit-stop-2", LONG).await,
    )?;
    expect_kind(
        "acquire_wait after stop",
        ErrorKind::Stopped,
        &lock.acquire_wait("kit-stop-3", LONG, LONG).await,
    )?;
    expect_kind(
        "release after stop",
        ErrorKind::Stopped,
        &lock.release(&lease).await,
    )?;
    expect_kind(
        "refresh after stop",
        ErrorKind::Stopped,
        &lock.refresh(&lease, LONG).await,
    )
}

pub(super) async fn secrets_never_show<T: LockProvider>(
    i: &Instance<T>,
    _: &LockSettings,
) -> Result<(), String> {
    i.secrets_never_show(|lock| {
        Box::pin(async move {
            let unheld = Lease::new("kit-secrets", "kit-token", 1, SystemTime::now() + LONG);
            vec![
                lock.acquire("", LONG).await.err(),
                lock.acquire("kit-secrets", Duration::ZERO).await.err(),
                lock.release(&Lease::new("", "kit-token", 1, SystemTime::now()))
                    .await
                    .err(),
                lock.refresh(&unheld, LONG).await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                lock.release(&unheld).await.err(),
            ]
        })
    })
    .await
}
