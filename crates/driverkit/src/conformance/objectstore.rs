//! The `objectstore` kit: [`ObjectStoreConformance`].
//!
//! Every obligation works on a fresh instance and expects to see only its own objects: it lists
//! with the prefix `""` and counts what it finds. A driver on a shared server must therefore
//! isolate each instance, giving it a fresh bucket or key prefix derived from
//! [`KitRequest::namespace`] (see the example on [`ObjectStoreConformance`]). Keys carry no
//! special prefix of the kit's own.
//!
//! What the contract leaves open is not checked: whether a `limit` of zero is refused (the
//! embedded stores answer `InvalidInput`), whether writing identical content again keeps the
//! etag (content-hash etags do, generation etags do not), `last_modified`, and whether a key
//! may be both an object and the prefix of others (`a` and `a/b`; file-backed stores refuse it,
//! so no obligation writes such a pair).
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`objectstore_conformance!`](crate::objectstore_conformance)
//! instead.
//!
//! ```
//! use sandloom_driverkit::conformance::objectstore::ObjectStoreConformance;
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
//! # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct VoidStore;
//! # #[async_trait]
//! # impl ObjectStore for VoidStore {
//! #     async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
//! #         validate_key(key)?;
//! #         Ok(ObjectMeta::new(key, data.len() as u64))
//! #     }
//! #     async fn get(&self, key: &str) -> InfraResult<Bytes> {
//! #         validate_key(key)?;
//! #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
//! #     }
//! #     async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
//! #         validate_key(key)?;
//! #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
//! #     }
//! #     async fn delete(&self, key: &str) -> InfraResult<()> { validate_key(key) }
//! #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { Ok(ListPage::default()) }
//! # }
//! # impl Driver for VoidStore {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(VoidStore) }
//! # }
//! # impl ObjectStoreProvider for VoidStore {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//!
//! // `VoidStore` (hidden) checks keys, accepts every `put` and stores nothing.
//! let kit = ObjectStoreConformance::<VoidStore>::new(|_request| NoOptions {});
//! assert!(kit.check("missing_object_is_not_found").is_ok());
//! let failure = kit.check("binary_objects_round_trip_exactly").unwrap_err();
//! eprintln!("{failure}"); // obligation `…` failed: what went wrong
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::TryStreamExt as _;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{
    CONDITIONAL_PUT, DEFAULT_PAGE_SIZE, ETAG, ListOptions, ObjectMeta, ObjectStore, PutCondition,
};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

use super::harness::{Instance, Kit};
use super::{KitRequest, call, ensure, expect_kind, expect_unsupported};
use crate::objectstore::ObjectStoreProvider;

mod key_rule;

use key_rule::one_key_rule_for_every_operation;

/// The conformance kit of the `objectstore` contract. See [`OBLIGATIONS`] for what it holds a
/// driver to; run it with [`objectstore_conformance!`](crate::objectstore_conformance).
///
/// Each obligation expects an empty store of its own. A driver whose instances share a server
/// (a bucket, a database) must derive a fresh bucket or key prefix from
/// [`KitRequest::namespace`], unique per obligation and process:
///
/// ```
/// # use sandloom_driverkit::conformance::objectstore::ObjectStoreConformance;
/// # use sandloom_driverkit::objectstore::ObjectStoreProvider;
/// // `with_prefix` builds the driver's options for a test server, all keys under a prefix.
/// fn kit<T: ObjectStoreProvider>(
///     with_prefix: impl Fn(String) -> T::Options + Send + Sync + 'static,
/// ) -> ObjectStoreConformance<T> {
///     ObjectStoreConformance::<T>::new(move |request| {
///         with_prefix(format!("conformance/{}/", request.namespace))
///     })
/// }
/// # fn run<T: ObjectStoreProvider>(kit: ObjectStoreConformance<T>) {
/// for failure in kit.check_all() {
///     eprintln!("{failure}");
/// }
/// # }
/// ```
///
/// A file-backed driver takes its root from [`KitRequest::scratch_dir`] instead:
/// `|request| FsObjectStoreOptions { root: request.scratch_dir.join("root") }`.
pub type ObjectStoreConformance<T> = Kit<T, ObjectStoreSettings>;

