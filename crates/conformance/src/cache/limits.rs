//! Cache obligations on the edges of its inputs and on what the contract promises will not
//! happen: keys and values at and past the sizes every driver holds, and entries written
//! without a ttl that outlive every ttl the kit uses.
//!
//! Each input of the contract, by partition, and the obligation that holds a driver to it:
//!
//! | input | empty | one | typical | at the limit | past the limit | look-alike forms |
//! |---|---|---|---|---|---|---|
//! | key | `empty_key_is_invalid_input`, `every_operation_refuses_an_empty_key` | `keys_and_values_at_and_past_their_limits` | every obligation | `keys_and_values_at_and_past_their_limits` (1,024 bytes, ASCII and 2-byte letters) | the same (1,025 bytes: exact or `InvalidInput`) | `near_identical_keys_are_distinct` (case, spaces, NFC/NFD, `%6B`, glob, path and control characters, trailing dot and slash), `long_and_non_ascii_keys_work`; NUL: `keys_and_values_at_and_past_their_limits` (whole or `InvalidInput`) |
//! | value | `empty_value_round_trips` | `keys_and_values_at_and_past_their_limits` | `set_overwrites` | `large_value_round_trips` (1 MiB) | `keys_and_values_at_and_past_their_limits` (1 MiB + 1) | `binary_values_round_trip_exactly` (NUL, every byte) |
//! | ttl | `ttl_entries_expire` (zero) | `ttl_extremes_are_accepted` (1 µs) | `sub_second_ttls_are_exact` | `ttl_extremes_are_accepted` (100 years) | no limit: the contract holds longer as long as it can | none apply |
//! | no ttl | — | — | `entries_without_ttl_never_expire` | — | — | — |
//! | delta | `increment_at_the_limits` (0) | `increment_is_atomic` | `increment_is_atomic` (negative too) | `increment_at_the_limits` (`i64::MAX`, `MIN`) | the same (overflow is `Conflict`) | `counters_are_plain_decimal_values` (`" 5"`, `"5.0"`, `"0x5"`) |
//! | batch | `empty_batches_are_no_ops` | `bulk_operations_work` | `bulk_operations_work` | no limit: `bulk_handles_repeated_keys_and_large_batches` (1,500) | — | repeated keys: `bulk_handles_repeated_keys_and_large_batches` |

use std::time::Duration;

use sandloom_driverkit::cache::CacheProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::cache::{BULK, Cache, INCREMENT, TTL};

use super::CacheSettings;
use super::values::{describe, round_trip};
use crate::harness::Instance;
use crate::{call, ensure};

/// The longest key every driver holds, in bytes (the contract's limit).
const KEY_LIMIT: usize = 1024;
/// The largest value every driver holds, in bytes (the contract's limit).
const VALUE_LIMIT: usize = 1024 * 1024;

/// `prefix` filled up to exactly `bytes` bytes with `unit`, after as many `x` as it takes to
/// make the rest a whole number of `unit`s (so the name ends in `unit`).
fn filled(prefix: &str, unit: &str, bytes: usize) -> String {
    let room = bytes - prefix.len();
    let pad = "x".repeat(room % unit.len());
    format!("{prefix}{pad}{}", unit.repeat(room / unit.len()))
}

/// A short description of a long key, for messages.
fn shown(key: &str) -> String {
    if key.len() <= 40 {
        return format!("{key:?}");
    }
    let head: String = key.chars().take(12).collect();
    format!("{head:?}… ({} bytes)", key.len())
}

/// Write `value` under `key`, past a limit the contract sets: the driver stores it exactly or
/// refuses it with `InvalidInput`, writing nothing. `Ok(true)` when it was stored.
async fn stored_whole_or_refused(
    cache: &dyn Cache,
    key: &str,
    value: Bytes,
) -> Result<bool, String> {
    match cache.set(key, value.clone()).await {
        Ok(()) => {
            let got = call!(format!("get({})", shown(key)), cache.get(key));
            ensure!(
                got.as_ref() == Some(&value),
                "set of {} bytes under {} succeeded, but get answered {}: past the limit a \
                 driver stores keys and values whole or refuses them with InvalidInput, never \
                 cuts them",
                value.len(),
                shown(key),
                describe(got.as_ref())
            );
            Ok(true)
        }
        Err(error) if error.kind() == ErrorKind::InvalidInput => Ok(false),
        Err(error) => Err(format!(
            "set of {} bytes under {} failed with {}: past the limit a driver stores it or \
             refuses it with InvalidInput: {error}",
            value.len(),
            shown(key),
            error.kind()
        )),
    }
}

