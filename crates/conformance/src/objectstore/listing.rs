//! Obligations on `list`: prefixes, byte order, pages and `next` (announced only when more
//! follows), `start_after`, page size and its limits.

use futures_util::TryStreamExt as _;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{DEFAULT_PAGE_SIZE, ListOptions, ObjectStore};

use super::ObjectStoreSettings;
use super::support::{expect_listing, joined, list_all, options, same_keys};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

pub(super) async fn list_filters_by_prefix<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let all = [
        "a.txt",
        "a/a",
        "a/b-c",
        "a/b/1",
        "a/b/2/deep",
        "a/bc/1",
        "a2/1",
        "b",
    ];
    for key in all {
        call!(format!("put({key:?})"), store.put(key, Bytes::from(key)));
    }
    let cases: [(&str, &[&str]); 10] = [
        ("a/b/", &["a/b/1", "a/b/2/deep"]),
        ("a/b", &["a/b-c", "a/b/1", "a/b/2/deep", "a/bc/1"]),
        ("a/b/2/de", &["a/b/2/deep"]),
        ("a/", &["a/a", "a/b-c", "a/b/1", "a/b/2/deep", "a/bc/1"]),
        ("a", &all[..7]),
        ("", &all),
        ("a/bc/1", &["a/bc/1"]),
        ("a/bc/1/", &[]),
        ("A", &[]),
        ("c", &[]),
    ];
    for (prefix, expected) in cases {
        expect_listing(store, prefix, None, expected).await?;
    }
    // Prefix and pages together.
    expect_listing(store, "a/", Some(2), cases[3].1).await?;
    expect_listing(store, "a/b", Some(1), cases[1].1).await?;
    Ok(())
}

pub(super) async fn list_is_in_ascending_byte_order<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    // Written out of order; `list_all` holds the listing to strictly ascending byte order.
    let keys = [
        "order/z",
        "order/B",
        "order/a0",
        "order/ä",
        "order/a/b",
        "order/10",
        "order/a.b",
        "order/9",
        "order/a-b",
    ];
    for key in keys {
        call!(format!("put({key:?})"), store.put(key, Bytes::from(key)));
    }
    for limit in [None, Some(2), Some(4)] {
        expect_listing(store, "order/", limit, &keys).await?;
    }
    expect_listing(store, "", None, &keys).await?;
    Ok(())
}

pub(super) async fn list_pages_follow_next_to_the_end<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let keys: Vec<String> = (0..25).map(|n| format!("page/{n:02}")).collect();
    let decoys = ["pag/x", "pagf/x", "pagd"];
    for key in keys.iter().map(String::as_str).chain(decoys) {
        call!(
            format!("put({key:?})"),
            store.put(key, Bytes::from(key.to_owned()))
        );
    }
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    for limit in [1, 7, 10, 25, 100] {
        let listing = expect_listing(store, "page/", Some(limit), &expected).await?;
        // One spare page, for a store that only learns at the end that nothing follows.
        let most = expected.len().div_ceil(limit) + 1;
        ensure!(
            listing.pages <= most,
            "list(\"page/\", limit {limit}) took {} pages for {} objects",
            listing.pages,
            expected.len()
        );
    }
    let mut everything = expected.clone();
    everything.extend(decoys);
    expect_listing(store, "", Some(10), &everything).await?;
    Ok(())
}

pub(super) async fn list_starts_strictly_after_start_after<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let keys = ["after/1", "after/2", "after/3", "after/4", "after/5"];
    for key in keys.iter().chain(&["afte", "aftermath/x", "b"]) {
        call!(format!("put({key:?})"), store.put(key, Bytes::from(*key)));
    }
    let cases: [(&str, Option<usize>, &[&str]); 9] = [
        ("after/2", None, &keys[2..]),
        ("after/2x", None, &keys[2..]),
        ("after/", None, &keys),
        ("afte", None, &keys),
        ("", None, &keys),
        ("after/5", None, &[]),
        ("after/9", None, &[]),
        ("b", None, &[]),
        ("after/1", Some(2), &keys[1..]),
    ];
    for (after, limit, expected) in cases {
        let listing = list_all(store, "after/", Some(after), limit).await?;
        let what = format!("list(\"after/\", start_after {after:?})");
        same_keys(&what, &listing, expected)?;
    }
    Ok(())
}

