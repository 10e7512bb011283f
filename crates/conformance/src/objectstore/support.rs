//! Helpers the objectstore obligations share: exact byte comparison, and listings
//! followed to their end and held to the general listing rules.

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{DEFAULT_PAGE_SIZE, ListOptions, ObjectMeta, ObjectStore};

use crate::{call, ensure};

/// Size of the large object: 8 MiB and a few bytes, so no buffer or chunk size divides it.
pub(super) const LARGE_OBJECT_SIZE: usize = 8 * 1024 * 1024 + 13;

/// A listing announcing more after this many pages is taken to loop.
pub(super) const MAX_PAGES: usize = 5000;

pub(super) fn describe(bytes: &[u8]) -> String {
    if bytes.len() <= 32 {
        format!("{:?}", Bytes::copy_from_slice(bytes))
    } else {
        format!("<{} bytes>", bytes.len())
    }
}

/// Fail unless `got` is `expected`, saying where they differ.
pub(super) fn same_bytes(what: &str, got: &[u8], expected: &[u8]) -> Result<(), String> {
    if got == expected {
        return Ok(());
    }
    let first = got
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| got.len().min(expected.len()));
    Err(format!(
        "{what} answered {} where {} was written (first difference at byte {first})",
        describe(got),
        describe(expected)
    ))
}

pub(super) async fn get_exact(
    store: &dyn ObjectStore,
    key: &str,
    expected: &[u8],
) -> Result<(), String> {
    let got = call!(format!("get({key:?})"), store.get(key));
    same_bytes(&format!("get({key:?})"), &got, expected)
}

/// `put` then `get` the same bytes.
pub(super) async fn round_trip(
    store: &dyn ObjectStore,
    key: &str,
    data: &[u8],
) -> Result<(), String> {
    call!(
        format!("put({key:?}, {})", describe(data)),
        store.put(key, Bytes::copy_from_slice(data))
    );
    get_exact(store, key, data).await
}

pub(super) fn options(start_after: Option<&str>, limit: Option<usize>) -> ListOptions {
    let mut options = ListOptions::default();
    if let Some(limit) = limit {
        options = options.with_limit(limit);
    }
    if let Some(after) = start_after {
        options = options.after(after);
    }
    options
}

/// A whole listing, and how many pages it took.
pub(super) struct Listing {
    pub(super) objects: Vec<ObjectMeta>,
    pub(super) pages: usize,
}

impl Listing {
    fn keys(&self) -> Vec<&str> {
        self.objects
            .iter()
            .map(|object| object.key.as_str())
            .collect()
    }
}

/// Every object with `prefix` after `start_after`, following `next` until it is `None`, holding
/// each page to the listing rules: at most `limit` objects (`DEFAULT_PAGE_SIZE` without one),
/// keys with the prefix, strictly after the `start_after` asked for and strictly ascending
/// across all pages (so each listed once), and a page that announces more is not empty.
pub(super) async fn list_all(
    store: &dyn ObjectStore,
    prefix: &str,
    start_after: Option<&str>,
    limit: Option<usize>,
) -> Result<Listing, String> {
    let what = match (start_after, limit) {
        (None, None) => format!("list({prefix:?})"),
        (None, Some(limit)) => format!("list({prefix:?}, limit {limit})"),
        (Some(after), None) => format!("list({prefix:?}, start_after {after:?})"),
        (Some(after), Some(limit)) => {
            format!("list({prefix:?}, start_after {after:?}, limit {limit})")
        }
    };
    let page_size = limit.unwrap_or(DEFAULT_PAGE_SIZE);
    let mut objects: Vec<ObjectMeta> = Vec::new();
    let mut after = start_after.map(str::to_owned);
    let mut pages = 0;
    loop {
        pages += 1;
        ensure!(
            pages <= MAX_PAGES,
            "{what} still announced more after {MAX_PAGES} pages"
        );
        let page = call!(
            format!("{what}, page {pages}"),
            store.list(prefix, options(after.as_deref(), limit))
        );
        ensure!(
            page.objects.len() <= page_size,
            "{what}: page {pages} holds {} objects, more than the page size {page_size}",
            page.objects.len()
        );
        let page_len = page.objects.len();
        for object in page.objects {
            ensure!(
                object.key.starts_with(prefix),
                "{what}: page {pages} lists {:?}, which does not start with the prefix",
                object.key
            );
            if let Some(after) = &after {
                ensure!(
                    object.key.as_str() > after.as_str(),
                    "{what}: page {pages}, asked for keys after {after:?}, lists {:?}",
                    object.key
                );
            }
            if let Some(previous) = objects.last() {
                ensure!(
                    object.key > previous.key,
                    "{what}: page {pages} lists {:?} after {:?}: keys must come in ascending \
                     byte order, each once",
                    object.key,
                    previous.key
                );
            }
            objects.push(object);
        }
        match page.next {
            None => return Ok(Listing { objects, pages }),
            Some(next) => {
                ensure!(
                    page_len > 0,
                    "{what}: page {pages} is empty but announces more after {next:?}"
                );
                after = Some(next);
            }
        }
    }
}

/// Up to a dozen items, then how many more.
pub(super) fn summarize<S: AsRef<str>>(items: &[S]) -> String {
    let shown: Vec<&str> = items.iter().take(12).map(AsRef::as_ref).collect();
    if items.len() > shown.len() {
        format!("{shown:?} and {} more", items.len() - shown.len())
    } else {
        format!("{shown:?}")
    }
}

/// Fail unless `listing` holds exactly `expected` (in any order given here; the listing must be
/// in byte order, which `list_all` checked).
pub(super) fn same_keys(what: &str, listing: &Listing, expected: &[&str]) -> Result<(), String> {
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    let keys = listing.keys();
    if keys == expected {
        return Ok(());
    }
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|key| !keys.contains(key))
        .collect();
    let unexpected: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|key| !expected.contains(key))
        .collect();
    Err(format!(
        "{what} listed {} keys where {} were expected; missing: {}; not expected: {}; listed: {}",
        keys.len(),
        expected.len(),
        summarize(&missing),
        summarize(&unexpected),
        summarize(&keys)
    ))
}

pub(super) async fn expect_listing(
    store: &dyn ObjectStore,
    prefix: &str,
    limit: Option<usize>,
    expected: &[&str],
) -> Result<Listing, String> {
    let listing = list_all(store, prefix, None, limit).await?;
    let what = match limit {
        None => format!("list({prefix:?})"),
        Some(limit) => format!("list({prefix:?}, limit {limit})"),
    };
    same_keys(&what, &listing, expected)?;
    Ok(listing)
}

/// A spawned task's outcome, its panic a failure.
pub(super) async fn joined<R>(
    task: tokio::task::JoinHandle<Result<R, String>>,
) -> Result<R, String> {
    task.await
        .map_err(|err| format!("a task panicked or was cancelled: {err}"))?
}
