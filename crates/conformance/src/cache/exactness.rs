//! Cache obligations on exactness: ttls at the extremes and off whole seconds, bulk calls that
//! repeat a key or carry many, counters as the decimal text they are, keys that differ only
//! slightly, and writes every other task sees at once.

use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, Cache, INCREMENT, TTL};

use super::CacheSettings;
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::cache::CacheProvider;

/// 400 days: beyond `u32` milliseconds and memcached's 30-day cut-off.
const DAYS_400: Duration = Duration::from_hours(400 * 24);
/// 100 years: beyond `i32` seconds, and the least the contract lets a long ttl be held.
const YEARS_100: Duration = Duration::from_hours(100 * 365 * 24);

/// Set `key` with `ttl` and hold the entry to its lifetime: present until `ttl - late` (where
/// that is positive), gone by `ttl + late`, both counted from before the call.
async fn expect_lifetime(
    cache: &dyn Cache,
    key: &str,
    ttl: Duration,
    late: Duration,
) -> Result<(), String> {
    let written = tokio::time::Instant::now();
    call!(
        format!("set_with_ttl({key:?}, {ttl:?})"),
        cache.set_with_ttl(key, Bytes::from_static(b"v"), ttl)
    );
    if let Some(early) = ttl.checked_sub(late).filter(|early| !early.is_zero()) {
        // Not early: still there at `ttl - late` (when the machine got there in time to tell).
        tokio::time::sleep_until(written + early).await;
        let got = call!(format!("get({key:?})"), cache.get(key));
        ensure!(
            got.is_some() || written.elapsed() >= ttl,
            "an entry with a {ttl:?} ttl was gone {:?} after it was written: more than the \
             declared tolerance ({late:?}) before its ttl (was it rounded down to whole seconds?)",
            written.elapsed()
        );
    }
    let deadline = written + ttl + late;
    loop {
        let asked = tokio::time::Instant::now();
        if call!(format!("get({key:?}) after its ttl"), cache.get(key)).is_none() {
            return Ok(());
        }
        ensure!(
            asked < deadline,
            "an entry with a {ttl:?} ttl was still there {:?} after it was written: more than the \
             declared tolerance ({late:?}) past its ttl (was it rounded up to whole seconds, or kept without expiry?)",
            asked - written
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(super) async fn ttl_extremes_are_accepted<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(TTL) {
        return Ok(()); // `ttl_entries_expire` holds an undeclared `ttl` to `Unsupported`.
    }
    let cache = &*i.driver;
    // Shorter than any backend's resolution: rounded up to it, never to 0 (no expiry) or refused.
    expect_lifetime(cache, "kit:ttl:1us", Duration::from_micros(1), s.late()).await?;
    // Longer than many backends hold: 400 days is past `u32` milliseconds and memcached's
    // 30-day cut-off, 100 years past `i32` seconds. (`Duration::MAX` is left to the drivers'
    // own tests: the contract holds it as long as the backend can, but a kit that required it
    // would fail drivers for an overflow no caller of a cache meets in practice.)
    let long = [("kit:ttl:400d", DAYS_400), ("kit:ttl:100y", YEARS_100)];
    for (key, ttl) in long {
        call!(
            format!("set_with_ttl({key:?}, {ttl:?})"),
            cache.set_with_ttl(key, Bytes::from_static(b"1"), ttl)
        );
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for (key, ttl) in long {
        let got = call!(format!("get({key:?})"), cache.get(key));
        ensure!(
            got.as_deref() == Some(&b"1"[..]),
            "an entry written with a {ttl:?} ttl answered {got:?}: a long ttl is held as long \
             as the backend can (at least 100 years), not cut short"
        );
    }
    if i.declares(BULK) {
        let got = call!(
            "get_many",
            cache.get_many(&["kit:ttl:400d", "kit:ttl:100y"])
        );
        ensure!(
            got.iter().all(Option::is_some),
            "get_many of entries with 400-day and 100-year ttls answered {got:?}"
        );
    }
    Ok(())
}

pub(super) async fn sub_second_ttls_are_exact<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(TTL) {
        return Ok(()); // `ttl_entries_expire` holds an undeclared `ttl` to `Unsupported`.
    }
    let cache = &*i.driver;
    expect_lifetime(cache, "kit:ttl:50ms", Duration::from_millis(50), s.late()).await?;
    expect_lifetime(
        cache,
        "kit:ttl:1500ms",
        Duration::from_millis(1500),
        s.late(),
    )
    .await
}

/// How many keys `bulk_handles_repeated_keys_and_large_batches` carries in one call.
const BATCH: usize = 1500;

pub(super) async fn bulk_handles_repeated_keys_and_large_batches<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(BULK) {
        return Ok(()); // `bulk_operations_work` holds an undeclared `bulk` to `Unsupported`.
    }
    let cache = &*i.driver;
    let b = Bytes::from_static;
    call!(
        "set_many with a repeated key",
        cache.set_many(&[
            ("kit:rep:a", b(b"first")),
            ("kit:rep:b", b(b"b")),
            ("kit:rep:a", b(b"last")),
        ])
    );
    let got = call!(
        "get_many with repeated keys",
        cache.get_many(&[
            "kit:rep:a",
            "kit:rep:b",
            "kit:rep:a",
            "kit:rep:missing",
            "kit:rep:a",
        ])
    );
    let expected = [
        Some(b(b"last")),
        Some(b(b"b")),
        Some(b(b"last")),
        None,
        Some(b(b"last")),
    ];
    ensure!(
        got == expected,
        "get_many with a repeated key answered {got:?}, expected {expected:?}: one value per \
         position, a repeated key's each time, and set_many keeps a repeated key's last value"
    );
    let removed = call!(
        "delete_many with repeated keys",
        cache.delete_many(&[
            "kit:rep:a",
            "kit:rep:a",
            "kit:rep:b",
            "kit:rep:missing",
            "kit:rep:b"
        ])
    );
    ensure!(
        removed == 2,
        "delete_many of 2 present keys, each named twice, counted {removed}: a key with a value \
         counts once"
    );
    let after = call!("get_many", cache.get_many(&["kit:rep:a", "kit:rep:b"]));
    ensure!(
        after == [None, None],
        "delete_many with repeated keys left {after:?}"
    );
    // Many keys in one call.
    let keys: Vec<String> = (0..BATCH).map(|n| format!("kit:batch:{n}")).collect();
    let entries: Vec<(&str, Bytes)> = keys
        .iter()
        .enumerate()
        .map(|(n, key)| (key.as_str(), Bytes::from(n.to_string())))
        .collect();
    call!(
        format!("set_many of {BATCH} entries"),
        cache.set_many(&entries)
    );
    let names: Vec<&str> = keys.iter().map(String::as_str).collect();
    let got = call!(format!("get_many of {BATCH} keys"), cache.get_many(&names));
    ensure!(
        got.len() == BATCH,
        "get_many of {BATCH} keys answered {} values",
        got.len()
    );
    for (n, value) in got.iter().enumerate() {
        ensure!(
            value.as_deref() == Some(n.to_string().as_bytes()),
            "get_many of {BATCH} keys answered {value:?} for the {n}th, written by the same \
             set_many as {:?}",
            n.to_string()
        );
    }
    let removed = call!(
        format!("delete_many of {BATCH} keys"),
        cache.delete_many(&names)
    );
    ensure!(
        removed == BATCH as u64,
        "delete_many of {BATCH} present keys counted {removed}"
    );
    Ok(())
}

pub(super) async fn counters_are_plain_decimal_values<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(INCREMENT) {
        return Ok(()); // `increment_is_atomic` holds an undeclared one to `Unsupported`.
    }
    let cache = &*i.driver;
    let made = call!(
        "increment of a missing key",
        cache.increment("kit:c:new", -3)
    );
    let got = call!("get of a counter", cache.get("kit:c:new"));
    ensure!(
        made == -3 && got.is_some(),
        "increment(-3) of a missing key answered {made}, then get answered {got:?}: expected -3 \
         and a value"
    );
    // Decimal text written by `set` may count on (as Redis `INCRBY` does) or be `Conflict`
    // (not a counter `increment` wrote): the contract allows both, but nothing else.
    call!("set", cache.set("kit:c:plain", Bytes::from_static(b"41")));
    let counted = cache.increment("kit:c:plain", 1).await;
    let got = call!("get", cache.get("kit:c:plain"));
    match &counted {
        Ok(42) => {}
        Err(e) if e.kind() == ErrorKind::Conflict => ensure!(
            got.as_deref() == Some(&b"41"[..]),
            "a refused increment of b\"41\" changed the value to {got:?}"
        ),
        other => {
            return Err(format!(
                "increment(1) of b\"41\" written by set answered {other:?}: expected Ok(42) \
                 or Conflict"
            ));
        }
    }
    // A value no integer parser reads is not a counter, and is left as it was.
    let loose: [&[u8]; 8] = [
        b"text",
        b" 5",
        b"5 ",
        b"5.0",
        b"",
        b"0x5",
        b"1e3",
        b"9223372036854775808",
    ];
    for value in loose {
        let text = String::from_utf8_lossy(value);
        call!("set", cache.set("kit:c:loose", Bytes::from_static(value)));
        expect_kind(
            &format!("increment of the value {text:?}, not a number"),
            ErrorKind::Conflict,
            &cache.increment("kit:c:loose", 1).await,
        )?;
        let kept = call!("get", cache.get("kit:c:loose"));
        ensure!(
            kept.as_deref() == Some(value),
            "a refused increment of {text:?} changed the value to {kept:?}"
        );
    }
    // A plain `set` over a counter replaces it; after `delete` a counter starts again at 0.
    call!("increment", cache.increment("kit:c:replaced", 3));
    call!(
        "set over a counter",
        cache.set("kit:c:replaced", Bytes::from_static(b"text"))
    );
    expect_kind(
        "increment after set replaced a counter with text",
        ErrorKind::Conflict,
        &cache.increment("kit:c:replaced", 1).await,
    )?;
    call!("increment", cache.increment("kit:c:deleted", 10));
    ensure!(
        call!("delete of a counter", cache.delete("kit:c:deleted")),
        "delete of a counter answered false"
    );
    let again = call!(
        "increment after delete",
        cache.increment("kit:c:deleted", 1)
    );
    ensure!(
        again == 1,
        "increment(1) of a deleted counter answered {again}: it starts again from 0"
    );
    if i.declares(TTL) {
        counters_keep_expiries(cache, s.late()).await?;
    }
    Ok(())
}

