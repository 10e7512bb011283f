//! Obligations on what an object holds: absence, exact bytes at every size, overwrites seen
//! whole, metadata and etags, and deletion.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ETAG, ObjectMeta, PutCondition};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

use super::ObjectStoreSettings;
use super::support::{LARGE_OBJECT_SIZE, expect_listing, get_exact, joined, list_all, round_trip};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

pub(super) async fn missing_object_is_not_found<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    for key in ["never/written", "never"] {
        expect_kind(
            &format!("get({key:?}) of a key never written"),
            ErrorKind::NotFound,
            &store.get(key).await,
        )?;
        expect_kind(
            &format!("head({key:?}) of a key never written"),
            ErrorKind::NotFound,
            &store.head(key).await,
        )?;
    }
    call!(
        "put(\"dir/object\")",
        store.put("dir/object", Bytes::from_static(b"x"))
    );
    let near = [
        ("dir", "the prefix of an object"),
        ("dir/obj", "a part of an object's name"),
        ("dir/object2", "an object's name extended"),
        ("dir/object/under", "under an object"),
    ];
    for (key, what) in near {
        expect_kind(
            &format!("get({key:?}) ({what}, not an object)"),
            ErrorKind::NotFound,
            &store.get(key).await,
        )?;
        expect_kind(
            &format!("head({key:?}) ({what}, not an object)"),
            ErrorKind::NotFound,
            &store.head(key).await,
        )?;
    }
    Ok(())
}

pub(super) async fn binary_objects_round_trip_exactly<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let every_byte: Vec<u8> = (0..=255).collect();
    round_trip(store, "binary/every-byte", &every_byte).await?;
    round_trip(store, "binary/nul", b"\0\0\xff\0").await?;
    round_trip(store, "binary/line-ends", b"a\r\nb\nc\r").await?;
    round_trip(store, "binary/not-utf8", b"\xc3\x28\xfe\xff").await
}

pub(super) async fn empty_object_round_trips<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    round_trip(store, "empty", b"").await?;
    let head = call!("head(\"empty\")", store.head("empty"));
    ensure!(
        head.size == 0,
        "head of an empty object reports size {}",
        head.size
    );
    let listing = expect_listing(store, "", None, &["empty"]).await?;
    ensure!(
        listing.objects[0].size == 0,
        "list reports size {} for an empty object",
        listing.objects[0].size
    );
    Ok(())
}

pub(super) async fn large_object_round_trips<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let data: Vec<u8> = (0..LARGE_OBJECT_SIZE).map(|n| (n % 251) as u8).collect();
    let size = data.len() as u64;
    let meta = call!(
        "put of a large object",
        store.put("large/object", Bytes::from(data.clone()))
    );
    ensure!(
        meta.size == size,
        "put of {size} bytes reports size {}",
        meta.size
    );
    get_exact(store, "large/object", &data).await?;
    let head = call!("head of a large object", store.head("large/object"));
    ensure!(
        head.size == size,
        "head of {size} bytes reports size {}",
        head.size
    );
    Ok(())
}

pub(super) async fn put_overwrites<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    round_trip(store, "overwrite/key", b"first version").await?;
    round_trip(store, "overwrite/key", b"the second, longer version").await?;
    // Shorter than what it replaces: nothing of the longer object may remain.
    round_trip(store, "overwrite/key", b"3").await?;
    let head = call!("head after overwrites", store.head("overwrite/key"));
    ensure!(
        head.size == 1,
        "head after overwriting with 1 byte reports size {}",
        head.size
    );
    let listing = expect_listing(store, "overwrite/", None, &["overwrite/key"]).await?;
    ensure!(
        listing.objects[0].size == 1,
        "list after overwriting with 1 byte reports size {}",
        listing.objects[0].size
    );
    Ok(())
}

/// The two versions `put_is_atomic_for_readers` alternates: all `a`s, or one byte more of `b`s.
const ATOMIC_VERSIONS: [(u8, usize); 2] = [(b'a', 256 * 1024), (b'b', 256 * 1024 + 1)];

fn whole_version(what: &str, got: &[u8]) -> Result<(), String> {
    if ATOMIC_VERSIONS
        .iter()
        .any(|&(byte, len)| got.len() == len && got.iter().all(|b| *b == byte))
    {
        return Ok(());
    }
    let (first, last) = (got.first().copied(), got.last().copied());
    Err(format!(
        "{what} answered {} bytes, the first {:?} and the last {:?} (versions are {} `a`s or \
         {} `b`s): a reader must see the old or the new object, whole, never a part",
        got.len(),
        first.map(char::from),
        last.map(char::from),
        ATOMIC_VERSIONS[0].1,
        ATOMIC_VERSIONS[1].1,
    ))
}

