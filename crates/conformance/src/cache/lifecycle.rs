//! Cache obligations: after `stop`, and secrets.

use super::CacheSettings;
use crate::harness::Instance;
use crate::{call, expect_kind};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, INCREMENT, TTL};
use std::time::Duration;

pub(super) async fn operations_after_stop_fail_with_stopped<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    call!("set", i.driver.set("kit:stop", Bytes::from_static(b"v")));
    i.driver
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "get after stop",
        ErrorKind::Stopped,
        &i.driver.get("kit:stop").await,
    )?;
    expect_kind(
        "set after stop",
        ErrorKind::Stopped,
        &i.driver.set("kit:stop", Bytes::new()).await,
    )?;
    expect_kind(
        "delete after stop",
        ErrorKind::Stopped,
        &i.driver.delete("kit:stop").await,
    )?;
    let cache = &*i.driver;
    if i.declares(TTL) {
        expect_kind(
            "set_with_ttl after stop",
            ErrorKind::Stopped,
            &cache
                .set_with_ttl("kit:stop", Bytes::new(), Duration::from_mins(1))
                .await,
        )?;
    }
    if i.declares(INCREMENT) {
        expect_kind(
            "increment after stop",
            ErrorKind::Stopped,
            &cache.increment("kit:stop-counter", 1).await,
        )?;
    }
    if i.declares(BULK) {
        expect_kind(
            "get_many after stop",
            ErrorKind::Stopped,
            &cache.get_many(&["kit:stop"]).await,
        )?;
        expect_kind(
            "set_many after stop",
            ErrorKind::Stopped,
            &cache.set_many(&[("kit:stop", Bytes::new())]).await,
        )?;
        expect_kind(
            "delete_many after stop",
            ErrorKind::Stopped,
            &cache.delete_many(&["kit:stop"]).await,
        )?;
    }
    Ok(())
}

pub(super) async fn secrets_never_show<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    i.secrets_never_show(|cache| {
        Box::pin(async move {
            let v = || Bytes::from_static(b"v");
            vec![
                cache.get("").await.err(),
                cache.set("", v()).await.err(),
                cache.delete("").await.err(),
                cache
                    .set_with_ttl("", v(), Duration::from_secs(1))
                    .await
                    .err(),
                cache.increment("", 1).await.err(),
                cache.get_many(&[""]).await.err(),
                cache.set_many(&[("", v())]).await.err(),
                cache.delete_many(&[""]).await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                cache.get("kit:secrets").await.err(),
                cache.set("kit:secrets", v()).await.err(),
            ]
        })
    })
    .await
}
