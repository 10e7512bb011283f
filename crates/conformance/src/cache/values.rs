//! Cache obligations: values come back exactly as written, under every key the contract allows, also with concurrent writers.

use super::CacheSettings;
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::Cache;

pub(super) async fn round_trip(cache: &dyn Cache, key: &str, value: Bytes) -> Result<(), String> {
    call!(format!("set({key:?})"), cache.set(key, value.clone()));
    let got = call!(format!("get({key:?})"), cache.get(key));
    ensure!(
        got.as_ref() == Some(&value),
        "get({key:?}) after set of {} bytes answered {}",
        value.len(),
        describe(got.as_ref())
    );
    Ok(())
}

pub(super) fn describe(value: Option<&Bytes>) -> String {
    match value {
        None => "None".to_owned(),
        Some(bytes) if bytes.len() <= 32 => format!("Some({bytes:?})"),
        Some(bytes) => format!("Some(<{} bytes>)", bytes.len()),
    }
}

pub(super) async fn get_missing_key_returns_none<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let got = call!("get of a missing key", i.driver.get("kit:never-written"));
    ensure!(
        got.is_none(),
        "get of a missing key answered {}",
        describe(got.as_ref())
    );
    Ok(())
}

pub(super) async fn binary_values_round_trip_exactly<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let every_byte: Vec<u8> = (0..=255).collect();
    round_trip(&*i.driver, "kit:binary", every_byte.into()).await?;
    round_trip(&*i.driver, "kit:nul", Bytes::from_static(b"\0\0\xff")).await
}

pub(super) async fn empty_value_round_trips<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    round_trip(&*i.driver, "kit:empty", Bytes::new()).await
}

pub(super) async fn large_value_round_trips<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let large: Vec<u8> = (0..1024 * 1024).map(|n: u32| (n % 251) as u8).collect();
    round_trip(&*i.driver, "kit:large", large.into()).await
}

pub(super) async fn set_overwrites<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    round_trip(&*i.driver, "kit:overwrite", Bytes::from_static(b"first")).await?;
    round_trip(&*i.driver, "kit:overwrite", Bytes::from_static(b"second")).await
}

pub(super) async fn delete_reports_existence_and_removes<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    call!("set", cache.set("kit:delete", Bytes::from_static(b"v")));
    let existed = call!("first delete", cache.delete("kit:delete"));
    ensure!(existed, "delete of an existing key answered false");
    let got = call!("get after delete", cache.get("kit:delete"));
    ensure!(
        got.is_none(),
        "get after delete answered {}",
        describe(got.as_ref())
    );
    let again = call!("second delete", cache.delete("kit:delete"));
    ensure!(!again, "delete of a deleted key answered true");
    Ok(())
}

pub(super) async fn long_and_non_ascii_keys_work<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let long = format!("kit:{}", "k".repeat(1000));
    let keys = [
        long.as_str(),
        "kit:ключ",
        "kit:鍵",
        "kit:🔑",
        "kit:clé avec espaces",
    ];
    for (n, key) in keys.iter().enumerate() {
        call!(
            format!("set({key:?})"),
            i.driver.set(key, Bytes::from(vec![n as u8; 3]))
        );
    }
    for (n, key) in keys.iter().enumerate() {
        let got = call!(format!("get({key:?})"), i.driver.get(key));
        ensure!(
            got.as_deref() == Some(&[n as u8; 3][..]),
            "key {key:?} answered {} (keys must be distinct and exact)",
            describe(got.as_ref())
        );
    }
    Ok(())
}

pub(super) async fn empty_key_is_invalid_input<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    expect_kind(
        "get(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.get("").await,
    )?;
    expect_kind(
        "set(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.set("", Bytes::new()).await,
    )?;
    expect_kind(
        "delete(\"\")",
        ErrorKind::InvalidInput,
        &i.driver.delete("").await,
    )
}

pub(super) async fn concurrent_tasks_lose_no_writes<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let mut tasks = Vec::new();
    for task in 0..32_u32 {
        let cache = i.shared();
        tasks.push(tokio::spawn(async move {
            // Within a task the writes are concurrent too: a driver that reads, modifies and
            // writes back shared state loses all but one of them.
            let writes = (0..20_u32).map(|n| {
                let cache = cache.clone();
                async move {
                    let key = format!("kit:concurrent:{task}:{n}");
                    cache
                        .set(&key, Bytes::from(format!("{task}-{n}")))
                        .await
                        .map_err(|e| format!("set({key:?}) failed: {e}"))
                }
            });
            futures_util::future::try_join_all(writes).await?;
            for n in 0..20_u32 {
                let key = format!("kit:concurrent:{task}:{n}");
                let got = cache
                    .get(&key)
                    .await
                    .map_err(|e| format!("get({key:?}) failed: {e}"))?;
                if got.as_deref() != Some(format!("{task}-{n}").as_bytes()) {
                    return Err(format!("{key} lost its write: {}", describe(got.as_ref())));
                }
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("a task panicked: {e}"))??;
    }
    Ok(())
}