pub(super) async fn list_default_page_size_is_bounded<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let count = DEFAULT_PAGE_SIZE + 1;
    let keys: Vec<String> = (0..count).map(|n| format!("bulk/{n:05}")).collect();
    futures_util::stream::iter(keys.iter().map(Ok))
        .try_for_each_concurrent(32, |key| {
            let store = i.shared();
            async move {
                store
                    .put(key, Bytes::from_static(b"b"))
                    .await
                    .map(drop)
                    .map_err(|err| format!("put({key:?}) failed: {err}"))
            }
        })
        .await?;
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "bulk/", None, &expected).await?;
    expect_listing(&*i.driver, "", None, &expected).await?;
    // Limits at and past the default page size: a page may hold fewer than asked (a store may
    // cap its pages, as S3 does at 1,000), but `next` leads on to every object.
    for limit in [
        DEFAULT_PAGE_SIZE,
        DEFAULT_PAGE_SIZE + 1,
        5 * DEFAULT_PAGE_SIZE,
    ] {
        expect_listing(&*i.driver, "bulk/", Some(limit), &expected).await?;
    }
    Ok(())
}

pub(super) async fn list_limit_of_zero_is_invalid_input<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let zero = || ListOptions::default().with_limit(0);
    expect_kind(
        "list(\"\", limit 0) of an empty store",
        ErrorKind::InvalidInput,
        &store.list("", zero()).await,
    )?;
    call!("put", store.put("zero/a", Bytes::from_static(b"a")));
    for prefix in ["", "zero/"] {
        expect_kind(
            &format!("list({prefix:?}, limit 0)"),
            ErrorKind::InvalidInput,
            &store.list(prefix, zero()).await,
        )?;
        expect_kind(
            &format!("list({prefix:?}, start_after \"zero/0\", limit 0)"),
            ErrorKind::InvalidInput,
            &store.list(prefix, zero().after("zero/0")).await,
        )?;
    }
    expect_listing(store, "", Some(1), &["zero/a"]).await?;
    Ok(())
}

/// Whether a listing of `prefix` with `limit` after `start_after` takes exactly `pages` pages:
/// the last page that holds objects must not announce more when nothing follows.
async fn expect_pages(
    store: &dyn ObjectStore,
    prefix: &str,
    start_after: Option<&str>,
    limit: usize,
    expected: &[&str],
) -> Result<(), String> {
    let listing = list_all(store, prefix, start_after, Some(limit)).await?;
    let what = format!("list({prefix:?}, start_after {start_after:?}, limit {limit})");
    same_keys(&what, &listing, expected)?;
    let pages = expected.len().div_ceil(limit).max(1);
    ensure!(
        listing.pages == pages,
        "{what}: {} objects took {} pages where {pages} hold them: a page announced `next` \
         though no object followed it",
        expected.len(),
        listing.pages
    );
    Ok(())
}

pub(super) async fn list_next_only_when_more_follows<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let keys = ["more/1", "more/2", "more/3", "more/4", "more/5", "more/6"];
    // Keys beyond the prefix in byte order: they follow in the store, not in the listing.
    for key in keys.iter().chain(&["more0", "more1/x", "morf"]) {
        call!("put", store.put(key, Bytes::from_static(b"m")));
    }
    for limit in [6, 7, 3, 2, 1] {
        expect_pages(store, "more/", None, limit, &keys).await?;
    }
    expect_pages(store, "more/", Some("more/3"), 3, &keys[3..]).await?;
    expect_pages(store, "more/", Some("more/6"), 3, &[]).await?;
    expect_pages(store, "", Some("more1/x"), 1, &["morf"]).await?;
    Ok(())
}

