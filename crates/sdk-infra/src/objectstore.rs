//! The `objectstore` capability: named blobs under `/`-separated keys.
//!
//! Required operations: [`put`](ObjectStore::put), [`get`](ObjectStore::get),
//! [`head`](ObjectStore::head), [`delete`](ObjectStore::delete), [`list`](ObjectStore::list).
//! Optional features: [`ETAG`], [`CONDITIONAL_PUT`].
//!
//! Keys are relative, `/`-separated, non-empty UTF-8 paths of at most [`MAX_KEY_BYTES`] bytes,
//! each segment at most [`MAX_SEGMENT_BYTES`]. A key that is absolute, contains a `..` or `.`
//! segment, an empty segment, a backslash or a NUL, or is too long, is refused with
//! [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) by every driver and by every
//! operation alike (`put`, `get`, `head`, `delete`, `put_if`); [`validate_key`] is the rule. A
//! driver may refuse more keys (a name its backend reserves, characters it cannot store), but
//! then in every operation too. List prefixes follow [`validate_prefix`].
//!
//! Keys are compared as exact byte strings, in every operation: keys that differ only in case,
//! by a trailing or leading space, by a trailing dot, by one byte more or less, or in Unicode
//! normalization (`é` as NFC `U+00E9` and as NFD `e` + `U+0301`) are different objects. No
//! driver folds case, trims, or normalizes a key, and a key is never matched by a key it is a
//! prefix of: [`put_if`](ObjectStore::put_if) with [`PutCondition::IfAbsent`] of `a/key` holds
//! while `a/key2` or `a/key ` exists.
//!
//! Every driver stores objects of up to 16 MiB in one [`put`](ObjectStore::put); a larger one it
//! either stores whole or refuses with `InvalidInput`, writing nothing: it never cuts one to fit.
//! An object stays until it is deleted or replaced, however long nobody reads it, and its
//! metadata stays that of the write: a driver applies no lifetime of its own, and a
//! `last_modified` is the time of the write, never of a later read.
//!
//! The constants are the names drivers declare and modules require:
//!
//! ```
//! use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ETAG, FEATURES, NAME, REQUIRED_OPERATIONS};
//! use sandloom_sdk_infra::{requires, OBJECT_STORE};
//!
//! // Startup refuses an `objectstore.uploads` whose driver cannot write conditionally.
//! requires!(OBJECT_STORE, "uploads", features = [CONDITIONAL_PUT]);
//!
//! # fn main() {
//! assert_eq!(NAME, OBJECT_STORE.name());
//! assert_eq!((ETAG, CONDITIONAL_PUT), ("etag", "conditional_put"));
//! assert_eq!(FEATURES, [ETAG, CONDITIONAL_PUT]);
//! assert_eq!(REQUIRED_OPERATIONS, ["put", "get", "head", "delete", "list"]);
//! # }
//! ```

use std::time::SystemTime;

use crate::error::{InfraError, InfraResult};

/// Capability name of the object store, as written in `INFRA` (`[objectstore.default]`); see
/// the [module example](self).
pub const NAME: &str = "objectstore";

/// The bytes an operation's future may take in an [`OpFuture`](crate::OpFuture) of a
/// [`ObjectStore`] call before it is boxed: the gate's work and the driver's future together.
/// Chosen from the measured sizes of the embedded drivers' futures
/// (`docs/src/contributing/inline-futures.md`).
///
/// ```
/// assert_eq!(sandloom_sdk_infra::objectstore::FUTURE_BYTES, 640);
/// ```
pub const FUTURE_BYTES: usize = 640;

/// Feature: [`ObjectMeta::etag`] is filled in by `put`, `head` and `list`.
pub const ETAG: &str = "etag";
/// Feature: [`ObjectStore::put_if`] writes only when a condition holds.
pub const CONDITIONAL_PUT: &str = "conditional_put";
/// The page size `list` uses when the caller gives none.
///
/// ```
/// use sandloom_sdk_infra::objectstore::{ListOptions, DEFAULT_PAGE_SIZE};
///
/// let options = ListOptions::default(); // no limit: at most DEFAULT_PAGE_SIZE objects a page
/// assert_eq!(options.limit.unwrap_or(DEFAULT_PAGE_SIZE), 1000);
/// ```
pub const DEFAULT_PAGE_SIZE: usize = 1000;

