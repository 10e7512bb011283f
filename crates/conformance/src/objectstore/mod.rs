//! The `objectstore` kit: [`ObjectStoreConformance`].
//!
//! Every obligation works on a fresh instance and expects to see only its own objects: it lists
//! with the prefix `""` and counts what it finds. A driver on a shared server must therefore
//! isolate each instance, giving it a fresh bucket or key prefix derived from
//! [`KitRequest::namespace`] (see the example on [`ObjectStoreConformance`]). Keys carry no
//! special prefix of the kit's own.
//!
//! What the contract leaves open is not checked: whether writing identical content again keeps
//! the etag (content-hash etags do, generation etags do not; either way `put` reports the
//! current one, which is checked), whether a store reports `last_modified` at all (when it does,
//! it must be the time of the latest write, which is checked), and whether a key may be both an
//! object and the prefix of others (`a` and `a/b`; file-backed stores refuse it, so no
//! obligation writes such a pair).
//!
//! A kit can run single obligations directly, here on a deliberately flawed stand-in driver.
//! In a driver crate's tests, run them all with [`objectstore_conformance!`](crate::objectstore_conformance)
//! instead.
//!
//! ```
//! use sandloom_conformance::objectstore::ObjectStoreConformance;
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
//! # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreOps, ObjectStoreProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct VoidStore;
//! # impl ObjectStoreOps for VoidStore {
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

use crate::KitRequest;
use crate::harness::{Kit, Tolerance};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

mod concurrency;
mod content;
mod key_rule;
mod keys;
mod limits;
mod listing;
mod secrets;
mod stopped;
mod support;

use concurrency::{
    concurrent_put_if_absent_has_one_winner, concurrent_put_if_match_has_one_winner,
    concurrent_puts_and_deletes_lose_nothing, concurrent_puts_lose_nothing,
    empty_objects_meet_put_conditions, put_if_absent_creates_only_once,
    put_if_match_compares_etags,
};
use content::{
    binary_objects_round_trip_exactly, delete_removes_and_is_idempotent, empty_object_round_trips,
    etag_tracks_content, large_object_round_trips, metadata_follows_the_latest_write,
    metadata_reports_key_and_size, missing_object_is_not_found, put_is_atomic_for_readers,
    put_overwrites, rewriting_identical_content_reports_the_current_etag,
};
use key_rule::one_key_rule_for_every_operation;
use keys::{
    invalid_keys_are_refused, near_identical_keys_are_independent, unusual_keys_round_trip,
};
use limits::{objects_and_their_metadata_stay_until_changed, objects_at_and_past_the_size_limit};
use listing::{
    emptied_prefix_lists_one_empty_page, list_default_page_size_is_bounded, list_filters_by_prefix,
    list_is_in_ascending_byte_order, list_limit_of_zero_is_invalid_input,
    list_next_only_when_more_follows, list_pages_follow_next_to_the_end,
    list_starts_strictly_after_start_after, listing_while_deleting_never_fails,
};
use secrets::secrets_never_show;
use stopped::operations_after_stop_fail_with_stopped;

/// The conformance kit of the `objectstore` contract. See [`OBLIGATIONS`] for what it holds a
/// driver to; run it with [`objectstore_conformance!`](crate::objectstore_conformance).
///
/// Each obligation expects an empty store of its own. A driver whose instances share a server
/// (a bucket, a database) must derive a fresh bucket or key prefix from
/// [`KitRequest::namespace`], unique per obligation and process:
///
/// ```
/// # use sandloom_conformance::objectstore::ObjectStoreConformance;
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

/// What the `objectstore` kit's obligations are given besides the instance: the declared timing
/// [`Tolerance`] (how far an object's reported `last_modified` may be from the `put` that wrote it), set with the kit's
/// [`tolerance`](ObjectStoreConformance::tolerance) method.
///
/// ```
/// use sandloom_conformance::objectstore::ObjectStoreSettings;
/// use sandloom_conformance::Tolerance;
/// assert_eq!(ObjectStoreSettings::default().tolerance(), Tolerance::DEFAULT);
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ObjectStoreSettings {
    tolerance: Tolerance,
}

impl ObjectStoreSettings {
    /// The declared timing tolerance.
    ///
    /// ```
    /// use sandloom_conformance::objectstore::ObjectStoreSettings;
    /// let tolerance = ObjectStoreSettings::default().tolerance().get();
    /// assert!(tolerance < std::time::Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// The tolerance as a duration, for the obligations' bounds.
    pub(crate) fn late(&self) -> std::time::Duration {
        self.tolerance.get()
    }
}

