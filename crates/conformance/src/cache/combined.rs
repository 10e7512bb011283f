//! Cache obligations on features combined and parameters at their limits: an expired entry as
//! every operation sees it, a second TTL, counters at the ends of `i64`, the key rule on every
//! operation, and empty batches.

use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, Cache, INCREMENT, TTL};

use super::CacheSettings;
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::cache::CacheProvider;

/// The short TTL the obligations here expire; the long one outlives them.
const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_mins(1);
/// How many expired entries `expiry_is_seen_by_every_operation` deletes, and counts, each.
const EACH: usize = 64;
/// Wait until `get(key)`, given its [`SHORT`] ttl at `written` (or just after), answers
/// `None`: within the declared tolerance past the ttl, as a cache may evict lazily, not late.
async fn await_expiry(
    cache: &dyn Cache,
    key: &str,
    written: tokio::time::Instant,
    late: Duration,
) -> Result<(), String> {
    let deadline = written + SHORT + late;
    loop {
        let asked = tokio::time::Instant::now();
        if call!(format!("get({key:?}) after its ttl"), cache.get(key)).is_none() {
            return Ok(());
        }
        ensure!(
            asked < deadline,
            "an entry with a {SHORT:?} ttl was still there {:?} after it was written: more than \
             the declared tolerance ({late:?}) past its ttl",
            asked - written
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `get_many` answers `None` for the expired `kit:x:bulk` (and the value of
/// `kit:x:short-then-long`, whose second ttl is long); `delete_many` does not count it.
async fn bulk_calls_see_the_expiry(cache: &dyn Cache) -> Result<(), String> {
    let v = || Bytes::from_static(b"v");
    let got = call!(
        "get_many",
        cache.get_many(&["kit:x:bulk", "kit:x:short-then-long"])
    );
    ensure!(
        got == [None, Some(v())],
        "get_many of an expired entry and one whose second ttl is long answered {got:?}, \
         expected [None, Some(b\"v\")]"
    );
    let removed = call!("delete_many", cache.delete_many(&["kit:x:bulk"]));
    ensure!(
        removed == 0,
        "delete_many of an expired entry counted {removed}, expected 0"
    );
    Ok(())
}

/// `increment` of each entry in `counted` (and `kit:x:count`), whose ttl passed, counts from 0.
async fn expired_entries_count_from_zero(
    cache: &dyn Cache,
    counted: &[String],
) -> Result<(), String> {
    for key in counted.iter().map(String::as_str).chain(["kit:x:count"]) {
        let got = call!(
            format!("increment of the expired (non-counter) entry {key:?}"),
            cache.increment(key, 2)
        );
        ensure!(
            got == 2,
            "increment by 2 of the expired entry {key:?} answered {got}: an expired entry \
             counts as absent (0)"
        );
    }
    Ok(())
}

pub(super) async fn expiry_is_seen_by_every_operation<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(TTL) {
        return Ok(()); // `ttl_entries_expire` holds an undeclared `ttl` to `Unsupported`.
    }
    let cache = &*i.driver;
    let v = || Bytes::from_static(b"v");
    // Many of each: a cache that evicts expired entries lazily, in batches, still holds some of
    // them when they are deleted or counted, however its housekeeping is timed.
    let deleted: Vec<String> = (0..EACH).map(|n| format!("kit:x:delete-{n}")).collect();
    let counted: Vec<String> = (0..EACH).map(|n| format!("kit:x:count-{n}")).collect();
    let singles = [
        "kit:x:delete",
        "kit:x:bulk",
        "kit:x:count",
        "kit:x:set-again",
        "kit:x:set-many-over",
    ];
    for key in deleted
        .iter()
        .chain(&counted)
        .map(String::as_str)
        .chain(singles)
    {
        call!(
            format!("set_with_ttl({key:?})"),
            cache.set_with_ttl(key, v(), SHORT)
        );
    }
    // A second TTL replaces the first, shorter or longer.
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:x:short-then-long", v(), SHORT)
    );
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:x:short-then-long", v(), LONG)
    );
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:x:long-then-short", v(), LONG)
    );
    let written = tokio::time::Instant::now();
    call!(
        "set_with_ttl",
        cache.set_with_ttl("kit:x:long-then-short", v(), SHORT)
    );
    ensure!(
        call!("get before expiry", cache.get("kit:x:delete")).is_some(),
        "an entry with a {SHORT:?} ttl was gone at once"
    );
    if i.declares(BULK) {
        // `set_many` over an entry with a ttl stores it as `set` does: without that expiry.
        call!(
            "set_many over an entry with a ttl",
            cache.set_many(&[("kit:x:set-many-over", Bytes::from_static(b"over"))])
        );
    }
    // The entry given its short TTL last: once it is gone, so is every other short one.
    await_expiry(cache, "kit:x:long-then-short", written, s.late()).await?;
    for key in deleted.iter().map(String::as_str).chain(["kit:x:delete"]) {
        ensure!(
            !call!("delete of an expired entry", cache.delete(key)),
            "delete of {key:?}, whose ttl passed, answered true: an expired entry has no value"
        );
    }
    if i.declares(BULK) {
        bulk_calls_see_the_expiry(cache).await?;
    }
    if i.declares(INCREMENT) {
        expired_entries_count_from_zero(cache, &counted).await?;
    }
    ensure!(
        call!("get", cache.get("kit:x:short-then-long")).is_some(),
        "a second, longer ttl must replace a first short one, but the entry expired"
    );
    // A plain `set` after expiry stores an entry that does not expire.
    call!(
        "set",
        cache.set("kit:x:set-again", Bytes::from_static(b"again"))
    );
    tokio::time::sleep(SHORT * 2).await;
    let again = call!("get", cache.get("kit:x:set-again"));
    ensure!(
        again.as_deref() == Some(&b"again"[..]),
        "a plain set after an entry expired must store without expiry, get answered {again:?}"
    );
    if i.declares(BULK) {
        let over = call!("get", cache.get("kit:x:set-many-over"));
        ensure!(
            over.as_deref() == Some(&b"over"[..]),
            "set_many over an entry with a {SHORT:?} ttl must clear the expiry, as set does, \
             but get answered {over:?} after the ttl"
        );
    }
    Ok(())
}