/// The longest object key, in bytes (UTF-8): S3's limit, which most object stores share
/// (example: [`MAX_SEGMENT_BYTES`]).
pub const MAX_KEY_BYTES: usize = 1024;

/// The longest segment of an object key (the text between two `/`), in bytes (UTF-8): the
/// longest file name most file systems hold.
///
/// ```
/// use sandloom_sdk_infra::objectstore::{validate_key, MAX_KEY_BYTES, MAX_SEGMENT_BYTES};
///
/// let segment = "s".repeat(MAX_SEGMENT_BYTES);
/// assert!(validate_key(&segment).is_ok());
/// assert!(validate_key(&format!("{segment}s")).is_err()); // one byte too long
/// assert!(validate_key(&"a/".repeat(MAX_KEY_BYTES / 2 + 1)).is_err()); // over MAX_KEY_BYTES
/// ```
pub const MAX_SEGMENT_BYTES: usize = 255;

/// What is wrong with `text` as a key (`prefix` false) or as a list prefix (`prefix` true):
/// a prefix is held to the key rule except that its last segment may still grow into a valid
/// one (so it may be empty, `.` or `..`), and that it then needs room for one more byte.
fn problem(text: &str, prefix: bool) -> Option<&'static str> {
    if text.is_empty() {
        return (!prefix).then_some("is empty");
    }
    if text.contains('\0') {
        return Some("contains a NUL byte");
    }
    if text.contains('\\') {
        return Some("contains a backslash");
    }
    if text.starts_with('/') {
        return Some("is absolute");
    }
    let segments: Vec<&str> = text.split('/').collect();
    let (last, before) = segments.split_last()?;
    let complete: &[&str] = if prefix { before } else { &segments };
    if complete.contains(&"..") {
        return Some("contains a `..` segment");
    }
    if complete.contains(&".") {
        return Some("contains a `.` segment");
    }
    if complete.iter().any(|segment| segment.is_empty()) {
        return Some("contains an empty segment");
    }
    if segments
        .iter()
        .any(|segment| segment.len() > MAX_SEGMENT_BYTES)
    {
        return Some("has a segment longer than 255 bytes");
    }
    // A prefix whose last segment is not yet a valid one is not a key: keys extend it by a byte.
    let room = usize::from(prefix && matches!(*last, "" | "." | ".."));
    if text.len() + room > MAX_KEY_BYTES {
        return Some("is longer than 1024 bytes");
    }
    None
}

/// Check `key` against the object-key rule: a relative, `/`-separated, non-empty path of at
/// most [`MAX_KEY_BYTES`] bytes, whose segments are non-empty, not `.` or `..`, at most
/// [`MAX_SEGMENT_BYTES`] bytes, and hold no backslash or NUL.
///
/// ```
/// use sandloom_sdk_infra::objectstore::validate_key;
///
/// assert!(validate_key("reports/2026/11.csv").is_ok());
/// assert!(validate_key(&"x".repeat(255)).is_ok());
/// let too_long = "a/".repeat(3000) + "a"; // 3,001 segments, 6,001 bytes
/// for bad in ["", "/etc/passwd", "a/../b", "./a", "a//b", "a\0b", "a\\b", "a/", &too_long] {
///     assert!(validate_key(bad).is_err(), "{bad:?}");
/// }
/// assert!(validate_key(&"x".repeat(256)).is_err()); // a segment longer than 255 bytes
/// ```
///
/// # Errors
/// `InvalidInput`, naming what is wrong with the key.
pub fn validate_key(key: &str) -> InfraResult<()> {
    match problem(key, false) {
        None => Ok(()),
        Some(reason) => Err(InfraError::invalid_input(
            NAME,
            format!("object key {key:?} {reason}; keys are relative `/`-separated paths"),
        )),
    }
}