impl<T: ObjectStoreProvider> Kit<T, ObjectStoreSettings> {
    /// A kit that builds each instance from the options `options` returns, given the
    /// [`KitRequest`] of that instance.
    ///
    /// ```
    /// use sandloom_conformance::objectstore::ObjectStoreConformance;
    /// use sandloom_conformance::KitRequest;
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
    /// # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreOps, ObjectStoreProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct VoidStore;
    /// # impl ObjectStoreOps for VoidStore {
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
        Kit::build::<sandloom_driverkit::objectstore::ObjectStoreCapability>(
            obligations::<T>(),
            options,
            ObjectStoreSettings::default(),
        )
    }

    /// Widen the timing tolerance for a driver on a server (default [`Tolerance::DEFAULT`],
    /// at most [`Tolerance::MAX`]: above it, every obligation fails saying so). The
    /// tolerance is how far an object's reported `last_modified` may be from the `put` that wrote it.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use sandloom_conformance::objectstore::ObjectStoreConformance;
    /// # fn kit<T: sandloom_driverkit::objectstore::ObjectStoreProvider>(options: T::Options)
    /// # where T::Options: Clone + Send + Sync {
    /// // For a store whose `last_modified` is kept to the second:
    /// let kit = ObjectStoreConformance::<T>::new(move |_request| options.clone())
    ///     .tolerance(Duration::from_millis(1500));
    /// # }
    /// ```
    /// In a driver crate's `tests/conformance.rs`, as a builder method of the test macro:
    /// `objectstore_conformance!(MyDriver, |request| …, .tolerance(Duration::from_millis(1500)));`.
    #[must_use]
    pub fn tolerance(self, late: std::time::Duration) -> Self {
        self.declare_tolerance(late, |settings| &mut settings.tolerance)
    }
}