/// `increment` keeps an entry's expiry; `set_with_ttl` over a counter gives it one.
async fn counters_keep_expiries(cache: &dyn Cache, late: Duration) -> Result<(), String> {
    let ttl = Duration::from_millis(300);
    let written = tokio::time::Instant::now();
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:c:expiring", Bytes::from_static(b"1"), ttl)
    );
    call!("increment", cache.increment("kit:c:ttl-over", 5));
    call!(
        "set_with_ttl over a counter",
        cache.set_with_ttl("kit:c:ttl-over", Bytes::from_static(b"7"), ttl)
    );
    // Where decimal text written by `set_with_ttl` counts on, the count keeps its expiry.
    let counted = cache.increment("kit:c:expiring", 1).await;
    let counts = match counted {
        Ok(2) => true,
        Err(ref e) if e.kind() == ErrorKind::Conflict => false,
        other => {
            return Err(format!(
                "increment(1) of b\"1\" written by set_with_ttl answered {other:?}: expected \
                 Ok(2) or Conflict"
            ));
        }
    };
    tokio::time::sleep_until(written + ttl + late).await;
    let keys: &[&str] = if counts {
        &["kit:c:expiring", "kit:c:ttl-over"]
    } else {
        &["kit:c:ttl-over"]
    };
    for &key in keys {
        let got = call!(format!("get({key:?})"), cache.get(key));
        ensure!(
            got.is_none(),
            "the counter {key:?} was still there ({got:?}) more than the declared tolerance \
             ({late:?}) past its 300 ms ttl: increment keeps an entry's expiry, and \
             set_with_ttl over a counter replaces it with its own"
        );
    }
    Ok(())
}