/// Check a list prefix: it is valid when it is empty or when at least one valid key (one
/// [`validate_key`] accepts) starts with it. Exactly: `prefix` is valid when it is empty, is
/// itself a valid key, or becomes one with one more character (`{prefix}x`).
///
/// So a valid prefix is a key, or a key cut short: every segment before its last `/` is a valid
/// segment, its last segment may be empty (`reports/`), `.` or `..` (they can still grow into
/// `.x`, `..x`), and it leaves room for the rest within [`MAX_KEY_BYTES`]. `../`, `/`, `a//`,
/// `./a` and anything with a NUL or backslash can start no key, and every store answers
/// `InvalidInput` for them rather than an empty page.
///
/// ```
/// use sandloom_sdk_infra::objectstore::validate_prefix;
///
/// for good in ["", "reports/", "reports/2026-", ".", "..", "a/..", "a/."] {
///     assert!(validate_prefix(good).is_ok(), "{good:?}");
/// }
/// for bad in ["../", "/", "/a", "a//", "./a", "a/../", "a\0", "a\\"] {
///     assert!(validate_prefix(bad).is_err(), "{bad:?}");
/// }
/// ```
///
/// # Errors
/// `InvalidInput`, naming what is wrong with the prefix.
pub fn validate_prefix(prefix: &str) -> InfraResult<()> {
    match problem(prefix, true) {
        None => Ok(()),
        Some(reason) => Err(InfraError::invalid_input(
            NAME,
            format!("the list prefix {prefix:?} {reason}, so no valid key starts with it"),
        )),
    }
}

/// What a store knows about one object.
///
/// ```
/// use sandloom_sdk_infra::objectstore::ObjectMeta;
/// let meta = ObjectMeta::new("a.txt", 3);
/// assert_eq!((meta.key.as_str(), meta.size), ("a.txt", 3));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectMeta {
    /// The object's key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// An opaque version tag that changes whenever the content does (feature [`ETAG`]).
    ///
    /// Writing identical content again may keep the etag (a content hash) or give a new one (a
    /// generation number): callers must not rely on either. Whichever it is, the etag `put`
    /// reports is the object's current one: `head` and `list` report it, and
    /// [`PutCondition::IfMatch`] of it holds until the next write.
    pub etag: Option<String>,
    /// When it was last written, when the store knows.
    ///
    /// It is the time of the latest write of the key (`put` or `put_if`), not of its first one:
    /// after an overwrite, or a `delete` and a new `put`, `head` and `list` report the new time,
    /// together with the new size and etag. A store keeps it to its own precision (S3 to the
    /// second), which the conformance kit allows as the driver's declared tolerance.
    pub last_modified: Option<SystemTime>,
}

impl ObjectMeta {
    /// Metadata with a key and a size.
    ///
    /// ```
    /// let m = sandloom_sdk_infra::objectstore::ObjectMeta::new("k", 0).with_etag("\"1\"");
    /// assert_eq!(m.etag.as_deref(), Some("\"1\""));
    /// ```
    pub fn new(key: impl Into<String>, size: u64) -> Self {
        Self {
            key: key.into(),
            size,
            etag: None,
            last_modified: None,
        }
    }

    /// Set the etag.
    ///
    /// ```
    /// # use sandloom_sdk_infra::objectstore::ObjectMeta;
    /// assert!(ObjectMeta::new("k", 1).with_etag("x").etag.is_some());
    /// ```
    #[must_use]
    pub fn with_etag(mut self, etag: impl Into<String>) -> Self {
        self.etag = Some(etag.into());
        self
    }

    /// Set the modification time.
    ///
    /// ```
    /// # use sandloom_sdk_infra::objectstore::ObjectMeta;
    /// let m = ObjectMeta::new("k", 1).with_last_modified(std::time::SystemTime::UNIX_EPOCH);
    /// assert!(m.last_modified.is_some());
    /// ```
    #[must_use]
    pub fn with_last_modified(mut self, at: SystemTime) -> Self {
        self.last_modified = Some(at);
        self
    }
}