/// What the `objectstore` kit's obligations are given besides the instance: nothing yet.
///
/// ```
/// use sandloom_driverkit::conformance::objectstore::ObjectStoreSettings;
/// // An obligation receives `&ObjectStoreSettings`; a kit with tolerances to declare would keep them here.
/// let _settings = ObjectStoreSettings::default();
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ObjectStoreSettings {}

impl<T: ObjectStoreProvider> Kit<T, ObjectStoreSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_driverkit::conformance::objectstore::ObjectStoreConformance;
    /// use sandloom_driverkit::conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
    /// # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct VoidStore;
    /// # #[async_trait]
    /// # impl ObjectStore for VoidStore {
    /// #     async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
    /// #         validate_key(key)?;
    /// #         Ok(ObjectMeta::new(key, data.len() as u64))
    /// #     }
    /// #     async fn get(&self, key: &str) -> InfraResult<Bytes> {
    /// #         validate_key(key)?;
    /// #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
    /// #     }
    /// #     async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
    /// #         validate_key(key)?;
    /// #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
    /// #     }
    /// #     async fn delete(&self, key: &str) -> InfraResult<()> { validate_key(key) }
    /// #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { Ok(ListPage::default()) }
    /// # }
    /// # impl Driver for VoidStore {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(VoidStore) }
    /// # }
    /// # impl ObjectStoreProvider for VoidStore {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    ///
    /// let kit = ObjectStoreConformance::<VoidStore>::new(|request: &KitRequest| {
    ///     // Called once per obligation, for a fresh instance with its own scratch space.
    ///     assert!(request.scratch_dir.is_dir());
    ///     assert!(!request.namespace.is_empty());
    ///     NoOptions {}
    /// });
    /// assert!(kit.check("missing_object_is_not_found").is_ok());
    /// ```
    pub fn new(options: impl Fn(&KitRequest) -> T::Options + Send + Sync + 'static) -> Self {
        Kit::build::<crate::objectstore::ObjectStoreCapability>(
            obligations::<T>(),
            options,
            ObjectStoreSettings::default(),
        )
    }
}