fn whole_size(what: &str, size: u64) -> Result<(), String> {
    ensure!(
        ATOMIC_VERSIONS.iter().any(|&(_, len)| size == len as u64),
        "{what} reports size {size}, the size of neither the old nor the new object"
    );
    Ok(())
}

/// What a `put` and the reads polled beside it answered.
fn during_put(
    put: InfraResult<ObjectMeta>,
    reads: [InfraResult<Bytes>; 2],
    head: InfraResult<ObjectMeta>,
) -> Result<(), String> {
    put.map_err(|err| format!("put failed: {err}"))?;
    for got in reads {
        let got = got.map_err(|err| format!("get during a put failed: {err}"))?;
        whole_version("get during a put", &got)?;
    }
    let head = head.map_err(|err| format!("head during a put failed: {err}"))?;
    whole_size("head during a put", head.size)
}

pub(super) async fn put_is_atomic_for_readers<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const ROUNDS: usize = 16;
    const KEY: &str = "atomic/object";
    let version = |n: usize| {
        let (byte, len) = ATOMIC_VERSIONS[n % 2];
        Bytes::from(vec![byte; len])
    };
    call!("put", i.driver.put(KEY, version(0)));
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut readers = Vec::new();
    for _ in 0..2 {
        let (store, writing) = (i.shared(), Arc::clone(&writing));
        readers.push(tokio::spawn(async move {
            // At least one read; then read for as long as the writer writes.
            loop {
                let got = call!("get (another thread)", store.get(KEY));
                whole_version("get (on another thread, during puts)", &got)?;
                let head = call!("head (another thread)", store.head(KEY));
                whole_size("head (on another thread, during puts)", head.size)?;
                if !writing.load(std::sync::atomic::Ordering::Acquire) {
                    return Ok::<(), String>(());
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    let store = &*i.driver;
    let mut outcome = Ok(());
    for round in 1..=ROUNDS {
        // Polled in order: the reads start while the put is under way.
        let (put, first, second, head) = futures_util::future::join4(
            store.put(KEY, version(round)),
            store.get(KEY),
            store.get(KEY),
            store.head(KEY),
        )
        .await;
        outcome = during_put(put, [first, second], head);
        if outcome.is_err() {
            break;
        }
    }
    writing.store(false, std::sync::atomic::Ordering::Release);
    for reader in readers {
        joined(reader).await?;
    }
    outcome?;
    get_exact(store, KEY, &version(ROUNDS)).await
}

/// `last_modified`, when reported, is the time of the `put` that wrote the object (between
/// `before` and `after` it), give or take `late`.
fn ensure_written_during(
    what: &str,
    reported: Option<SystemTime>,
    (before, after): (SystemTime, SystemTime),
    late: Duration,
) -> Result<(), String> {
    if let Some(at) = reported {
        ensure!(
            at + late >= before && at <= after + late,
            "{what} reports last_modified {at:?}, not the time of the put that wrote it (between \
             {before:?} and {after:?}) give or take the declared tolerance of {late:?}"
        );
    }
    Ok(())
}

pub(super) async fn metadata_reports_key_and_size<T: ObjectStoreProvider>(
    i: &Instance<T>,
    s: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let late = s.late();
    let objects: [(&str, u64); 2] = [("meta/object.bin", 1234), ("meta/small", 1)];
    let mut written = Vec::new();
    for (key, size) in objects {
        let data = Bytes::from(vec![7_u8; size as usize]);
        let before = SystemTime::now();
        let meta = call!(format!("put({key:?})"), store.put(key, data));
        let window = (before, SystemTime::now());
        written.push(window);
        ensure_written_during(&format!("put({key:?})"), meta.last_modified, window, late)?;
        ensure!(
            meta.key == key && meta.size == size,
            "put({key:?}) of {size} bytes reports key {:?} and size {}",
            meta.key,
            meta.size
        );
        let head = call!(format!("head({key:?})"), store.head(key));
        ensure!(
            head.key == key && head.size == size,
            "head({key:?}) of {size} bytes reports key {:?} and size {}",
            head.key,
            head.size
        );
        ensure_written_during(&format!("head({key:?})"), head.last_modified, window, late)?;
    }
    let listing = expect_listing(store, "meta/", None, &["meta/object.bin", "meta/small"]).await?;
    for ((object, (key, size)), window) in listing.objects.iter().zip(objects).zip(written) {
        ensure!(
            object.size == size,
            "list reports size {} for {key:?} of {size} bytes",
            object.size
        );
        ensure_written_during(
            &format!("list of {key:?}"),
            object.last_modified,
            window,
            late,
        )?;
    }
    Ok(())
}

pub(super) async fn etag_tracks_content<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "etag/object";
    let put = call!("put", store.put(key, Bytes::from_static(b"aaaa")));
    let head = call!("head", store.head(key));
    let listing = list_all(store, "etag/", None, None).await?;
    let listed = listing.objects.first().and_then(|o| o.etag.clone());
    if !i.declares(ETAG) {
        ensure!(
            put.etag.is_none() && head.etag.is_none() && listed.is_none(),
            "the feature `etag` is not declared, but put, head and list report etags {:?}, {:?} \
             and {listed:?}: declare it or leave etags out",
            put.etag,
            head.etag
        );
        return Ok(());
    }
    let Some(first) = put.etag.filter(|etag| !etag.is_empty()) else {
        return Err("the feature `etag` is declared, but put reports no etag".to_owned());
    };
    ensure!(
        head.etag.as_ref() == Some(&first),
        "put reports etag {first:?}, head {:?}",
        head.etag
    );
    ensure!(
        listed.as_ref() == Some(&first),
        "put reports etag {first:?}, list {listed:?}"
    );
    let again = call!("head", store.head(key));
    ensure!(
        again.etag.as_ref() == Some(&first),
        "head reports etag {first:?}, then {:?} with no write between",
        again.etag
    );
    // Same size, one byte different: an etag of the size or of a prefix does not see it.
    let changed = call!("put", store.put(key, Bytes::from_static(b"aaab")));
    let Some(second) = changed.etag else {
        return Err("the feature `etag` is declared, but put reports no etag".to_owned());
    };
    ensure!(
        second != first,
        "the etag stayed {first:?} when the content changed from \"aaaa\" to \"aaab\""
    );
    let head = call!("head", store.head(key));
    ensure!(
        head.etag.as_ref() == Some(&second),
        "put reports etag {second:?}, head {:?}",
        head.etag
    );
    Ok(())
}

pub(super) async fn rewriting_identical_content_reports_the_current_etag<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    if !i.declares(ETAG) {
        return Ok(()); // `etag_tracks_content` holds an undeclared `etag` to no etags.
    }
    let store = &*i.driver;
    let key = "same/object";
    let content = || Bytes::from_static(b"identical content");
    let first = call!("put", store.put(key, content())).etag;
    for round in 1..=2 {
        let rewritten = call!(
            format!("put of identical content (rewrite {round})"),
            store.put(key, content())
        );
        let Some(current) = rewritten.etag.filter(|etag| !etag.is_empty()) else {
            return Err("the feature `etag` is declared, but put reports no etag".to_owned());
        };
        // Keeping the etag (a content hash) and a new one (a generation) are both allowed; the
        // one `put` reports must be the object's.
        let head = call!("head", store.head(key));
        ensure!(
            head.etag.as_deref() == Some(current.as_str()),
            "rewrite {round} of identical content: put reports etag {current:?}, head {:?}",
            head.etag
        );
        let listing = list_all(store, "same/", None, None).await?;
        let listed = listing.objects.first().and_then(|o| o.etag.clone());
        ensure!(
            listed.as_deref() == Some(current.as_str()),
            "rewrite {round} of identical content: put reports etag {current:?}, list {listed:?}"
        );
        get_exact(store, key, &content()).await?;
    }
    if i.declares(CONDITIONAL_PUT) {
        let current = call!("head", store.head(key)).etag.unwrap_or_default();
        if first.as_deref() != Some(current.as_str()) {
            expect_kind(
                "put_if(IfMatch) with the etag identical content had before a rewrite gave it a \
                 new one",
                ErrorKind::Conflict,
                &store
                    .put_if(
                        key,
                        content(),
                        PutCondition::IfMatch(first.unwrap_or_default()),
                    )
                    .await,
            )?;
        }
        call!(
            "put_if(IfMatch) with the etag of the current (rewritten) object",
            store.put_if(
                key,
                Bytes::from_static(b"changed"),
                PutCondition::IfMatch(current)
            )
        );
        get_exact(store, key, b"changed").await?;
    }
    Ok(())
}

pub(super) async fn delete_removes_and_is_idempotent<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    for key in ["del/a", "del/ab", "del/a-b", "del/sub/a"] {
        call!(format!("put({key:?})"), store.put(key, Bytes::from(key)));
    }
    call!("delete(\"del/a\")", store.delete("del/a"));
    expect_kind(
        "get after delete",
        ErrorKind::NotFound,
        &store.get("del/a").await,
    )?;
    expect_kind(
        "head after delete",
        ErrorKind::NotFound,
        &store.head("del/a").await,
    )?;
    let rest = ["del/a-b", "del/ab", "del/sub/a"];
    expect_listing(store, "del/", None, &rest).await?;
    let again = [
        ("del/a", "a deleted key"),
        ("del/never", "a key never written"),
        ("del/sub", "a key that is only a prefix"),
        ("never/written/deep", "a key under no object"),
    ];
    for (key, what) in again {
        call!(
            format!("delete({key:?}) of {what} (delete is idempotent)"),
            store.delete(key)
        );
    }
    expect_listing(store, "del/", None, &rest).await?;
    for key in rest {
        get_exact(store, key, key.as_bytes()).await?;
    }
    // Nothing is under `del/sub/` any more: `del/sub` is free to be an object.
    call!("delete(\"del/sub/a\")", store.delete("del/sub/a"));
    expect_listing(store, "del/", None, &rest[..2]).await?;
    call!(
        "put(\"del/sub\") once every object under \"del/sub/\" is deleted",
        store.put("del/sub", Bytes::from_static(b"now an object"))
    );
    expect_listing(store, "del/", None, &["del/a-b", "del/ab", "del/sub"]).await?;
    get_exact(store, "del/sub", b"now an object").await
}

/// What `head` and `list` report for `key` after the write `written` (its metadata and the
/// window it ran in) of `size` bytes: that write's size and etag, and its time.
async fn expect_current_meta(
    store: &dyn sandloom_sdk_infra::objectstore::ObjectStore,
    key: &str,
    what: &str,
    written: &ObjectMeta,
    window: (SystemTime, SystemTime),
    late: Duration,
) -> Result<(), String> {
    let size = written.size;
    let head = call!(format!("head({key:?}) {what}"), store.head(key));
    ensure!(
        head.size == size && head.etag == written.etag,
        "head({key:?}) {what} reports size {} and etag {:?}, where the write reported size {size} \
         and etag {:?}",
        head.size,
        head.etag,
        written.etag
    );
    ensure_written_during(
        &format!("head({key:?}) {what}"),
        head.last_modified,
        window,
        late,
    )?;
    let prefix = key.rsplit_once('/').map_or("", |(dir, _)| dir);
    let listing = expect_listing(store, &format!("{prefix}/"), None, &[key]).await?;
    let listed = &listing.objects[0];
    ensure!(
        listed.size == size && listed.etag == written.etag,
        "list {what} reports size {} and etag {:?} for {key:?}, where the write reported size \
         {size} and etag {:?}",
        listed.size,
        listed.etag,
        written.etag
    );
    ensure_written_during(
        &format!("list of {key:?} {what}"),
        listed.last_modified,
        window,
        late,
    )
}

pub(super) async fn metadata_follows_the_latest_write<T: ObjectStoreProvider>(
    i: &Instance<T>,
    s: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let late = s.late();
    // Writes further apart than twice the tolerance: a time of the earlier one is off for the
    // later one.
    let apart = 2 * late + Duration::from_millis(50);
    let key = "latest/object";
    let write = |data: &'static [u8]| async move {
        let before = SystemTime::now();
        let meta = store.put(key, Bytes::from_static(data)).await;
        (meta, (before, SystemTime::now()))
    };
    let (first, window) = write(b"first").await;
    let first = first.map_err(|err| format!("put failed: {err}"))?;
    expect_current_meta(store, key, "after the first put", &first, window, late).await?;
    tokio::time::sleep(apart).await;
    let (second, window) = write(b"the second, longer version").await;
    let second = second.map_err(|err| format!("put failed: {err}"))?;
    expect_current_meta(store, key, "after an overwrite", &second, window, late).await?;
    call!("delete", store.delete(key));
    tokio::time::sleep(apart).await;
    let (third, window) = write(b"3").await;
    let third = third.map_err(|err| format!("put failed: {err}"))?;
    expect_current_meta(store, key, "after delete and put", &third, window, late).await?;
    if i.declares(CONDITIONAL_PUT) && i.declares(ETAG) {
        tokio::time::sleep(apart).await;
        let before = SystemTime::now();
        let fourth = call!(
            "put_if(IfMatch) of the current etag",
            store.put_if(
                key,
                Bytes::from_static(b"fourth"),
                PutCondition::IfMatch(third.etag.clone().unwrap_or_default())
            )
        );
        let window = (before, SystemTime::now());
        expect_current_meta(store, key, "after put_if", &fourth, window, late).await?;
    }
    Ok(())
}