/// One `list` call: it must answer an empty page that announces nothing more.
async fn expect_one_empty_page(
    store: &dyn ObjectStore,
    prefix: &str,
    start_after: Option<&str>,
    limit: Option<usize>,
    why: &str,
) -> Result<(), String> {
    let what = format!("list({prefix:?}, start_after {start_after:?}, limit {limit:?}) {why}");
    let page = call!(
        what.clone(),
        store.list(prefix, super::support::options(start_after, limit))
    );
    let keys: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    ensure!(
        keys.is_empty() && page.next.is_none(),
        "{what} answered {keys:?} with next {:?}: it must be one empty page with next None",
        page.next
    );
    Ok(())
}

pub(super) async fn emptied_prefix_lists_one_empty_page<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    expect_one_empty_page(store, "", None, None, "of an empty store").await?;
    expect_one_empty_page(store, "gone/", None, Some(1), "of an empty store").await?;
    let doomed = ["gone/1", "gone/2", "gone/3", "gone/deep/4", "gone/deep/5"];
    let kept = ["gone0", "gonf/x", "keep/x"];
    for key in doomed.iter().chain(&kept) {
        call!(format!("put({key:?})"), store.put(key, Bytes::from(*key)));
    }
    // Deleted out of order, the deepest last.
    for key in ["gone/2", "gone/deep/5", "gone/1", "gone/3", "gone/deep/4"] {
        call!(format!("delete({key:?})"), store.delete(key));
    }
    let why = "once every object under it is deleted";
    for limit in [None, Some(1), Some(2), Some(10)] {
        expect_one_empty_page(store, "gone/", None, limit, why).await?;
    }
    for (prefix, after) in [
        ("gone/", "gone/"),
        ("gone/", "gone/1"),
        ("gone/deep/", "gone/"),
    ] {
        expect_one_empty_page(store, prefix, Some(after), Some(2), why).await?;
    }
    expect_listing(store, "gone", Some(1), &["gone0"]).await?;
    expect_listing(store, "", Some(2), &kept).await?;
    for key in kept {
        call!(format!("delete({key:?})"), store.delete(key));
    }
    for limit in [None, Some(1)] {
        expect_one_empty_page(store, "", None, limit, "once every object is deleted").await?;
    }
    Ok(())
}

/// Tasks listing and deleting at once in `listing_while_deleting_never_fails`, and its page size.
const LISTERS: usize = 4;
const DELETERS: usize = 4;
const LIMIT: usize = 7;

/// Listings that page through objects while other tasks delete some of them, whole prefixes
/// included: a listing never fails for an object that vanished between reading the names and
/// reporting them, never loops, and lists every object no one deleted, once.
pub(super) async fn listing_while_deleting_never_fails<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const KEYS: usize = 96;
    // Twelve prefixes of eight keys: three kept, five deleted, one of those alone in a prefix of
    // its own that vanishes with it.
    let key = |n: usize| match n % 8 {
        7 => format!("walk/{:02}/gone/{n:02}", n / 8),
        _ => format!("walk/{:02}/{n:02}", n / 8),
    };
    let keys: Vec<String> = (0..KEYS).map(key).collect();
    let kept: Vec<String> = (0..KEYS).filter(|n| n % 8 < 3).map(key).collect();
    let doomed: Vec<(usize, String)> = (0..KEYS)
        .filter(|n| n % 8 >= 3)
        .map(|n| (n, key(n)))
        .collect();
    for key in &keys {
        call!(
            format!("put({key:?})"),
            i.driver.put(key, Bytes::from(key.clone()))
        );
    }

    // Three rounds, the deleted objects written again before each: a listing meets a vanishing
    // object by chance, and three rounds make missing it every time vanishingly unlikely.
    for round in 0..3 {
        if round > 0 {
            for (_, key) in &doomed {
                call!(
                    format!("put({key:?}) again"),
                    i.driver.put(key, Bytes::from(key.clone()))
                );
            }
        }
        list_while_deleting(i, (&keys, &kept), &doomed).await?;
    }
    let expected: Vec<&str> = kept.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "walk/", Some(LIMIT), &expected).await?;
    Ok(())
}