/// A key that is a glob pattern matching other keys of `near_identical_keys_are_distinct`.
const GLOB_KEY: &str = "kit:near:*";

/// Keys `near_identical_keys_are_distinct` holds apart.
const NEAR_KEYS: [&str; 22] = [
    "kit:near:key",
    "kit:near:key ",
    " kit:near:key",
    "kit:near:Key",
    "KIT:NEAR:KEY",
    "kit:near:key:x",
    "x:kit:near:key",
    "kit:near:ke",
    "kit:near:\u{e9}",   // é, composed (NFC)
    "kit:near:e\u{301}", // e + combining acute (NFD)
    // Plain keys, though a pattern, a path, an escape or an encoding to some backends.
    GLOB_KEY,
    "kit:near:?ey",
    "kit:near:[k]ey",
    "kit:near/key",
    "kit:near/../near:key",
    "kit:near:k\\ey",
    "kit:near:%6Bey", // `%6B` is `k`, percent-encoded
    "kit:near:key\t",
    "kit:near:key\n",
    "kit:near:key\r\n",
    "kit:near:key.", // a trailing dot, which some file systems drop
    "kit:near:key/", // a trailing slash, which some path or URL layers drop
];

pub(super) async fn near_identical_keys_are_distinct<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    let keys = NEAR_KEYS;
    let glob = keys
        .iter()
        .position(|key| *key == GLOB_KEY)
        .unwrap_or_default();
    let value = |n: usize| Bytes::from(format!("value-{n}"));
    let expect_all = |got: &[Option<Bytes>], skip: &[usize], what: &str| {
        for (n, (key, got)) in keys.iter().zip(got).enumerate() {
            let expected = (!skip.contains(&n)).then(|| value(n));
            if *got != expected {
                return Err(format!(
                    "{what}: {key:?} answered {got:?}, expected {expected:?} (keys that differ \
                     by a space, case, a prefix or suffix, or NFC vs NFD are distinct, and \
                     `*`, `?`, `[`, `/`, `..`, `\\`, `%` and control characters are plain \
                     characters of a key)"
                ));
            }
        }
        Ok(())
    };
    for (n, key) in keys.iter().enumerate() {
        call!(format!("set({key:?})"), cache.set(key, value(n)));
    }
    let mut got = Vec::new();
    for key in keys {
        got.push(call!(format!("get({key:?})"), cache.get(key)));
    }
    expect_all(&got, &[], "get after set")?;
    if i.declares(BULK) {
        let got = call!("get_many", cache.get_many(&keys));
        expect_all(&got, &[], "get_many")?;
        let entries: Vec<(&str, Bytes)> = keys
            .iter()
            .enumerate()
            .map(|(n, key)| (*key, value(n)))
            .collect();
        call!("set_many", cache.set_many(&entries));
        let removed = call!("delete_many", cache.delete_many(&[keys[1]]));
        ensure!(removed == 1, "delete_many of one key counted {removed}");
        let got = call!("get_many", cache.get_many(&keys));
        expect_all(&got, &[1], "after set_many, then delete_many of the second")?;
        call!("set", cache.set(keys[1], value(1)));
    }
    ensure!(
        call!(format!("delete({:?})", keys[0]), cache.delete(keys[0])),
        "delete of {:?} answered false",
        keys[0]
    );
    let mut got = Vec::new();
    for key in keys {
        got.push(call!(format!("get({key:?})"), cache.get(key)));
    }
    expect_all(&got, &[0], "after delete of the first")?;
    ensure!(
        call!(format!("delete({GLOB_KEY:?})"), cache.delete(GLOB_KEY)),
        "delete of {GLOB_KEY:?} answered false"
    );
    let mut got = Vec::new();
    for key in keys {
        got.push(call!(format!("get({key:?})"), cache.get(key)));
    }
    expect_all(&got, &[0, glob], &format!("after delete of {GLOB_KEY:?}"))?;
    if i.declares(INCREMENT) {
        near_identical_counters_are_distinct(cache).await?;
    }
    if i.declares(TTL) {
        let late = s.late();
        let written = tokio::time::Instant::now();
        call!(
            "set_with_ttl",
            cache.set_with_ttl(keys[2], value(2), Duration::from_millis(100))
        );
        tokio::time::sleep_until(written + Duration::from_millis(100) + late).await;
        ensure!(
            call!("get", cache.get(keys[2])).is_none(),
            "an entry with a 100 ms ttl outlived it by more than {late:?}"
        );
        for (n, key) in keys.iter().enumerate().skip(3).filter(|(n, _)| *n != glob) {
            let got = call!(format!("get({key:?})"), cache.get(key));
            ensure!(
                got == Some(value(n)),
                "{key:?} answered {got:?} after a near-identical key expired"
            );
        }
    }
    Ok(())
}