pub(super) async fn increment_at_the_limits<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(INCREMENT) {
        return Ok(()); // `increment_is_atomic` holds an undeclared one to `Unsupported`.
    }
    let cache = &*i.driver;
    let steps: [(&str, i64, Option<i64>); 9] = [
        ("kit:lim:zero", 0, Some(0)),
        ("kit:lim:max", i64::MAX, Some(i64::MAX)),
        ("kit:lim:max", 1, None),
        ("kit:lim:max", 0, Some(i64::MAX)),
        ("kit:lim:max", i64::MIN, Some(-1)),
        ("kit:lim:min", i64::MIN, Some(i64::MIN)),
        ("kit:lim:min", -1, None),
        ("kit:lim:min", i64::MIN, None),
        ("kit:lim:min", 0, Some(i64::MIN)),
    ];
    for (key, delta, expected) in steps {
        let what = format!("increment({key:?}, {delta})");
        let got = cache.increment(key, delta).await;
        match expected {
            Some(value) => {
                let got = got.map_err(|e| format!("{what} failed: {e}"))?;
                ensure!(got == value, "{what} answered {got}, expected {value}");
            }
            // Overflow: `Conflict`, and the counter keeps its value (the next step reads it).
            None => expect_kind(&format!("{what} (overflow)"), ErrorKind::Conflict, &got)?,
        }
    }
    Ok(())
}

pub(super) async fn every_operation_refuses_an_empty_key<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    let v = || Bytes::from_static(b"v");
    if i.declares(TTL) {
        expect_kind(
            "set_with_ttl(\"\")",
            ErrorKind::InvalidInput,
            &cache.set_with_ttl("", v(), LONG).await,
        )?;
    }
    if i.declares(INCREMENT) {
        expect_kind(
            "increment(\"\", 1)",
            ErrorKind::InvalidInput,
            &cache.increment("", 1).await,
        )?;
    }
    if i.declares(BULK) {
        call!("set", cache.set("kit:kept", v()));
        expect_kind(
            "get_many with an empty key among others",
            ErrorKind::InvalidInput,
            &cache.get_many(&["kit:kept", ""]).await,
        )?;
        // A call refused for one key changes nothing, whatever the key's place.
        expect_kind(
            "set_many with an empty key after a valid one",
            ErrorKind::InvalidInput,
            &cache.set_many(&[("kit:bulk-new", v()), ("", v())]).await,
        )?;
        ensure!(
            call!("get", cache.get("kit:bulk-new")).is_none(),
            "set_many answered InvalidInput for an empty key but wrote the valid entry before it"
        );
        expect_kind(
            "delete_many with an empty key after a valid one",
            ErrorKind::InvalidInput,
            &cache.delete_many(&["kit:kept", ""]).await,
        )?;
        ensure!(
            call!("get", cache.get("kit:kept")).is_some(),
            "delete_many answered InvalidInput for an empty key but deleted the valid key before it"
        );
    }
    Ok(())
}

pub(super) async fn empty_batches_are_no_ops<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    if !i.declares(BULK) {
        return Ok(()); // `bulk_operations_work` holds an undeclared `bulk` to `Unsupported`.
    }
    let cache = &*i.driver;
    call!("set", cache.set("kit:untouched", Bytes::from_static(b"v")));
    let got = call!("get_many of no keys", cache.get_many(&[]));
    ensure!(got.is_empty(), "get_many of no keys answered {got:?}");
    call!("set_many of no entries", cache.set_many(&[]));
    let removed = call!("delete_many of no keys", cache.delete_many(&[]));
    ensure!(removed == 0, "delete_many of no keys counted {removed}");
    ensure!(
        call!("get", cache.get("kit:untouched")).is_some(),
        "an empty batch removed an entry it did not name"
    );
    Ok(())
}