/// Which page of a listing to return.
///
/// ```
/// use sandloom_sdk_infra::objectstore::ListOptions;
/// let first = ListOptions::default().with_limit(100);
/// let next = first.clone().after("reports/0099.csv");
/// assert_eq!(next.start_after.as_deref(), Some("reports/0099.csv"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOptions {
    /// Only keys strictly greater than this one (the previous page's `next`).
    pub start_after: Option<String>,
    /// At most this many objects; `None` means [`DEFAULT_PAGE_SIZE`]. A limit of 0 asks for
    /// nothing and is refused: `list` answers `InvalidInput`. A limit above
    /// [`DEFAULT_PAGE_SIZE`] may give shorter pages (a store may cap its pages, as S3 does at
    /// 1,000), each announcing `next` while more objects follow.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// Set the page size.
    ///
    /// ```
    /// # use sandloom_sdk_infra::objectstore::ListOptions;
    /// assert_eq!(ListOptions::default().with_limit(5).limit, Some(5));
    /// ```
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Continue after `key`.
    ///
    /// ```
    /// # use sandloom_sdk_infra::objectstore::ListOptions;
    /// assert!(ListOptions::default().after("a").start_after.is_some());
    /// ```
    #[must_use]
    pub fn after(mut self, key: impl Into<String>) -> Self {
        self.start_after = Some(key.into());
        self
    }
}

/// One page of a listing.
///
/// Follow `next` until it is `None` to see every object:
///
/// ```
/// use sandloom_sdk_infra::objectstore::{ListOptions, ObjectStore};
/// use sandloom_sdk_infra::InfraResult;
///
/// async fn total_size(store: &dyn ObjectStore, prefix: &str) -> InfraResult<u64> {
///     let mut options = ListOptions::default().with_limit(100);
///     let mut total = 0;
///     loop {
///         let page = store.list(prefix, options.clone()).await?;
///         total += page.objects.iter().map(|object| object.size).sum::<u64>();
///         match page.next {
///             Some(last) => options = options.after(last),
///             None => return Ok(total),
///         }
///     }
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListPage {
    /// The objects of this page, in ascending byte order of their keys.
    pub objects: Vec<ObjectMeta>,
    /// When more objects follow: pass it to [`ListOptions::after`] for the next page.
    ///
    /// `Some` only when at least one more object with the prefix follows, so a page that is
    /// exactly full at the end of the listing has `None`, and a caller never fetches an empty
    /// last page. A listing with no objects (an empty store, a prefix nothing starts with, or
    /// one whose objects were all deleted) is one empty page with `next` `None`: deleted
    /// objects leave nothing behind that a listing counts.
    pub next: Option<String>,
}

impl ListPage {
    /// A page of `objects`, with `next` set when more follow.
    ///
    /// ```
    /// use sandloom_sdk_infra::objectstore::{ListPage, ObjectMeta};
    /// let page = ListPage::new(vec![ObjectMeta::new("a", 1)], None);
    /// assert!(page.next.is_none());
    /// ```
    pub fn new(objects: Vec<ObjectMeta>, next: Option<String>) -> Self {
        Self { objects, next }
    }
}

/// The condition of [`ObjectStore::put_if`].
///
/// ```
/// use sandloom_sdk_infra::objectstore::PutCondition;
/// let create_only = PutCondition::IfAbsent;
/// let compare_and_swap = PutCondition::IfMatch("\"abc\"".into());
/// assert_ne!(create_only, compare_and_swap);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PutCondition {
    /// Write only when no object has the key.
    IfAbsent,
    /// Write only when the current object's etag is this one.
    IfMatch(String),
}

