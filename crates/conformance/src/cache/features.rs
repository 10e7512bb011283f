//! Cache obligations of the optional features, each exercised when declared and `Unsupported` when not: `ttl`, `increment`, `bulk`.

use super::CacheSettings;
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, INCREMENT, TTL};
use std::time::Duration;

pub(super) async fn ttl_entries_expire<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    let short = Duration::from_millis(300);
    if !i.declares(TTL) {
        return expect_unsupported(
            "set_with_ttl",
            &cache
                .set_with_ttl("kit:ttl", Bytes::from_static(b"v"), short)
                .await,
        );
    }
    let late = s.late();
    // The TTL counts from the call at the latest: the bound is measured from before it.
    let written = tokio::time::Instant::now();
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:ttl", Bytes::from_static(b"v"), short)
    );
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:ttl-then-set", Bytes::from_static(b"v"), short)
    );
    call!(
        "set",
        cache.set("kit:ttl-then-set", Bytes::from_static(b"kept"))
    );
    call!("set", cache.set("kit:no-ttl", Bytes::from_static(b"kept")));
    let got = call!("get before expiry", cache.get("kit:ttl"));
    ensure!(got.is_some(), "an entry with a 300 ms ttl was gone at once");
    // Not early: still there at half its TTL (when the machine got there in time to tell).
    tokio::time::sleep_until(written + short / 2).await;
    let got = call!("get at half the ttl", cache.get("kit:ttl"));
    ensure!(
        got.is_some() || written.elapsed() >= short,
        "an entry with a 300 ms ttl was gone {:?} after it was written",
        written.elapsed()
    );
    // Expired within the declared tolerance: a cache may evict lazily, not late.
    let deadline = written + short + late;
    loop {
        let asked = tokio::time::Instant::now();
        if call!("get after ttl", cache.get("kit:ttl")).is_none() {
            break;
        }
        ensure!(
            asked < deadline,
            "an entry with a 300 ms ttl was still there {:?} after it was written: more than the \
             declared tolerance ({late:?}) past its ttl",
            asked - written
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kept = call!("get", cache.get("kit:ttl-then-set"));
    ensure!(
        kept.is_some(),
        "a plain `set` after `set_with_ttl` must clear the expiry, but the entry expired"
    );
    let kept = call!("get", cache.get("kit:no-ttl"));
    ensure!(kept.is_some(), "an entry without ttl disappeared");
    expect_kind(
        "set_with_ttl with a zero ttl",
        ErrorKind::InvalidInput,
        &cache
            .set_with_ttl("kit:zero", Bytes::new(), Duration::ZERO)
            .await,
    )
}

pub(super) async fn increment_is_atomic<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(INCREMENT) {
        return expect_unsupported("increment", &i.driver.increment("kit:counter", 1).await);
    }
    let first = call!(
        "increment of a missing key",
        i.driver.increment("kit:counter", 5)
    );
    ensure!(
        first == 5,
        "increment(5) of a missing key answered {first}, not 5"
    );
    let down = call!("negative increment", i.driver.increment("kit:counter", -5));
    ensure!(down == 0, "increment(-5) after 5 answered {down}, not 0");
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let cache = i.shared();
        tasks.push(tokio::spawn(async move {
            let increments = (0..50).map(|_| cache.increment("kit:counter", 1));
            futures_util::future::try_join_all(increments)
                .await
                .map_err(|e| format!("increment failed: {e}"))?;
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("a task panicked: {e}"))??;
    }
    let total = call!("increment(0)", i.driver.increment("kit:counter", 0));
    ensure!(
        total == 800,
        "16 tasks × 50 increments gave {total}, not 800: increments were lost"
    );
    call!(
        "set",
        i.driver
            .set("kit:not-a-counter", Bytes::from_static(b"text"))
    );
    expect_kind(
        "increment of a non-counter value",
        ErrorKind::Conflict,
        &i.driver.increment("kit:not-a-counter", 1).await,
    )
}

pub(super) async fn bulk_operations_work<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    if !i.declares(BULK) {
        expect_unsupported("get_many", &cache.get_many(&["kit:a"]).await)?;
        expect_unsupported(
            "set_many",
            &cache.set_many(&[("kit:a", Bytes::new())]).await,
        )?;
        return expect_unsupported("delete_many", &cache.delete_many(&["kit:a"]).await);
    }
    call!(
        "set_many",
        cache.set_many(&[
            ("kit:bulk:a", Bytes::from_static(b"1")),
            ("kit:bulk:b", Bytes::from_static(b"2"))
        ])
    );
    let got = call!(
        "get_many",
        cache.get_many(&["kit:bulk:b", "kit:bulk:missing", "kit:bulk:a"])
    );
    let expected = [
        Some(Bytes::from_static(b"2")),
        None,
        Some(Bytes::from_static(b"1")),
    ];
    ensure!(
        got == expected,
        "get_many answered {got:?}, expected {expected:?} (same order, None for a miss)"
    );
    let deleted = call!(
        "delete_many",
        cache.delete_many(&["kit:bulk:a", "kit:bulk:missing", "kit:bulk:b"])
    );
    ensure!(
        deleted == 2,
        "delete_many of 2 present and 1 missing key answered {deleted}, not 2"
    );
    let after = call!("get_many", cache.get_many(&["kit:bulk:a", "kit:bulk:b"]));
    ensure!(
        after == [None, None],
        "values remained after delete_many: {after:?}"
    );
    Ok(())
}