crate::define_kit! {
    /// Run the whole `objectstore` kit from a driver crate's tests: one `#[test]` per obligation,
    /// in a module `objectstore_conformance`, or in a module of the name given before a colon (to
    /// run the kit for several drivers or configurations in one file).
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] turn on the
    /// // `conformance` feature of sandloom-driverkit.
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
    /// # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
    /// # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct VoidStore;
    /// # #[async_trait]
    /// # impl ObjectStore for VoidStore {
    /// #     async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
    /// #         validate_key(key)?;
    /// #         Ok(ObjectMeta::new(key, data.len() as u64))
    /// #     }
    /// #     async fn get(&self, key: &str) -> InfraResult<Bytes> {
    /// #         validate_key(key)?;
    /// #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
    /// #     }
    /// #     async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
    /// #         validate_key(key)?;
    /// #         Err(InfraError::not_found("objectstore", format!("no object {key:?}")))
    /// #     }
    /// #     async fn delete(&self, key: &str) -> InfraResult<()> { validate_key(key) }
    /// #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { Ok(ListPage::default()) }
    /// # }
    /// # impl Driver for VoidStore {
    /// #     type Options = sandloom_driverkit::NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(VoidStore) }
    /// # }
    /// # impl ObjectStoreProvider for VoidStore {
    /// #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
    /// # }
    /// # pub type MyStore = VoidStore;
    ///
    /// sandloom_driverkit::objectstore_conformance!(MyStore, |_request| NoOptions {});
    /// // Again, with its tests in a module `second_run` instead of `objectstore_conformance`:
    /// sandloom_driverkit::objectstore_conformance!(second_run: MyStore, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro objectstore_conformance;
    kit crate::conformance::objectstore::ObjectStoreConformance::new;
    provider ObjectStoreProvider;
    settings ObjectStoreSettings;
    /// Every obligation of the object store contract, in the order the kit runs them.
    ///
    /// - `missing_object_is_not_found`: `get` and `head` of a key never written, of a key that is
    ///   only the prefix of an object, of a key under an object and of a key that extends an
    ///   object's name answer `NotFound`.
    /// - `binary_objects_round_trip_exactly`: every byte value 0..=255, NULs, `\r\n` and bytes that
    ///   are not UTF-8 come back exactly as written.
    /// - `empty_object_round_trips`: an empty object is stored (not "missing"): `get` answers no
    ///   bytes, `head` and `list` a size of 0.
    /// - `large_object_round_trips`: an object of 8 MiB and 13 bytes comes back intact, with its
    ///   size in `put`'s and `head`'s metadata.
    /// - `put_overwrites`: a second `put` replaces the object, a shorter third leaves no tail of the
    ///   longer one, and the key is listed once with the last size.
    /// - `put_is_atomic_for_readers`: while an object is overwritten again and again, readers in the
    ///   same task and on other threads see the old or the new object, whole, never a part.
    /// - `metadata_reports_key_and_size`: the metadata of `put`, `head` and `list` name the key and
    ///   its exact size.
    /// - `etag_tracks_content`: declared `etag`: `put`, `head` and `list` report the same non-empty
    ///   etag, `head` reports it again unchanged, and a new content of the same size gets a new
    ///   etag; undeclared: no etag anywhere.
    /// - `unusual_keys_round_trip`: keys with spaces, non-ASCII letters (NFC and NFD forms distinct),
    ///   URL-special characters, dotted names that are not `.`/`..` segments, case-only differences,
    ///   more than ten segments and 800+ bytes are distinct, exact, and listed as written.
    /// - `invalid_keys_are_refused`: empty, absolute, `.`/`..`-segment, empty-segment,
    ///   trailing-slash, backslash and NUL keys answer `InvalidInput` from `put`, `get`, `head`,
    ///   `delete` (and `put_if` when declared); a list prefix with a NUL too; afterwards the store
    ///   holds only the object written before, unchanged, and nothing escaped the scratch directory.
    /// - `one_key_rule_for_every_operation`: keys `validate_key` refuses for their length alone (a
    ///   3,000-segment key, a 256-byte segment, 1,025+ bytes) answer `InvalidInput` from `put`,
    ///   `get`, `head`, `delete` (and `put_if` when declared); keys at the edge of what backends
    ///   hold (the longest key and segment, control characters, reserved names) are refused by
    ///   every operation or by none, and given back exactly when accepted; list prefixes that
    ///   start no valid key (`/`, `../`, `a//`, `a/./`, a backslash, too long, …) answer
    ///   `InvalidInput`, while `.`, `..`, `dots/..` and other prefixes that are no key but start
    ///   one list exactly the keys that start with them.
    /// - `delete_removes_and_is_idempotent`: `delete` removes the object (`get`/`head` answer
    ///   `NotFound`, `list` omits it) and nothing else (not keys it is a prefix of); deleting it
    ///   again, a key never written, or a key that is only a prefix, succeeds; once every object
    ///   under `p/` is deleted, `p` can be an object.
    /// - `list_filters_by_prefix`: a listing holds exactly the keys that start with the prefix, as
    ///   strings: `a/b/` excludes `a/bc/1`, `a/b-c` and `a2/1`, `a/b` includes them, `a/b/2/de`
    ///   reaches into a deeper segment, and prefixes are case-sensitive.
    /// - `list_is_in_ascending_byte_order`: keys come in ascending byte order (`-` < `.` < `/` < `0`
    ///   < `9` < `B` < `a` < `z` < `ä`), within and across pages.
    /// - `list_pages_follow_next_to_the_end`: 25 objects listed with limits 1, 7, 10, 25 and 100:
    ///   no page exceeds its limit, a page announcing more is not empty, and following `next` until
    ///   `None` yields every object once.
    /// - `list_starts_strictly_after_start_after`: `start_after` is any key, present or not: only
    ///   keys strictly greater are listed (none when it is beyond the last, all when it precedes
    ///   the prefix).
    /// - `list_default_page_size_is_bounded`: with 1001 objects and no limit, no page exceeds
    ///   `DEFAULT_PAGE_SIZE` (1000) and following `next` yields all 1001.
    /// - `concurrent_puts_lose_nothing`: 16 tasks on several threads each write 16 keys at once;
    ///   every object is there with its content and listed once.
    /// - `concurrent_puts_and_deletes_lose_nothing`: 8 tasks each write a key, then delete it while
    ///   writing a sibling, in 8 shared prefixes: every `put` and `delete` succeeds, and exactly the
    ///   siblings remain (a store of directories must not lose a write to a directory that a
    ///   concurrent `delete` removes as empty).
    /// - `put_if_absent_creates_only_once`: declared `conditional_put`: `IfAbsent` creates, then
    ///   answers `Conflict` (after a plain `put` too) leaving the object as it was, and creates
    ///   again after `delete`; undeclared: `put_if` answers `Unsupported` and writes nothing.
    /// - `put_if_match_compares_etags`: declared `conditional_put`: `IfMatch` of a missing key or of
    ///   a wrong etag answers `Conflict` and writes nothing; with `etag` declared too, `IfMatch` of
    ///   the current etag writes, reports the new etag, and the old one is then stale (`Conflict`);
    ///   undeclared: `put_if` answers `Unsupported`.
    /// - `concurrent_put_if_absent_has_one_winner`: declared `conditional_put`: in each of 8 rounds,
    ///   16 `IfAbsent` writes of one key from 4 tasks at once: exactly one succeeds, the others
    ///   answer `Conflict`, and the object holds the winner's content; undeclared: `Unsupported`.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `put`, `get`, `head`, `delete`,
    ///   `list` (and `put_if` when declared) answer `Stopped`.
    ///
    /// The concurrent obligations run writes at once both across threads and within one task, so a
    /// driver that checks then writes, or reads, modifies and writes back, fails every time, not by
    /// chance. Every listing an obligation makes is also held to the general listing rules (page
    /// size, prefix, strictly ascending keys, no empty page announcing more).
    ///
    /// ```
    /// use sandloom_driverkit::conformance::objectstore::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 23);
    /// assert_eq!(OBLIGATIONS[0], "missing_object_is_not_found");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"operations_after_stop_fail_with_stopped"));
    /// ```
    obligations [
        missing_object_is_not_found,
        binary_objects_round_trip_exactly,
        empty_object_round_trips,
        large_object_round_trips,
        put_overwrites,
        put_is_atomic_for_readers,
        metadata_reports_key_and_size,
        etag_tracks_content,
        unusual_keys_round_trip,
        invalid_keys_are_refused,
        one_key_rule_for_every_operation,
        delete_removes_and_is_idempotent,
        list_filters_by_prefix,
        list_is_in_ascending_byte_order,
        list_pages_follow_next_to_the_end,
        list_starts_strictly_after_start_after,
        list_default_page_size_is_bounded,
        concurrent_puts_lose_nothing,
        concurrent_puts_and_deletes_lose_nothing,
        put_if_absent_creates_only_once,
        put_if_match_compares_etags,
        concurrent_put_if_absent_has_one_winner,
        operations_after_stop_fail_with_stopped,
    ];
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Size of the large object: 8 MiB and a few bytes, so no buffer or chunk size divides it.
const LARGE_OBJECT_SIZE: usize = 8 * 1024 * 1024 + 13;