/// One round of `listing_while_deleting_never_fails`: [`LISTERS`] tasks list `walk/` again and
/// again while [`DELETERS`] tasks delete the `doomed` objects.
async fn list_while_deleting<T: ObjectStoreProvider>(
    i: &Instance<T>,
    (keys, kept): (&[String], &[String]),
    doomed: &[(usize, String)],
) -> Result<(), String> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let done = Arc::new(AtomicBool::new(false));
    let mut listers = Vec::new();
    for _ in 0..LISTERS {
        let (store, done, keys, kept) = (i.shared(), done.clone(), keys.to_vec(), kept.to_vec());
        listers.push(tokio::spawn(async move {
            // Until the deletes are over, then once more; a bound in case they never end.
            for _ in 0..1_000 {
                let last = done.load(Ordering::Acquire);
                let listed = list_during_deletes(&*store, LIMIT, &keys).await?;
                let missing: Vec<&String> =
                    kept.iter().filter(|key| !listed.contains(key)).collect();
                ensure!(
                    missing.is_empty(),
                    "a listing while other objects were deleted missed {missing:?}, which no one \
                     deleted"
                );
                if last {
                    break;
                }
            }
            Ok::<(), String>(())
        }));
    }
    let mut deleters = Vec::new();
    for task in 0..DELETERS {
        let store = i.shared();
        let mine: Vec<String> = doomed
            .iter()
            .filter(|(n, _)| n % DELETERS == task)
            .map(|(_, key)| key.clone())
            .collect();
        deleters.push(tokio::spawn(async move {
            for key in mine {
                store.delete(&key).await.map_err(|err| {
                    format!("delete({key:?}) failed while other tasks listed: {err}")
                })?;
                // Spread out, so that many listings overlap the deletes, however fast both are.
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            Ok::<(), String>(())
        }));
    }
    // Whatever the deletes answer, the listers are told they are over, so none spins on.
    let mut outcome = Ok(());
    for task in deleters {
        outcome = outcome.and(joined(task).await);
    }
    done.store(true, Ordering::Release);
    for task in listers {
        outcome = outcome.and(joined(task).await);
    }
    outcome
}

/// One listing of `walk/` followed to its end while objects are deleted: the keys it listed.
/// Pages may come out short or even empty (their objects vanished after being counted), but
/// `next` must move forward, so the listing ends.
async fn list_during_deletes(
    store: &dyn ObjectStore,
    limit: usize,
    written: &[String],
) -> Result<Vec<String>, String> {
    let mut listed: Vec<String> = Vec::new();
    let mut after: Option<String> = None;
    for page in 1..=written.len() + 1 {
        let what =
            format!("list(\"walk/\", limit {limit}), page {page}, while objects were deleted");
        // A store that answers without yielding would starve the deleting tasks otherwise.
        tokio::task::yield_now().await;
        let found = call!(
            what,
            store.list("walk/", options(after.as_deref(), Some(limit)))
        );
        ensure!(
            found.objects.len() <= limit,
            "{what}: {} objects, more than the limit",
            found.objects.len()
        );
        for object in found.objects {
            ensure!(
                written.contains(&object.key),
                "{what}: lists {:?}, which was never written",
                object.key
            );
            ensure!(
                listed.last().is_none_or(|last| object.key > *last)
                    && after.as_ref().is_none_or(|after| object.key > *after),
                "{what}: lists {:?} out of order or twice",
                object.key
            );
            ensure!(
                object.size == object.key.len() as u64,
                "{what}: lists {:?} with size {}, not the {} bytes written",
                object.key,
                object.size,
                object.key.len()
            );
            listed.push(object.key);
        }
        match found.next {
            None => return Ok(listed),
            Some(next) => {
                ensure!(
                    after.as_ref().is_none_or(|after| next > *after),
                    "{what}: announces more after {next:?}, which does not move past {after:?}"
                );
                after = Some(next);
            }
        }
    }
    Err(format!(
        "a listing of \"walk/\" with limit {limit} still announced more after {} pages, while \
         only {} objects were ever written",
        written.len() + 1,
        written.len()
    ))
}