pub(super) async fn keys_and_values_at_and_past_their_limits<T: CacheProvider>(
    i: &Instance<T>,
    _: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    // A key of one byte, and a value of one.
    round_trip(cache, "k", Bytes::from_static(b"1")).await?;
    // Keys at the limit, in ASCII and in 2-byte letters, beside their own prefixes one
    // character shorter: all distinct, all exact.
    let ascii = filled("kit:limit:", "k", KEY_LIMIT);
    let letters = filled("kit:limit:", "é", KEY_LIMIT);
    let ascii_short = ascii[..ascii.len() - 1].to_owned();
    let letters_short = letters[..letters.len() - "é".len()].to_owned();
    let at_limit = [&ascii, &letters, &ascii_short, &letters_short];
    for (n, key) in at_limit.iter().enumerate() {
        call!(
            format!("set({})", shown(key)),
            cache.set(key, Bytes::from(format!("at-{n}")))
        );
    }
    let check_at_limit = |what: &'static str| async move {
        for (n, key) in at_limit.iter().enumerate() {
            let got = call!(format!("get({})", shown(key)), cache.get(key));
            ensure!(
                got == Some(Bytes::from(format!("at-{n}"))),
                "{what}: get({}) answered {}: every driver holds keys of up to {KEY_LIMIT} \
                 bytes, each distinct from its own prefix",
                shown(key),
                describe(got.as_ref())
            );
        }
        Ok::<(), String>(())
    };
    check_at_limit("keys at the limit").await?;
    // Past the limit: stored exactly, as a key of its own, or refused; never cut to the key
    // at the limit that it starts with.
    for (past, unit) in [(&ascii, "k"), (&letters, "é")] {
        let key = format!("{past}{unit}");
        stored_whole_or_refused(cache, &key, Bytes::from_static(b"past")).await?;
    }
    check_at_limit("after keys past the limit were written").await?;
    // A NUL character: a key like any other, or refused (a backend of C strings cannot hold
    // it); never cut at the NUL onto the key before it.
    call!(
        "set(\"kit:nul\")",
        cache.set("kit:nul", Bytes::from_static(b"before the nul"))
    );
    stored_whole_or_refused(cache, "kit:nul\0after", Bytes::from_static(b"with the nul")).await?;
    let got = call!("get(\"kit:nul\")", cache.get("kit:nul"));
    ensure!(
        got.as_deref() == Some(&b"before the nul"[..]),
        "a write to \"kit:nul\\0after\" changed \"kit:nul\" to {}: a key is never cut at a NUL \
         character",
        describe(got.as_ref())
    );
    // A value at the limit is `large_value_round_trips`; one byte past it is stored whole or
    // refused, and a refused one leaves the value before it.
    call!(
        "set(\"kit:limit:value\")",
        cache.set("kit:limit:value", Bytes::from_static(b"before"))
    );
    let past: Vec<u8> = (0..=VALUE_LIMIT).map(|n| (n % 253) as u8).collect();
    if !stored_whole_or_refused(cache, "kit:limit:value", past.into()).await? {
        let got = call!("get(\"kit:limit:value\")", cache.get("kit:limit:value"));
        ensure!(
            got.as_deref() == Some(&b"before"[..]),
            "a refused set of {} bytes changed the value to {}",
            VALUE_LIMIT + 1,
            describe(got.as_ref())
        );
    }
    Ok(())
}

/// How long `entries_without_ttl_never_expire` waits: longer than every ttl the other
/// obligations use (1.5 s) plus half as much again, so a silent default ttl that would pass
/// them all (a backend's own default of 2 s, say) ends within it. The declared tolerance is
/// added on top: a driver may be that late to expire, so it is that late to be caught.
const WINDOW: Duration = Duration::from_secs(3);

pub(super) async fn entries_without_ttl_never_expire<T: CacheProvider>(
    i: &Instance<T>,
    s: &CacheSettings,
) -> Result<(), String> {
    let cache = &*i.driver;
    let started = tokio::time::Instant::now();
    // Each way the contract writes an entry with no expiry, checked together after one wait.
    let mut kept: Vec<(&str, Bytes, &str)> = Vec::new();
    call!(
        "set",
        cache.set("kit:forever:set", Bytes::from_static(b"set"))
    );
    kept.push((
        "kit:forever:set",
        Bytes::from_static(b"set"),
        "written by `set`",
    ));
    call!(
        "set of an empty value",
        cache.set("kit:forever:empty", Bytes::new())
    );
    kept.push((
        "kit:forever:empty",
        Bytes::new(),
        "an empty value written by `set`",
    ));
    if i.declares(TTL) {
        let key = "kit:forever:cleared";
        call!(
            "set_with_ttl",
            cache.set_with_ttl(key, Bytes::from_static(b"x"), Duration::from_millis(300))
        );
        call!(
            "set over an entry with a ttl",
            cache.set(key, Bytes::from_static(b"cleared"))
        );
        kept.push((
            key,
            Bytes::from_static(b"cleared"),
            "written by `set` over an entry with a 300 ms ttl",
        ));
        let key = "kit:forever:400d";
        call!(
            "set_with_ttl of 400 days",
            cache.set_with_ttl(
                key,
                Bytes::from_static(b"400d"),
                Duration::from_hours(400 * 24)
            )
        );
        kept.push((
            key,
            Bytes::from_static(b"400d"),
            "written with a 400-day ttl",
        ));
    }
    if i.declares(INCREMENT) {
        call!("increment", cache.increment("kit:forever:counter", 7));
        kept.push((
            "kit:forever:counter",
            Bytes::from_static(b"7"),
            "a counter `increment` made",
        ));
    }
    if i.declares(BULK) {
        call!(
            "set_many",
            cache.set_many(&[("kit:forever:many", Bytes::from_static(b"many"))])
        );
        kept.push((
            "kit:forever:many",
            Bytes::from_static(b"many"),
            "written by `set_many`",
        ));
    }
    tokio::time::sleep_until(started + WINDOW + s.late()).await;
    for (key, value, how) in &kept {
        let got = call!(format!("get({key:?})"), cache.get(key));
        // A counter's value is its decimal text for the built-in drivers; another driver may
        // keep it otherwise, so a counter only has to be there.
        let fine = if key.ends_with("counter") {
            got.is_some()
        } else {
            got.as_ref() == Some(value)
        };
        ensure!(
            fine,
            "an entry {how} answered {} {:?} later: an entry without a ttl never expires \
             (a default ttl applied without asking?)",
            describe(got.as_ref()),
            started.elapsed()
        );
    }
    if i.declares(INCREMENT) {
        let next = call!(
            "increment after the wait",
            cache.increment("kit:forever:counter", 1)
        );
        ensure!(
            next == 8,
            "a counter at 7 answered {next} to `increment` by 1 {:?} later: it was lost",
            started.elapsed()
        );
    }
    Ok(())
}