crate::define_kit! {
    /// Run the whole `objectstore` kit from a driver crate's tests: one `#[test]` per obligation,
    /// in a module `objectstore_conformance`, or in a module of the name given before a colon (to
    /// run the kit for several drivers or configurations in one file).
    ///
    /// ```
    /// // tests/conformance.rs of a driver crate whose [dev-dependencies] name
    /// // sandloom-conformance.
    /// use sandloom_driverkit::NoOptions;
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::objectstore::{validate_key, ListOptions, ListPage, ObjectMeta};
    /// # use sandloom_driverkit::objectstore::{ObjectStore, ObjectStoreOps, ObjectStoreProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraError, InfraResult};
    /// # /// Stores nothing: a stand-in for a driver under test.
    /// # pub struct VoidStore;
    /// # impl ObjectStoreOps for VoidStore {
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
    /// sandloom_conformance::objectstore_conformance!(MyStore, |_request| NoOptions {});
    /// // Again, with its tests in a module `second_run` instead of `objectstore_conformance`:
    /// sandloom_conformance::objectstore_conformance!(second_run: MyStore, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    macro objectstore_conformance;
    kit crate::objectstore::ObjectStoreConformance::new;
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
    ///   its exact size, and a `last_modified` they report is the time of the `put`, give or take
    ///   the declared tolerance.
    /// - `etag_tracks_content`: declared `etag`: `put`, `head` and `list` report the same non-empty
    ///   etag, `head` reports it again unchanged, and a new content of the same size gets a new
    ///   etag; undeclared: no etag anywhere.
    /// - `rewriting_identical_content_reports_the_current_etag`: declared `etag`: writing the same
    ///   bytes again (twice) may keep the etag or give a new one, but `put` reports the one `head`
    ///   and `list` then report; with `conditional_put` too, `IfMatch` of that etag writes, and
    ///   `IfMatch` of a replaced etag answers `Conflict`.
    /// - `unusual_keys_round_trip`: keys with spaces, non-ASCII letters (NFC and NFD forms distinct),
    ///   URL-special characters, dotted names that are not `.`/`..` segments, case-only differences,
    ///   more than ten segments and 800+ bytes, and keys that are each other's percent- or
    ///   form-encoding (`a b`, `a%20b`, `a+b`, `a%2Bb`, `a%2Fb`, `a/b`) are distinct, exact, and
    ///   listed as written; with `conditional_put`, `IfAbsent` of each answers `Conflict`; after
    ///   every other one is deleted, `get` and `head` of those answer `NotFound`, and the rest
    ///   are intact and alone in the listing.
    /// - `invalid_keys_are_refused`: empty, absolute, `.`/`..`-segment, empty-segment,
    ///   trailing-slash, backslash and NUL keys answer `InvalidInput` from `put`, `get`, `head`,
    ///   `delete` (and `put_if` when declared); a list prefix with a NUL too; afterwards the store
    ///   holds only the object written before, unchanged, and nothing escaped the scratch directory.
    /// - `one_key_rule_for_every_operation`: keys `validate_key` refuses for their length alone (a
    ///   3,000-segment key, a 256-byte segment, 1,025+ bytes) answer `InvalidInput` from `put`,
    ///   `get`, `head`, `delete` (and `put_if` when declared); keys at the edge of what backends
    ///   hold (the longest key and segment, control characters, reserved names) are refused by
    ///   every operation or by none, and given back exactly when accepted (by `get`, and by a
    ///   `list` whose prefix is the key itself, even the longest); list prefixes that
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
    ///   `DEFAULT_PAGE_SIZE` (1000) and following `next` yields all 1001; so does a limit of
    ///   1,000, 1,001 or 5,000 (a page may hold fewer than a limit above the default).
    /// - `list_limit_of_zero_is_invalid_input`: `list` with a `limit` of 0 answers `InvalidInput`,
    ///   on an empty store and a filled one, with and without a prefix and `start_after`.
    /// - `list_next_only_when_more_follows`: a page announces `next` only when more objects with
    ///   the prefix follow: 6 objects with limits 6, 7, 3, 2 and 1 take exactly 1, 1, 2, 3 and 6
    ///   pages (no empty last page), the last 3 after `start_after` one page, none after the last
    ///   key one empty page, and keys beyond the prefix are no reason to announce more.
    /// - `concurrent_puts_lose_nothing`: 16 tasks on several threads each write 16 keys at once;
    ///   every object is there with its content and listed once.
    /// - `concurrent_puts_and_deletes_lose_nothing`: 8 tasks each write a key, then delete it while
    ///   writing a sibling, in 8 shared prefixes: every `put` and `delete` succeeds, and exactly the
    ///   siblings remain (a store of directories must not lose a write to a directory that a
    ///   concurrent `delete` removes as empty); then 4 pairs of tasks each write, read back and
    ///   delete their own key in a prefix they share, 200 times: every call succeeds, so a
    ///   write into a prefix that the other task's `delete` is emptying is never lost.
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
    /// - `near_identical_keys_are_independent`: keys that differ from `near/key` only by case, a
    ///   trailing or leading space, a trailing dot, a byte more or less, and a key in its NFC and
    ///   NFD forms are distinct in `put`, `get`, `head`, `delete` and `list` (a prefix lists the
    ///   keys that start with it as strings); deleting one leaves the others as they were; with
    ///   `conditional_put`, `IfAbsent` sees only the exact key (it creates `near/key` beside
    ///   `near/key2` and `near/key `, and refuses every existing one), and with `etag` too,
    ///   `IfMatch` of a near key's etag answers `Conflict`.
    /// - `metadata_follows_the_latest_write`: after an overwrite, after `delete` and `put` again,
    ///   and after `put_if` (when `conditional_put` and `etag` are declared), each more than twice
    ///   the declared tolerance after the write before, `head` and `list` report the latest
    ///   write's size and etag, and a `last_modified` they report is that write's time (give or
    ///   take the tolerance), not an earlier one's.
    /// - `emptied_prefix_lists_one_empty_page`: a `list` of an empty store, of a prefix once every
    ///   object under it is deleted (limits none, 1, 2 and 10; `start_after` the prefix itself or
    ///   a deleted key) and of the store once everything is deleted answers one empty page with
    ///   `next` `None`, while the keys beside the prefix stay listed.
    /// - `empty_objects_meet_put_conditions`: declared `conditional_put`: `IfAbsent` of an empty
    ///   object creates it (size 0, listed), and an empty object is present for `IfAbsent`
    ///   (`Conflict`, with empty or other content); with `etag` too, `IfMatch` of an empty
    ///   object's etag writes, `IfMatch` can write an empty object, and `put_if` reports the
    ///   etag `head` then reports; undeclared: `Unsupported`.
    /// - `concurrent_put_if_match_has_one_winner`: declared `conditional_put` and `etag`: in each
    ///   of 8 rounds, 16 `IfMatch` writes of one key from 4 tasks at once, all with the etag the
    ///   previous round's winner reported: exactly one succeeds, the others answer `Conflict`,
    ///   the object holds the winner's content, and `head` reports the new etag the winner
    ///   reported; `conditional_put` undeclared: `Unsupported`.
    /// - `listing_while_deleting_never_fails`: in 3 rounds, 4 tasks page through 96 objects
    ///   (limit 7) again and again while 4 others delete 60 of them, some prefixes whole: no `list` fails, no
    ///   listing loops (each `next` moves forward), every listed key was written and comes once
    ///   and in order with its size, and every object no one deleted is in every listing; at the
    ///   end, exactly those are listed. A page may be short or empty while objects vanish.
    /// - `objects_at_and_past_the_size_limit`: a one-byte key and object round-trip; an object
    ///   of exactly 16 MiB is stored and read back exactly with its size; one of 16 MiB and 1
    ///   byte is stored whole or refused with `InvalidInput`, writing nothing, never cut to fit.
    /// - `objects_and_their_metadata_stay_until_changed`: an object and an empty object left
    ///   alone for 3 s plus the declared tolerance, longer than every wait of the other
    ///   obligations, are still there with their bytes, and `head` and `list` report the size
    ///   and etag `put` reported and a `last_modified` (when reported) that is still the time of
    ///   the `put`, give or take the declared tolerance, not of a read.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, `put`, `get`, `head`, `delete`,
    ///   `list` (and `put_if` when declared) answer `Stopped`.
    /// - `secrets_never_show`: the secrets the kit plants itself in every `writeOnly` option
    ///   of the options' JSON Schema (every `Secret` and `SecretUrl`, with no declaration), on
    ///   an instance it builds from them, and the values declared with
    ///   [`Kit::secrets`](crate::Kit::secrets): none shows in the options' `Debug`, the
    ///   driver's `Debug`, or the `Display` or `Debug` of the errors of `validate`,
    ///   `from_options`, `start`, `stop` and of the contract's operations given an empty key or
    ///   name (`InvalidInput`); the declared ones also after `stop` (`Stopped`) and on an
    ///   instance pointed at an unreachable address. Nothing to check for options with no
    ///   `writeOnly` option and no declared secret.
    ///
    /// The concurrent obligations run writes at once both across threads and within one task, so a
    /// driver that checks then writes, or reads, modifies and writes back, fails every time, not by
    /// chance. Every listing an obligation makes is also held to the general listing rules (page
    /// size, prefix, strictly ascending keys, no empty page announcing more).
    ///
    /// ```
    /// use sandloom_conformance::objectstore::OBLIGATIONS;
    ///
    /// assert_eq!(OBLIGATIONS.len(), 35);
    /// assert_eq!(OBLIGATIONS[0], "missing_object_is_not_found");
    /// assert_eq!(OBLIGATIONS.last(), Some(&"secrets_never_show"));
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
        rewriting_identical_content_reports_the_current_etag,
        unusual_keys_round_trip,
        invalid_keys_are_refused,
        one_key_rule_for_every_operation,
        delete_removes_and_is_idempotent,
        list_filters_by_prefix,
        list_is_in_ascending_byte_order,
        list_pages_follow_next_to_the_end,
        list_starts_strictly_after_start_after,
        list_default_page_size_is_bounded,
        list_limit_of_zero_is_invalid_input,
        list_next_only_when_more_follows,
        concurrent_puts_lose_nothing,
        concurrent_puts_and_deletes_lose_nothing,
        put_if_absent_creates_only_once,
        put_if_match_compares_etags,
        concurrent_put_if_absent_has_one_winner,
        near_identical_keys_are_independent,
        metadata_follows_the_latest_write,
        emptied_prefix_lists_one_empty_page,
        empty_objects_meet_put_conditions,
        concurrent_put_if_match_has_one_winner,
        listing_while_deleting_never_fails,
        objects_at_and_past_the_size_limit,
        objects_and_their_metadata_stay_until_changed,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}

#[cfg(test)]
mod tests {
    use super::keys::{ESCAPING_KEYS, INVALID_KEYS, unusual_keys};
    use super::{OBLIGATIONS, key_rule};

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
        let source = include_str!("mod.rs");
        for name in OBLIGATIONS {
            assert!(source.contains(&format!("/// - `{name}`:")), "{name}");
        }
    }
}