/// The `objectstore` contract, declared once: what the operation trait, the kernel's spec and
/// driverkit's provider trait and gate are generated from (see `declare.rs`). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __objectstore_contract {
    ([$($callback:tt)*] [$($context:tt)*]) => {
        $crate::__parse_operations! {
            callback: [$($callback)*], context: [$($context)*],
            name: "objectstore",
            stability: Stable,
            version: (1, 0, 0),
            features: ["etag", "conditional_put"],
            ops: ObjectStoreOps,
            future_bytes: $crate::objectstore::FUTURE_BYTES,
            trait: {
                /// A store of objects.
                ///
                /// ```
                /// use sandloom_sdk_infra::objectstore::{ListOptions, ObjectStore};
                /// use sandloom_sdk_infra::InfraResult;
                ///
                /// async fn archive(store: &dyn ObjectStore) -> InfraResult<usize> {
                ///     store.put("reports/1.csv", "a,b\n".into()).await?;
                ///     let page = store.list("reports/", ListOptions::default()).await?;
                ///     Ok(page.objects.len())
                /// }
                /// ```
                pub trait ObjectStore: Send + Sync {
                    /// Write `data` under `key`, replacing any object, atomically: a reader sees the old or the
                    /// new object, never a part.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::ObjectStore;
                    /// use sandloom_sdk_infra::{bytes::Bytes, InfraResult};
                    ///
                    /// async fn save_report(store: &dyn ObjectStore, day: &str, csv: Vec<u8>) -> InfraResult<u64> {
                    ///     let meta = store.put(&format!("reports/{day}.csv"), Bytes::from(csv)).await?;
                    ///     Ok(meta.size)
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `InvalidInput` for a key [`validate_key`] refuses (and for a key the driver refuses in
                    /// every operation, as its documentation says); `Unavailable` when the backend fails.
                    async fn put(&self, key: &str, data: $crate::bytes::Bytes) -> $crate::InfraResult<$crate::objectstore::ObjectMeta>;

                    /// The object's bytes.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::ObjectStore;
                    /// use sandloom_sdk_infra::{bytes::Bytes, ErrorKind, InfraResult};
                    ///
                    /// /// The avatar, or `None` when the user has not uploaded one.
                    /// async fn avatar(store: &dyn ObjectStore, user: u64) -> InfraResult<Option<Bytes>> {
                    ///     match store.get(&format!("avatars/{user}.png")).await {
                    ///         Ok(bytes) => Ok(Some(bytes)),
                    ///         Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `NotFound` when there is no object; else as `put`.
                    async fn get(&self, key: &str) -> $crate::InfraResult<$crate::bytes::Bytes>;

                    /// The object's metadata, without its bytes.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::ObjectStore;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn too_big_to_mail(store: &dyn ObjectStore, key: &str) -> InfraResult<bool> {
                    ///     Ok(store.head(key).await?.size > 10 * 1024 * 1024)
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// `NotFound` when there is no object; else as `put`.
                    async fn head(&self, key: &str) -> $crate::InfraResult<$crate::objectstore::ObjectMeta>;

                    /// Remove the object. Deleting a key that has no object succeeds (delete is idempotent).
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::ObjectStore;
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// async fn remove_avatar(store: &dyn ObjectStore, user: u64) -> InfraResult<()> {
                    ///     store.delete(&format!("avatars/{user}.png")).await // fine if there was none
                    /// }
                    /// ```
                    ///
                    /// # Errors
                    /// As `put`.
                    async fn delete(&self, key: &str) -> $crate::InfraResult<()>;

                    /// One page of the objects whose keys start with `prefix` (`""` lists all), in ascending
                    /// byte order of keys. Follow [`ListPage::next`] until it is `None` to see every object
                    /// (see the example on [`ListPage`]).
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::{ListOptions, ObjectStore};
                    /// use sandloom_sdk_infra::InfraResult;
                    ///
                    /// /// The first ten report keys, and whether there are more.
                    /// async fn first_reports(store: &dyn ObjectStore) -> InfraResult<(Vec<String>, bool)> {
                    ///     let page = store.list("reports/", ListOptions::default().with_limit(10)).await?;
                    ///     let keys = page.objects.into_iter().map(|object| object.key).collect();
                    ///     Ok((keys, page.next.is_some()))
                    /// }
                    /// ```
                    ///
                    /// A prefix is valid when it is empty or some valid key starts with it ([`validate_prefix`]
                    /// is the rule: `prefix`, or `prefix` and one more character, is a valid key). A driver that
                    /// refuses more keys than [`validate_key`] also refuses the prefixes that only such keys
                    /// could start with.
                    ///
                    /// # Errors
                    /// `InvalidInput` for a prefix no valid key starts with (`../`, `/`, `a//`, a NUL, …) and
                    /// for a limit of zero; else as `put`.
                    async fn list(&self, prefix: &str, options: $crate::objectstore::ListOptions) -> $crate::InfraResult<$crate::objectstore::ListPage>;

                    /// Write only when `condition` holds. Feature [`CONDITIONAL_PUT`].
                    ///
                    /// The check and the write are one atomic step, for each condition: of many concurrent
                    /// `put_if` calls with [`PutCondition::IfAbsent`] of a missing key, or with
                    /// [`PutCondition::IfMatch`] of the current etag, exactly one writes and every other answers
                    /// `Conflict`; the object then holds the winner's content, and the etag the winner's
                    /// [`ObjectMeta`] reports is the object's (the one the next `IfMatch` must give). An empty
                    /// object is an object like any other: `IfAbsent` answers `Conflict` for it, and `IfMatch`
                    /// of its etag writes.
                    ///
                    /// ```
                    /// use sandloom_sdk_infra::objectstore::{ObjectStore, ObjectStoreOps, PutCondition};
                    /// use sandloom_sdk_infra::{ErrorKind, InfraResult};
                    ///
                    /// /// `true` when this call created the object, `false` when it already existed.
                    /// async fn create_once(store: &dyn ObjectStore, key: &str) -> InfraResult<bool> {
                    ///     match store.put_if(key, "claimed".into(), PutCondition::IfAbsent).await {
                    ///         Ok(_) => Ok(true),
                    ///         Err(err) if err.kind() == ErrorKind::Conflict => Ok(false),
                    ///         Err(err) => Err(err),
                    ///     }
                    /// }
                    /// # use sandloom_sdk_infra::{bytes::Bytes};
                    /// # use sandloom_sdk_infra::objectstore::{ListOptions, ListPage, ObjectMeta};
                    /// # struct PlainStore;
                    /// # impl ObjectStoreOps for PlainStore {
                    /// #     async fn put(&self, _: &str, _: Bytes) -> InfraResult<ObjectMeta> { unreachable!() }
                    /// #     async fn get(&self, _: &str) -> InfraResult<Bytes> { unreachable!() }
                    /// #     async fn head(&self, _: &str) -> InfraResult<ObjectMeta> { unreachable!() }
                    /// #     async fn delete(&self, _: &str) -> InfraResult<()> { unreachable!() }
                    /// #     async fn list(&self, _: &str, _: ListOptions) -> InfraResult<ListPage> { unreachable!() }
                    /// # }
                    /// # fn block_on<F: Future>(future: F) -> F::Output { // these futures never wait
                    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    /// #     match std::pin::pin!(future).poll(&mut cx) {
                    /// #         std::task::Poll::Ready(output) => output,
                    /// #         std::task::Poll::Pending => unreachable!(),
                    /// #     }
                    /// # }
                    ///
                    /// // `PlainStore` implements only the required operations: no `conditional_put`.
                    /// let err = block_on(create_once(&PlainStore, "jobs/nightly")).unwrap_err();
                    /// assert_eq!(err.kind(), ErrorKind::Unsupported);
                    /// ```
                    ///
                    /// # Errors
                    /// `Unsupported` without the feature; `Conflict` when the condition fails; else as `put`.
                    #[feature = "conditional_put"]
                    async fn put_if(
                        &self,
                        key: &str,
                        data: $crate::bytes::Bytes,
                        condition: $crate::objectstore::PutCondition,
                    ) -> $crate::InfraResult<$crate::objectstore::ObjectMeta>;
                }
            }
        }
    };
}

crate::__objectstore_contract!([crate::__operation_trait] []);
crate::__objectstore_contract!([crate::__capability_constants] []);