/// Counters under keys that differ by a trailing space, case, or NFC vs NFD count apart.
async fn near_identical_counters_are_distinct(cache: &dyn Cache) -> Result<(), String> {
    let pairs = [
        ("kit:near:n", "kit:near:n "),
        ("kit:near:n", "kit:near:N"),
        ("kit:near:\u{e9}n", "kit:near:e\u{301}n"),
    ];
    for (one, other) in pairs {
        call!("delete", cache.delete(other));
        let a = call!(format!("increment({one:?}, 1)"), cache.increment(one, 1));
        let b = call!(
            format!("increment({other:?}, 1)"),
            cache.increment(other, 1)
        );
        ensure!(
            b == 1,
            "increment of {other:?} answered {b} after {one:?} was counted to {a}: distinct \
             keys are distinct counters"
        );
    }
    Ok(())
}

pub(super) async fn writes_are_seen_at_once_by_other_tasks<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    const READERS: usize = 8;
    let key = "kit:seen";
    for round in 0..12_u32 {
        // Odd rounds delete, even rounds write: every reader, on whatever thread, must see the
        // state the completed call left (a cache never answers an overwritten or deleted value).
        let expected = if round % 2 == 0 {
            let value = Bytes::from(format!("round-{round}"));
            call!("set", i.driver.set(key, value.clone()));
            Some(value)
        } else {
            call!("delete", i.driver.delete(key));
            None
        };
        let mut readers = Vec::new();
        for _ in 0..READERS {
            let cache = i.shared();
            readers.push(tokio::spawn(async move { cache.get(key).await }));
        }
        for reader in readers {
            let got = reader
                .await
                .map_err(|e| format!("a reader panicked: {e}"))?
                .map_err(|e| format!("get on another task failed: {e}"))?;
            ensure!(
                got == expected,
                "after {} completed, a get on another task answered {got:?}, expected \
                 {expected:?}: a value overwritten or deleted before a call began was returned",
                if round % 2 == 0 { "set" } else { "delete" }
            );
        }
    }
    Ok(())
}