/// A listing announcing more after this many pages is taken to loop.
const MAX_PAGES: usize = 5000;

fn describe(bytes: &[u8]) -> String {
    if bytes.len() <= 32 {
        format!("{:?}", Bytes::copy_from_slice(bytes))
    } else {
        format!("<{} bytes>", bytes.len())
    }
}

/// Fail unless `got` is `expected`, saying where they differ.
fn same_bytes(what: &str, got: &[u8], expected: &[u8]) -> Result<(), String> {
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

async fn get_exact(store: &dyn ObjectStore, key: &str, expected: &[u8]) -> Result<(), String> {
    let got = call!(format!("get({key:?})"), store.get(key));
    same_bytes(&format!("get({key:?})"), &got, expected)
}

/// `put` then `get` the same bytes.
async fn round_trip(store: &dyn ObjectStore, key: &str, data: &[u8]) -> Result<(), String> {
    call!(
        format!("put({key:?}, {})", describe(data)),
        store.put(key, Bytes::copy_from_slice(data))
    );
    get_exact(store, key, data).await
}

fn options(start_after: Option<&str>, limit: Option<usize>) -> ListOptions {
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
struct Listing {
    objects: Vec<ObjectMeta>,
    pages: usize,
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
async fn list_all(
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
fn summarize<S: AsRef<str>>(items: &[S]) -> String {
    let shown: Vec<&str> = items.iter().take(12).map(AsRef::as_ref).collect();
    if items.len() > shown.len() {
        format!("{shown:?} and {} more", items.len() - shown.len())
    } else {
        format!("{shown:?}")
    }
}

/// Fail unless `listing` holds exactly `expected` (in any order given here; the listing must be
/// in byte order, which `list_all` checked).
fn same_keys(what: &str, listing: &Listing, expected: &[&str]) -> Result<(), String> {
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

async fn expect_listing(
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
async fn joined<R>(task: tokio::task::JoinHandle<Result<R, String>>) -> Result<R, String> {
    task.await
        .map_err(|err| format!("a task panicked or was cancelled: {err}"))?
}

// ---------------------------------------------------------------------------------------------
// Obligations

async fn missing_object_is_not_found<T: ObjectStoreProvider>(
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

async fn binary_objects_round_trip_exactly<T: ObjectStoreProvider>(
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

async fn empty_object_round_trips<T: ObjectStoreProvider>(
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

async fn large_object_round_trips<T: ObjectStoreProvider>(
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

async fn put_overwrites<T: ObjectStoreProvider>(
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

async fn put_is_atomic_for_readers<T: ObjectStoreProvider>(
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

async fn metadata_reports_key_and_size<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let objects: [(&str, u64); 2] = [("meta/object.bin", 1234), ("meta/small", 1)];
    for (key, size) in objects {
        let data = Bytes::from(vec![7_u8; size as usize]);
        let meta = call!(format!("put({key:?})"), store.put(key, data));
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
    }
    let listing = expect_listing(store, "meta/", None, &["meta/object.bin", "meta/small"]).await?;
    for (object, (key, size)) in listing.objects.iter().zip(objects) {
        ensure!(
            object.size == size,
            "list reports size {} for {key:?} of {size} bytes",
            object.size
        );
    }
    Ok(())
}

async fn etag_tracks_content<T: ObjectStoreProvider>(
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

/// Keys every backend should store as they are (no characters Windows file names refuse).
fn unusual_keys() -> Vec<String> {
    let mut keys: Vec<String> = [
        "unusual/with space",
        "unusual/ключ",
        "unusual/鍵",
        "unusual/🔑",
        "unusual/café",
        "unusual/cafe\u{301}",
        "unusual/percent%20and+plus",
        "unusual/sym=&@!$'(),;~#",
        "unusual/..dots",
        "unusual/.hidden",
        "unusual/.../three-dots",
        "unusual/trailing.",
        "unusual/-dash",
        "unusual/UPPER",
        "unusual/upper",
        "unusual/deep/1/2/3/4/5/6/7/8/9",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let segment = "x".repeat(100);
    keys.push(format!("unusual/long/{}", [segment.as_str(); 8].join("/")));
    keys
}

async fn unusual_keys_round_trip<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let keys = unusual_keys();
    for (n, key) in keys.iter().enumerate() {
        call!(
            format!("put({key:?})"),
            store.put(key, Bytes::from(format!("{n}:{key}")))
        );
    }
    for (n, key) in keys.iter().enumerate() {
        let got = call!(format!("get({key:?})"), store.get(key));
        ensure!(
            got == format!("{n}:{key}").as_bytes(),
            "get({key:?}) answered {}: keys must be distinct and exact",
            describe(&got)
        );
        let head = call!(format!("head({key:?})"), store.head(key));
        ensure!(
            head.key == *key,
            "head({key:?}) reports the key {:?}",
            head.key
        );
    }
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    expect_listing(store, "unusual/", None, &expected).await?;
    Ok(())
}

/// Keys every driver refuses. `kept` is an object the kit writes first: keys that a path
/// normalizer would turn into it must not reach it.
const INVALID_KEYS: &[&str] = &[
    "",
    "/",
    "/absolute",
    "/kept",
    ".",
    "..",
    "./kept",
    "kept/.",
    "a/./b",
    "x/../kept",
    "a/..",
    "kept/",
    "kept//",
    "a//b",
    "//a",
    "\0",
    "a\0b",
    "kept\0",
    "a\\b",
    "\\kept",
];

/// Keys that would leave the store's root if used as relative paths (`{}` is the marker).
const ESCAPING_KEYS: &[&str] = &["../{}", "../../{}", "a/../../{}", "..\\{}"];

async fn invalid_keys_are_refused<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    call!(
        "put(\"kept\")",
        store.put("kept", Bytes::from_static(b"kept"))
    );
    let marker = format!("escape-{}", i.request.namespace);
    let escaping: Vec<String> = ESCAPING_KEYS
        .iter()
        .map(|key| key.replace("{}", &marker))
        .collect();
    let keys = INVALID_KEYS
        .iter()
        .copied()
        .chain(escaping.iter().map(String::as_str));
    let invalid = ErrorKind::InvalidInput;
    for key in keys {
        let data = || Bytes::from_static(b"must not be written");
        expect_kind(
            &format!("put({key:?})"),
            invalid,
            &store.put(key, data()).await,
        )?;
        expect_kind(&format!("get({key:?})"), invalid, &store.get(key).await)?;
        expect_kind(&format!("head({key:?})"), invalid, &store.head(key).await)?;
        expect_kind(
            &format!("delete({key:?})"),
            invalid,
            &store.delete(key).await,
        )?;
        if i.declares(CONDITIONAL_PUT) {
            expect_kind(
                &format!("put_if({key:?}, IfAbsent)"),
                invalid,
                &store.put_if(key, data(), PutCondition::IfAbsent).await,
            )?;
        }
    }
    expect_kind(
        "list with a prefix holding a NUL",
        invalid,
        &store.list("a\0", ListOptions::default()).await,
    )?;
    expect_listing(store, "", None, &["kept"]).await?;
    get_exact(store, "kept", b"kept").await?;
    let escaped = escaped_files(&i.request.scratch_dir, &marker);
    for path in &escaped {
        let _ = std::fs::remove_file(path);
    }
    ensure!(
        escaped.is_empty(),
        "keys with `..` wrote outside the store: {escaped:?}"
    );
    Ok(())
}

/// Files named with `marker` in `scratch` (at any depth) or beside it.
fn escaped_files(scratch: &Path, marker: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, marker: &str, depth: usize, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().contains(marker) {
                found.push(path.clone());
            }
            if depth > 0 && entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&path, marker, depth - 1, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(scratch, marker, 16, &mut found);
    if let Some(parent) = scratch.parent() {
        walk(parent, marker, 0, &mut found);
    }
    found
}

async fn delete_removes_and_is_idempotent<T: ObjectStoreProvider>(
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

async fn list_filters_by_prefix<T: ObjectStoreProvider>(
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

async fn list_is_in_ascending_byte_order<T: ObjectStoreProvider>(
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

async fn list_pages_follow_next_to_the_end<T: ObjectStoreProvider>(
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

async fn list_starts_strictly_after_start_after<T: ObjectStoreProvider>(
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

async fn list_default_page_size_is_bounded<T: ObjectStoreProvider>(
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
    Ok(())
}

async fn concurrent_puts_lose_nothing<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const TASKS: usize = 16;
    const PUTS: usize = 16;
    let key = |task: usize, n: usize| format!("concurrent/{task:02}/{n:02}");
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = i.shared();
        tasks.push(tokio::spawn(async move {
            // Within a task the writes are concurrent too: a driver that reads, modifies and
            // writes back shared state loses all but one of them.
            let puts = (0..PUTS).map(|n| {
                let store = store.clone();
                async move {
                    let key = key(task, n);
                    store
                        .put(&key, Bytes::from(format!("{task}-{n}")))
                        .await
                        .map_err(|err| format!("put({key:?}) failed: {err}"))
                }
            });
            futures_util::future::try_join_all(puts).await?;
            for n in 0..PUTS {
                get_exact(&*store, &key(task, n), format!("{task}-{n}").as_bytes()).await?;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        joined(task).await?;
    }
    let keys: Vec<String> = (0..TASKS)
        .flat_map(|task| (0..PUTS).map(move |n| key(task, n)))
        .collect();
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "concurrent/", Some(100), &expected).await?;
    Ok(())
}

async fn concurrent_puts_and_deletes_lose_nothing<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const TASKS: usize = 8;
    const ROUNDS: usize = 8;
    let key = |round: usize, task: usize, which: &str| format!("churn/{round}/{task}-{which}");
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = i.shared();
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let (doomed, kept) = (key(round, task, "a"), key(round, task, "b"));
                call!(
                    format!("put({doomed:?})"),
                    store.put(&doomed, Bytes::from_static(b"doomed"))
                );
                // The delete may empty the shared prefix while the sibling is being written.
                let (deleted, put) = futures_util::future::join(
                    store.delete(&doomed),
                    store.put(&kept, Bytes::from(kept.clone())),
                )
                .await;
                deleted.map_err(|err| format!("delete({doomed:?}) beside a put failed: {err}"))?;
                put.map_err(|err| format!("put({kept:?}) beside a delete failed: {err}"))?;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        joined(task).await?;
    }
    let kept: Vec<String> = (0..ROUNDS)
        .flat_map(|round| (0..TASKS).map(move |task| key(round, task, "b")))
        .collect();
    let expected: Vec<&str> = kept.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "churn/", Some(20), &expected).await?;
    for key in &kept {
        get_exact(&*i.driver, key, key.as_bytes()).await?;
    }
    Ok(())
}

async fn put_if_absent_creates_only_once<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "if-absent/key";
    let absent = || PutCondition::IfAbsent;
    if !i.declares(CONDITIONAL_PUT) {
        expect_unsupported(
            "put_if(IfAbsent)",
            &store.put_if(key, Bytes::from_static(b"x"), absent()).await,
        )?;
        return expect_kind(
            "get after an unsupported put_if",
            ErrorKind::NotFound,
            &store.get(key).await,
        );
    }
    let meta = call!(
        "put_if(IfAbsent) of a missing key",
        store.put_if(key, Bytes::from_static(b"first"), absent())
    );
    ensure!(
        meta.key == key && meta.size == 5,
        "put_if of 5 bytes reports key {:?} and size {}",
        meta.key,
        meta.size
    );
    get_exact(store, key, b"first").await?;
    expect_kind(
        "put_if(IfAbsent) of an existing key",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"second"), absent())
            .await,
    )?;
    get_exact(store, key, b"first").await?;
    call!("put", store.put(key, Bytes::from_static(b"third")));
    expect_kind(
        "put_if(IfAbsent) of a key written by put",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"fourth"), absent())
            .await,
    )?;
    get_exact(store, key, b"third").await?;
    call!("delete", store.delete(key));
    call!(
        "put_if(IfAbsent) after delete",
        store.put_if(key, Bytes::from_static(b"fifth"), absent())
    );
    get_exact(store, key, b"fifth").await
}

async fn put_if_match_compares_etags<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "if-match/key";
    let matching = |etag: &str| PutCondition::IfMatch(etag.to_owned());
    if !i.declares(CONDITIONAL_PUT) {
        call!("put", store.put(key, Bytes::from_static(b"v1")));
        let etag = call!("head", store.head(key)).etag.unwrap_or_default();
        return expect_unsupported(
            "put_if(IfMatch)",
            &store
                .put_if(key, Bytes::from_static(b"v2"), matching(&etag))
                .await,
        );
    }
    expect_kind(
        "put_if(IfMatch) of a missing key",
        ErrorKind::Conflict,
        &store
            .put_if(
                "if-match/missing",
                Bytes::from_static(b"x"),
                matching("\"x\""),
            )
            .await,
    )?;
    expect_kind(
        "get after a refused put_if(IfMatch)",
        ErrorKind::NotFound,
        &store.get("if-match/missing").await,
    )?;
    let first = call!("put", store.put(key, Bytes::from_static(b"v1")));
    expect_kind(
        "put_if(IfMatch) with a wrong etag",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"v2"), matching("not-an-etag"))
            .await,
    )?;
    get_exact(store, key, b"v1").await?;
    if !i.declares(ETAG) {
        // Without etags no caller can hold a current one: only refusals are observable.
        return Ok(());
    }
    let Some(etag) = first.etag else {
        return Err("the feature `etag` is declared, but put reports no etag".to_owned());
    };
    let second = call!(
        "put_if(IfMatch) with the current etag",
        store.put_if(key, Bytes::from_static(b"v2"), matching(&etag))
    );
    get_exact(store, key, b"v2").await?;
    let head = call!("head", store.head(key));
    ensure!(
        second.etag.is_some() && second.etag != Some(etag.clone()) && head.etag == second.etag,
        "after put_if(IfMatch {etag:?}) changed the content, put_if reports etag {:?} and head \
         {:?}: both must report the new etag",
        second.etag,
        head.etag
    );
    expect_kind(
        "put_if(IfMatch) with a stale etag",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"v3"), matching(&etag))
            .await,
    )?;
    get_exact(store, key, b"v2").await
}

async fn concurrent_put_if_absent_has_one_winner<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const ROUNDS: usize = 8;
    const TASKS: usize = 4;
    const ATTEMPTS: usize = 4;
    if !i.declares(CONDITIONAL_PUT) {
        return expect_unsupported(
            "put_if(IfAbsent)",
            &i.driver
                .put_if("race/0", Bytes::from_static(b"x"), PutCondition::IfAbsent)
                .await,
        );
    }
    for round in 0..ROUNDS {
        let key = format!("race/{round}");
        let mut tasks = Vec::new();
        for task in 0..TASKS {
            let store = i.shared();
            let key = key.clone();
            tasks.push(tokio::spawn(async move {
                // All attempts of a task start before any finishes: a driver that checks, then
                // writes, lets all of them through.
                let attempts = (0..ATTEMPTS).map(|n| {
                    let (store, key) = (&store, &key);
                    async move {
                        let data = format!("{task}-{n}");
                        let outcome = store
                            .put_if(key, Bytes::from(data.clone()), PutCondition::IfAbsent)
                            .await;
                        (data, outcome)
                    }
                });
                Ok::<_, String>(futures_util::future::join_all(attempts).await)
            }));
        }
        let mut winners = Vec::new();
        for task in tasks {
            for (data, outcome) in joined(task).await? {
                match outcome {
                    Ok(_) => winners.push(data),
                    Err(err) if err.kind() == ErrorKind::Conflict => {}
                    Err(err) => {
                        return Err(format!(
                            "a concurrent put_if({key:?}, IfAbsent) answered {}, not Conflict: \
                             {err}",
                            err.kind()
                        ));
                    }
                }
            }
        }
        ensure!(
            winners.len() == 1,
            "{} of {} concurrent put_if({key:?}, IfAbsent) succeeded ({}): exactly one must, \
             the others answer Conflict",
            winners.len(),
            TASKS * ATTEMPTS,
            summarize(&winners)
        );
        get_exact(&*i.driver, &key, winners[0].as_bytes()).await?;
    }
    Ok(())
}

async fn operations_after_stop_fail_with_stopped<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    call!("put", store.put("stop/object", Bytes::from_static(b"v")));
    i.driver
        .stop()
        .await
        .map_err(|err| format!("stop failed: {err}"))?;
    let stopped = ErrorKind::Stopped;
    let data = || Bytes::from_static(b"after stop");
    expect_kind(
        "put after stop",
        stopped,
        &store.put("stop/object", data()).await,
    )?;
    expect_kind("get after stop", stopped, &store.get("stop/object").await)?;
    expect_kind("head after stop", stopped, &store.head("stop/object").await)?;
    expect_kind(
        "delete after stop",
        stopped,
        &store.delete("stop/object").await,
    )?;
    expect_kind(
        "list after stop",
        stopped,
        &store.list("", ListOptions::default()).await,
    )?;
    if i.declares(CONDITIONAL_PUT) {
        expect_kind(
            "put_if after stop",
            stopped,
            &store
                .put_if("stop/new", data(), PutCondition::IfAbsent)
                .await,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escaping_keys_are_invalid_and_the_unusual_keys_valid() {
        use sandloom_sdk_infra::objectstore::validate_key;
        for key in INVALID_KEYS.iter().chain(ESCAPING_KEYS) {
            assert!(validate_key(key).is_err(), "{key:?}");
        }
        for key in unusual_keys() {
            assert!(validate_key(&key).is_ok(), "{key:?}");
            assert!(key.len() < 1024, "{key:?}");
        }
    }

    #[test]
    fn the_key_rule_probes_are_what_they_claim() {
        use sandloom_sdk_infra::objectstore::{validate_key, validate_prefix};
        for key in key_rule::too_long_keys() {
            assert!(validate_key(&key).is_err(), "{} bytes", key.len());
        }
        for key in key_rule::edge_keys() {
            assert!(validate_key(&key).is_ok(), "{key:?}");
        }
        for prefix in key_rule::invalid_prefixes() {
            assert!(validate_prefix(&prefix).is_err(), "{prefix:?}");
        }
        for prefix in key_rule::VALID_PREFIXES {
            assert!(validate_prefix(prefix).is_ok(), "{prefix:?}");
        }
    }

    #[test]
    fn every_obligation_is_documented() {
        // The doc list and the const agree: one line per obligation.
        let source = include_str!("objectstore.rs");
        for name in OBLIGATIONS {
            assert!(source.contains(&format!("/// - `{name}`:")), "{name}");
        }
    }
}
