//! Objectstore obligations on the edges of its inputs and on what the contract promises will
//! not happen: objects at and past the size every driver holds, and objects whose bytes and
//! metadata stay as written however long nobody touches them.
//!
//! Each input of the contract, by partition, and the obligation that holds a driver to it:
//!
//! | input | empty | one | typical | at the limit | past the limit | look-alike forms |
//! |---|---|---|---|---|---|---|
//! | key | `invalid_keys_are_refused` | `objects_at_and_past_the_size_limit` (`k`) | every obligation | `one_key_rule_for_every_operation` (1,024 bytes, 255-byte segment) | the same (`InvalidInput` from every operation) | `near_identical_keys_are_independent` (case, spaces, trailing dot, NFC/NFD), `unusual_keys_round_trip` (percent- and form-encoding) |
//! | data | `empty_object_round_trips` | `objects_at_and_past_the_size_limit` | `binary_objects_round_trip_exactly`, `large_object_round_trips` (8 MiB + 13) | `objects_at_and_past_the_size_limit` (16 MiB) | the same (16 MiB + 1: whole or `InvalidInput`) | `binary_objects_round_trip_exactly` (NUL, CR LF, not UTF-8) |
//! | list prefix | every listing (`""`) | `list_filters_by_prefix` | the same | `one_key_rule_for_every_operation` (the longest key) | the same (`InvalidInput`) | `list_filters_by_prefix` (case, `a/b` vs `a/b/`), `near_identical_keys_are_independent` |
//! | list `limit` | `list_limit_of_zero_is_invalid_input` | `list_pages_follow_next_to_the_end` (1) | the same (7, 10, 25, 100) | `list_default_page_size_is_bounded` (none, 1,000) | the same (1,001 and 5,000: a page may be shorter, `next` follows to the end) | none apply |
//! | `start_after` | `list_pages_follow_next_to_the_end` (none) | `list_starts_strictly_after_start_after` | the same | — | beyond the last key: the same | a key that is absent: the same |
//! | condition of `put_if` | — | — | `put_if_absent_creates_only_once`, `put_if_match_compares_etags` | — | — | a near key's etag: `near_identical_keys_are_independent`; a stale etag: `put_if_match_compares_etags` |
//! | time left alone | — | — | — | — | — | `objects_and_their_metadata_stay_until_changed` (no expiry, `last_modified` stays the write's) |

use std::time::{Duration, SystemTime};

use sandloom_driverkit::objectstore::ObjectStoreProvider;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{ObjectMeta, ObjectStore};

use super::ObjectStoreSettings;
use super::support::{expect_listing, get_exact, round_trip};
use crate::harness::Instance;
use crate::{call, ensure};

/// The largest object every driver stores in one `put`, in bytes (the contract's limit).
const SIZE_LIMIT: usize = 16 * 1024 * 1024;

pub(super) async fn objects_at_and_past_the_size_limit<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    // A one-byte key and a one-byte object.
    round_trip(store, "k", b"1").await?;
    let at: Vec<u8> = (0..SIZE_LIMIT).map(|n| (n % 251) as u8).collect();
    let meta = call!(
        "put of 16 MiB",
        store.put("limit/at", Bytes::from(at.clone()))
    );
    ensure!(
        meta.size == SIZE_LIMIT as u64,
        "put of {SIZE_LIMIT} bytes reports size {}",
        meta.size
    );
    get_exact(store, "limit/at", &at).await?;
    drop(at);
    // One byte past it: stored whole, or refused with nothing written.
    let past: Vec<u8> = (0..=SIZE_LIMIT).map(|n| (n % 253) as u8).collect();
    match store.put("limit/past", Bytes::from(past.clone())).await {
        Ok(meta) => {
            ensure!(
                meta.size == past.len() as u64,
                "put of {} bytes reports size {}",
                past.len(),
                meta.size
            );
            get_exact(store, "limit/past", &past).await
        }
        Err(error) if error.kind() == ErrorKind::InvalidInput => {
            let head = store.head("limit/past").await;
            ensure!(
                head.as_ref()
                    .is_err_and(|e| e.kind() == ErrorKind::NotFound),
                "a refused put of {} bytes left head answering {head:?}: a refused put writes \
                 nothing",
                past.len()
            );
            Ok(())
        }
        Err(error) => Err(format!(
            "put of {} bytes failed with {}: past the limit a driver stores an object whole \
             or refuses it with InvalidInput: {error}",
            past.len(),
            error.kind()
        )),
    }
}

/// How long `objects_and_their_metadata_stay_until_changed` leaves its objects alone: longer
/// than every wait of the other obligations plus half again, so that a silent lifetime which
/// would pass them all (2 s, say) ends within it, and a `last_modified` taken from a read rather
/// than the write is off by more than the default tolerance. The declared tolerance is added on
/// top.
const WINDOW: Duration = Duration::from_secs(3);

/// `meta` is still what the write reported as `written`, and its `last_modified` (when
/// reported) the time of the write, between `before` and `after`, give or take `late`.
fn same_as_written(
    what: &str,
    meta: &ObjectMeta,
    written: &ObjectMeta,
    (before, after): (SystemTime, SystemTime),
    late: Duration,
) -> Result<(), String> {
    ensure!(
        meta.size == written.size && meta.etag == written.etag,
        "{what}, left alone, reports size {} and etag {:?}, where the put reported {} and {:?}",
        meta.size,
        meta.etag,
        written.size,
        written.etag
    );
    if let Some(at) = meta.last_modified {
        ensure!(
            at + late >= before && at <= after + late,
            "{what}, left alone for {:?}, reports last_modified {at:?}, not the time of the put \
             that wrote it (between {before:?} and {after:?}) give or take the declared \
             tolerance of {late:?}: it is the time of the write, not of a read",
            before.elapsed().unwrap_or_default()
        );
    }
    Ok(())
}

pub(super) async fn objects_and_their_metadata_stay_until_changed<T: ObjectStoreProvider>(
    i: &Instance<T>,
    s: &ObjectStoreSettings,
) -> Result<(), String> {
    let store: &dyn ObjectStore = &*i.driver;
    let late = s.late();
    let started = tokio::time::Instant::now();
    let objects: [(&str, &[u8]); 2] = [("stay/data", b"left alone"), ("stay/empty", b"")];
    let mut written = Vec::new();
    for (key, data) in objects {
        let before = SystemTime::now();
        let meta = call!(
            format!("put({key:?})"),
            store.put(key, Bytes::from_static(data))
        );
        written.push((key, data, meta, (before, SystemTime::now())));
    }
    tokio::time::sleep_until(started + WINDOW + late).await;
    for (key, data, meta, window) in &written {
        let got = store.get(key).await;
        ensure!(
            got.as_deref().ok() == Some(*data),
            "get({key:?}) {:?} after its put answered {got:?}: an object stays until it is \
             deleted or replaced (a lifetime applied without asking?)",
            started.elapsed()
        );
        let head = call!(format!("head({key:?})"), store.head(key));
        same_as_written(&format!("head({key:?})"), &head, meta, *window, late)?;
    }
    let keys: Vec<&str> = written.iter().map(|(key, ..)| *key).collect();
    let listing = expect_listing(store, "stay/", None, &keys).await?;
    for listed in &listing.objects {
        if let Some((key, _, meta, window)) = written.iter().find(|(key, ..)| *key == listed.key) {
            same_as_written(
                &format!("list's entry of {key:?}"),
                listed,
                meta,
                *window,
                late,
            )?;
        }
    }
    Ok(())
}
