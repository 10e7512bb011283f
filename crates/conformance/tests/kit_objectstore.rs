//! The objectstore kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation, with
//! every feature declared and with none.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

use sandloom_conformance::Kit;
use sandloom_conformance::objectstore::ObjectStoreConformance;
use sandloom_driverkit::objectstore::{
    CONDITIONAL_PUT, DEFAULT_PAGE_SIZE, ETAG, ListOptions, ListPage, MAX_KEY_BYTES,
    MAX_SEGMENT_BYTES, NAME, ObjectMeta, ObjectStoreOps, ObjectStoreProvider, PutCondition,
    validate_key, validate_prefix,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};

/// One way to be wrong, each named for what it does. `None`, `NoFeatures` and `NoEtag` are not
/// flaws: the reference with all features, with none, and with `conditional_put` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    /// Refuses a list prefix that cannot grow into a longer key, even when it is a key itself
    /// (the longest key, a last segment of the longest length).
    PrefixNeedsRoomToGrow,
    NoFeatures,
    NoEtag,
    MissingIsEmpty,
    /// Reports `last_modified` an hour behind (local time taken for UTC).
    LastModifiedInAnotherZone,
    /// Shows its secret access key in the error of an empty key.
    SecretInErrors,
    TruncatesAtNul,
    DropsEmptyObjects,
    TruncatesLargeObjects,
    PanicsOnLargeObjects,
    FirstWriteWins,
    OverwriteKeepsTail,
    PutNotAtomic,
    HeadSizeWrong,
    EtagConstant,
    EtagWithoutDeclaring,
    FoldsNonAsciiKeys,
    RefusesDotsInNames,
    AcceptsDotDotKeys,
    OnlyPutChecksLength,
    ListAcceptsAnyPrefix,
    DeleteOfMissingFails,
    DeleteByPrefix,
    DeleteLeavesDirectories,
    PrefixTrimsTrailingSlash,
    PrefixMatchesWholeSegments,
    ListUnsorted,
    SortsSlashFirst,
    SkipsSecondPage,
    IgnoresLimit,
    StartAfterInclusive,
    StartAfterMustExist,
    DefaultPageUnbounded,
    LosesConcurrentWrites,
    PutFailsBesideDelete,
    IfAbsentOverwrites,
    PutIfWithoutDeclaring,
    IfMatchIgnoresEtag,
    RacyIfAbsent,
    WorksAfterStop,
    LimitZeroIsDefault,
    NextOnFullPage,
    RewriteReportsAnotherEtag,
    /// Compares the etag, then writes after a yield: racing `IfMatch` writes all win.
    RacyIfMatch,
    /// Checks conditions on the content length, so an empty object counts as absent.
    EmptyCountsAsAbsent,
    /// Trims trailing spaces from keys (as some file systems do).
    TrimsKeys,
    /// `IfAbsent` asks whether any key starts with the key (a listing by prefix).
    IfAbsentByPrefix,
    /// Reports the time of the first write of a key as its `last_modified`, kept past `delete`.
    LastModifiedOfFirstWrite,
    /// Lists the size, etag and time of the first write of a key (a stale listing index).
    ListMetaOfFirstWrite,
    /// Keeps deleted keys as tombstones, and a page with none but tombstones announces more.
    EmptiedPrefixAnnouncesMore,
    /// Makes a key's "directory", then moves the object into it: a `delete` that empties and
    /// removes the directory in between makes the write fail (objectstore.fs's rename race).
    PutLosesVanishingPrefix,
    /// Reads a page's names, then each object: one deleted in between fails the whole `list`.
    ListFailsOnVanishedKey,
    /// Percent-decodes the key it deletes (a URL built without encoding it): deleting `a%2Fb`
    /// deletes `a/b`.
    DeleteDecodesKeys,
    /// Cuts objects larger than 16 MiB to their first 16 MiB.
    TruncatesObjectsPastTheLimit,
    /// Forgets an object 2 s after its last write (a lifetime of its own).
    ObjectsExpire,
    /// Reports the time of the read as `last_modified` (a file's access time, say).
    LastModifiedIsTheRead,
    /// Caps a page at `DEFAULT_PAGE_SIZE` for a larger limit, and then announces no more.
    LimitAboveDefaultEndsTheListing,
}

/// The largest object the contract has every driver store in one `put`.
const SIZE_LIMIT: usize = 16 * 1024 * 1024;
/// What `ObjectsExpire` keeps an object for.
const LIFETIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Beyond this size, the large-object flaws strike.
const LARGE: usize = 4 * 1024 * 1024;

struct Reference {
    flaw: Flaw,
    etags: bool,
    conditional: bool,
    objects: Mutex<BTreeMap<String, Bytes>>,
    /// `DeleteLeavesDirectories`: the "directories" of deleted keys, which stay in the way.
    directories: Mutex<BTreeSet<String>>,
    /// `PutFailsBesideDelete`: deletes under way.
    deleting: AtomicUsize,
    /// When each key was written, first and last, and what its first write held.
    stamps: Mutex<BTreeMap<String, Stamp>>,
    /// `EmptiedPrefixAnnouncesMore`: deleted keys.
    tombstones: Mutex<BTreeSet<String>>,
    stopped: AtomicBool,
}

/// When a key was written, first and last, and what its first write held.
struct Stamp {
    first_at: SystemTime,
    first: Bytes,
    last_at: SystemTime,
}

fn etag_of(data: &[u8]) -> String {
    let mut hasher = DefaultHasher::new();
    data.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

impl Reference {
    fn map(&self) -> MutexGuard<'_, BTreeMap<String, Bytes>> {
        if self.flaw == Flaw::ObjectsExpire {
            let now = SystemTime::now();
            let expired: Vec<String> = self
                .stamps
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, stamp)| stamp.last_at + LIFETIME <= now)
                .map(|(key, _)| key.clone())
                .collect();
            let mut map = self.objects.lock().unwrap();
            for key in expired {
                map.remove(&key);
            }
            return map;
        }
        self.objects.lock().unwrap()
    }

    fn running(&self) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) && self.flaw != Flaw::WorksAfterStop {
            return Err(InfraError::stopped(NAME));
        }
        Ok(())
    }

    /// The key as stored, or why it is refused.
    fn key(&self, key: &str) -> InfraResult<String> {
        self.running()?;
        if key.is_empty() && self.flaw == Flaw::SecretInErrors {
            return Err(InfraError::invalid_input(
                NAME,
                format!("empty key (secret_access_key {SECRET})"),
            ));
        }
        self.key_checked(key, true)
    }

    /// The key of a read or a delete: as [`Self::key`], except that `OnlyPutChecksLength`
    /// does not check the length here (as a file store that only fails where its file system
    /// does: `NotFound` for `get`, fine for `delete`).
    fn read_key(&self, key: &str) -> InfraResult<String> {
        self.running()?;
        self.key_checked(key, false)
    }

    fn key_checked(&self, key: &str, writing: bool) -> InfraResult<String> {
        let too_long =
            key.len() > MAX_KEY_BYTES || key.split('/').any(|s| s.len() > MAX_SEGMENT_BYTES);
        match self.flaw {
            Flaw::OnlyPutChecksLength if !writing && too_long => {}
            Flaw::AcceptsDotDotKeys if key.contains("..") => {}
            Flaw::RefusesDotsInNames if key.contains("..") => {
                return Err(InfraError::invalid_input(NAME, "no `..` in keys"));
            }
            _ => validate_key(key)?,
        }
        if self.flaw == Flaw::TrimsKeys {
            return Ok(key.trim_end_matches(' ').to_owned());
        }
        if self.flaw == Flaw::FoldsNonAsciiKeys {
            return Ok(key
                .chars()
                .map(|c| if c.is_ascii() { c } else { '?' })
                .collect());
        }
        Ok(key.to_owned())
    }

    /// Record a write of `key` now.
    fn stamp(&self, key: &str, data: &Bytes) {
        let now = SystemTime::now();
        let mut stamps = self.stamps.lock().unwrap();
        let stamp = stamps.entry(key.to_owned()).or_insert_with(|| Stamp {
            first_at: now,
            first: data.clone(),
            last_at: now,
        });
        stamp.last_at = now;
    }

    fn modified(&self, key: &str) -> SystemTime {
        let stamps = self.stamps.lock().unwrap();
        match stamps.get(key) {
            Some(stamp) if self.flaw == Flaw::LastModifiedOfFirstWrite => stamp.first_at,
            Some(_) if self.flaw == Flaw::LastModifiedIsTheRead => SystemTime::now(),
            Some(stamp) => stamp.last_at,
            None => SystemTime::now(),
        }
    }

    /// The metadata `list` reports for `key` holding `data`.
    fn listed(&self, key: &str, data: &[u8]) -> ObjectMeta {
        let first = (self.flaw == Flaw::ListMetaOfFirstWrite)
            .then(|| {
                let stamps = self.stamps.lock().unwrap();
                stamps
                    .get(key)
                    .map(|stamp| (stamp.first.clone(), stamp.first_at))
            })
            .flatten();
        match first {
            Some((first, at)) => self.meta(key, &first).with_last_modified(at),
            None => self.meta(key, data),
        }
    }

    fn meta(&self, key: &str, data: &[u8]) -> ObjectMeta {
        let mut meta =
            ObjectMeta::new(key, data.len() as u64).with_last_modified(self.modified(key));
        if self.flaw == Flaw::LastModifiedInAnotherZone {
            meta = meta.with_last_modified(
                std::time::SystemTime::now() - std::time::Duration::from_hours(1),
            );
        }
        match self.flaw {
            Flaw::EtagConstant => meta.with_etag("\"1\""),
            _ if self.etags => meta.with_etag(etag_of(data)),
            _ => meta,
        }
    }

    fn shape(&self, data: Bytes) -> Bytes {
        match self.flaw {
            Flaw::TruncatesAtNul => {
                let end = data.iter().position(|b| *b == 0).unwrap_or(data.len());
                data.slice(..end)
            }
            Flaw::TruncatesLargeObjects if data.len() > LARGE => data.slice(..LARGE),
            Flaw::TruncatesObjectsPastTheLimit if data.len() > SIZE_LIMIT => {
                data.slice(..SIZE_LIMIT)
            }
            Flaw::PanicsOnLargeObjects if data.len() > LARGE => panic!("object too large"),
            _ => data,
        }
    }

    async fn store(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        let key = self.key(key)?;
        let mut data = self.shape(data);
        self.stamp(&key, &data);
        let mut meta = self.meta(&key, &data);
        if self.flaw == Flaw::RewriteReportsAnotherEtag && self.map().get(&key) == Some(&data) {
            // A generation store that reports the generation it would write, not the one kept.
            meta = meta.with_etag(format!("{}-next", etag_of(&data)));
        }
        match self.flaw {
            Flaw::DeleteLeavesDirectories if self.directories.lock().unwrap().contains(&key) => {
                return Err(InfraError::conflict(NAME, "a directory is in the way"));
            }
            Flaw::PutFailsBesideDelete if self.deleting.load(Ordering::Acquire) > 0 => {
                return Err(InfraError::not_found(NAME, "the directory vanished"));
            }
            Flaw::PutLosesVanishingPrefix => {
                if let Some((parent, _)) = key.rsplit_once('/') {
                    self.directories.lock().unwrap().insert(parent.to_owned());
                    tokio::task::yield_now().await;
                    if !self.directories.lock().unwrap().contains(parent) {
                        return Err(InfraError::not_found(NAME, "the directory vanished"));
                    }
                }
            }
            Flaw::PutNotAtomic => {
                self.map().insert(key.clone(), data.slice(..data.len() / 2));
                tokio::task::yield_now().await;
            }
            Flaw::DropsEmptyObjects if data.is_empty() => return Ok(meta),
            Flaw::FirstWriteWins if self.map().contains_key(&key) => return Ok(meta),
            Flaw::OverwriteKeepsTail => {
                if let Some(old) = self.map().get(&key)
                    && old.len() > data.len()
                {
                    data = [&data[..], &old[data.len()..]].concat().into();
                }
            }
            Flaw::LosesConcurrentWrites => {
                let mut copy = self.map().clone();
                tokio::task::yield_now().await;
                copy.insert(key, data);
                *self.map() = copy;
                return Ok(meta);
            }
            _ => {}
        }
        self.map().insert(key, data);
        Ok(meta)
    }

    fn conditional_store(
        &self,
        key: String,
        data: Bytes,
        condition: &PutCondition,
    ) -> InfraResult<ObjectMeta> {
        let mut map = self.map();
        let current = map
            .get(&key)
            .filter(|data| !(self.flaw == Flaw::EmptyCountsAsAbsent && data.is_empty()));
        let by_prefix = self.flaw == Flaw::IfAbsentByPrefix
            && map.keys().any(|stored| stored.starts_with(&key));
        let holds = match (condition, current) {
            (PutCondition::IfAbsent, None) if by_prefix => false,
            (PutCondition::IfAbsent, None) => true,
            (PutCondition::IfAbsent, Some(_)) => self.flaw == Flaw::IfAbsentOverwrites,
            (PutCondition::IfMatch(_), None) => false,
            (PutCondition::IfMatch(etag), Some(current)) => {
                self.flaw == Flaw::IfMatchIgnoresEtag || *etag == etag_of(current)
            }
            (_, _) => return Err(InfraError::unsupported(NAME, "put_if", "this condition")),
        };
        if !holds {
            return Err(InfraError::conflict(NAME, "the condition does not hold"));
        }
        self.stamp(&key, &data);
        let meta = self.meta(&key, &data);
        map.insert(key, data);
        Ok(meta)
    }

    fn page_limit(&self, options: &ListOptions) -> InfraResult<usize> {
        match (options.limit, self.flaw) {
            (_, Flaw::IgnoresLimit) | (None, Flaw::DefaultPageUnbounded) => Ok(usize::MAX),
            (Some(limit), Flaw::LimitAboveDefaultEndsTheListing) if limit > DEFAULT_PAGE_SIZE => {
                Ok(DEFAULT_PAGE_SIZE)
            }
            (None, _) | (Some(0), Flaw::LimitZeroIsDefault) => Ok(DEFAULT_PAGE_SIZE),
            (Some(0), _) => Err(InfraError::invalid_input(NAME, "limit 0")),
            (Some(limit), _) => Ok(limit),
        }
    }

    fn matches(&self, key: &str, prefix: &str) -> bool {
        match self.flaw {
            Flaw::PrefixTrimsTrailingSlash => key.starts_with(prefix.trim_end_matches('/')),
            Flaw::PrefixMatchesWholeSegments if !prefix.is_empty() && !prefix.ends_with('/') => {
                key == prefix || key.starts_with(&format!("{prefix}/"))
            }
            _ => key.starts_with(prefix),
        }
    }

    fn after(&self, key: &str, start_after: Option<&str>, map: &BTreeMap<String, Bytes>) -> bool {
        match (start_after, self.flaw) {
            (None, _) => true,
            (Some(after), Flaw::StartAfterInclusive) => key >= after,
            (Some(after), Flaw::StartAfterMustExist) if !map.contains_key(after) => true,
            (Some(after), _) => key > after,
        }
    }

    fn order(&self, objects: &mut [ObjectMeta]) {
        match self.flaw {
            Flaw::ListUnsorted => objects.reverse(),
            Flaw::SortsSlashFirst => objects.sort_by_key(|o| o.key.replace('/', "\0")),
            _ => {}
        }
    }
}

impl ObjectStoreOps for Reference {
    async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        self.store(key, data).await
    }

    async fn get(&self, key: &str) -> InfraResult<Bytes> {
        let key = self.read_key(key)?;
        match self.map().get(&key) {
            Some(data) => Ok(data.clone()),
            None if self.flaw == Flaw::MissingIsEmpty => Ok(Bytes::new()),
            None => Err(InfraError::not_found(NAME, format!("no object {key:?}"))),
        }
    }

    async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        let key = self.read_key(key)?;
        match self.map().get(&key) {
            Some(data) => {
                let mut meta = self.meta(&key, data);
                if self.flaw == Flaw::HeadSizeWrong {
                    meta.size += 1;
                }
                Ok(meta)
            }
            None if self.flaw == Flaw::MissingIsEmpty => Ok(self.meta(&key, b"")),
            None => Err(InfraError::not_found(NAME, format!("no object {key:?}"))),
        }
    }

    async fn delete(&self, key: &str) -> InfraResult<()> {
        let mut key = self.read_key(key)?;
        if self.flaw == Flaw::DeleteDecodesKeys {
            key = key
                .replace("%20", " ")
                .replace("%2B", "+")
                .replace("%2F", "/");
        }
        if self.flaw == Flaw::PutFailsBesideDelete {
            self.deleting.fetch_add(1, Ordering::AcqRel);
            tokio::task::yield_now().await;
            self.deleting.fetch_sub(1, Ordering::AcqRel);
        }
        if self.flaw == Flaw::DeleteLeavesDirectories
            && let Some((directory, _)) = key.rsplit_once('/')
        {
            self.directories
                .lock()
                .unwrap()
                .insert(directory.to_owned());
        }
        if self.flaw != Flaw::LastModifiedOfFirstWrite {
            self.stamps.lock().unwrap().remove(&key);
        }
        if self.flaw == Flaw::EmptiedPrefixAnnouncesMore {
            self.tombstones.lock().unwrap().insert(key.clone());
        }
        let mut map = self.map();
        if self.flaw == Flaw::DeleteByPrefix {
            map.retain(|stored, _| !stored.starts_with(&key));
            return Ok(());
        }
        if self.flaw == Flaw::PutLosesVanishingPrefix
            && let Some((parent, _)) = key.rsplit_once('/')
        {
            let inside = format!("{parent}/");
            if !map
                .keys()
                .any(|stored| *stored != key && stored.starts_with(&inside))
            {
                self.directories.lock().unwrap().remove(parent);
            }
        }
        match map.remove(&key) {
            None if self.flaw == Flaw::DeleteOfMissingFails => {
                Err(InfraError::not_found(NAME, format!("no object {key:?}")))
            }
            _ => Ok(()),
        }
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> InfraResult<ListPage> {
        self.running()?;
        if self.flaw == Flaw::ListAcceptsAnyPrefix {
            // Only what the store cannot hold; `../` or `/` list as empty pages.
            if prefix.contains('\0') {
                return Err(InfraError::invalid_input(NAME, "NUL in the prefix"));
            }
        } else {
            validate_prefix(prefix)?;
        }
        if self.flaw == Flaw::PrefixNeedsRoomToGrow && !prefix.is_empty() {
            validate_key(&format!("{prefix}x"))?;
        }
        let limit = self.page_limit(&options)?;
        if self.flaw == Flaw::ListFailsOnVanishedKey {
            let names: Vec<String> = self
                .map()
                .keys()
                .filter(|key| key.starts_with(prefix))
                .take(limit)
                .cloned()
                .collect();
            tokio::task::yield_now().await;
            if let Some(gone) = names.iter().find(|key| !self.map().contains_key(*key)) {
                return Err(InfraError::not_found(NAME, format!("no object {gone:?}")));
            }
        }
        let map = self.map();
        let start_after = options.start_after.as_deref();
        let keys: Vec<&String> = map
            .keys()
            .filter(|key| self.matches(key, prefix) && self.after(key, start_after, &map))
            .collect();
        let mut objects: Vec<ObjectMeta> = keys
            .iter()
            .take(limit)
            .map(|key| self.listed(key, &map[*key]))
            .collect();
        let mut next = match self.flaw {
            // Announces more whenever the page is full, whether or not anything follows.
            Flaw::NextOnFullPage => (keys.len() >= limit).then(|| keys[limit - 1].clone()),
            _ => (keys.len() > limit).then(|| keys[limit - 1].clone()),
        };
        if self.flaw == Flaw::LimitAboveDefaultEndsTheListing
            && options.limit.is_some_and(|limit| limit > DEFAULT_PAGE_SIZE)
        {
            next = None;
        }
        if self.flaw == Flaw::SkipsSecondPage && start_after.is_none() && next.is_some() {
            next = keys.get(2 * limit - 1).map(|key| (*key).clone());
        }
        if objects.is_empty() && self.flaw == Flaw::EmptiedPrefixAnnouncesMore {
            // The tombstones fill the page the store read, so it announces more.
            next = self
                .tombstones
                .lock()
                .unwrap()
                .iter()
                .find(|key| key.starts_with(prefix) && self.after(key, start_after, &map))
                .cloned();
        }
        self.order(&mut objects);
        Ok(ListPage::new(objects, next))
    }

    async fn put_if(
        &self,
        key: &str,
        data: Bytes,
        condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        if !self.conditional {
            return Err(InfraError::unsupported(NAME, "put_if", CONDITIONAL_PUT));
        }
        let key = self.key(key)?;
        if self.flaw == Flaw::RacyIfMatch
            && let PutCondition::IfMatch(etag) = &condition
        {
            let holds = self
                .map()
                .get(&key)
                .is_some_and(|data| etag_of(data) == *etag);
            tokio::task::yield_now().await;
            if !holds {
                return Err(InfraError::conflict(NAME, "the etag does not match"));
            }
            self.stamp(&key, &data);
            let meta = self.meta(&key, &data);
            self.map().insert(key, data);
            return Ok(meta);
        }
        if self.flaw == Flaw::RacyIfAbsent && condition == PutCondition::IfAbsent {
            let present = self.map().contains_key(&key);
            tokio::task::yield_now().await;
            if present {
                return Err(InfraError::conflict(NAME, "exists"));
            }
            let meta = self.meta(&key, &data);
            self.map().insert(key, data);
            return Ok(meta);
        }
        self.conditional_store(key, data, &condition)
    }
}

impl Driver for Reference {
    type Options = Flaw;

    fn supported_features() -> &'static [&'static str] {
        &[ETAG, CONDITIONAL_PUT]
    }

    fn features_for(flaw: &Flaw) -> Vec<&'static str> {
        match flaw {
            Flaw::NoFeatures => vec![],
            Flaw::NoEtag | Flaw::EtagWithoutDeclaring => vec![CONDITIONAL_PUT],
            Flaw::PutIfWithoutDeclaring => vec![ETAG],
            _ => vec![ETAG, CONDITIONAL_PUT],
        }
    }

    fn from_options(flaw: Flaw) -> Result<Self, DriverError> {
        let features = Self::features_for(&flaw);
        Ok(Self {
            flaw,
            etags: features.contains(&ETAG) || flaw == Flaw::EtagWithoutDeclaring,
            conditional: features.contains(&CONDITIONAL_PUT) || flaw == Flaw::PutIfWithoutDeclaring,
            objects: Mutex::new(BTreeMap::new()),
            directories: Mutex::new(BTreeSet::new()),
            deleting: AtomicUsize::new(0),
            stamps: Mutex::new(BTreeMap::new()),
            tombstones: Mutex::new(BTreeSet::new()),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl ObjectStoreProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

fn kit(flaw: Flaw) -> ObjectStoreConformance<Reference> {
    ObjectStoreConformance::<Reference>::new(move |_| flaw).secrets([SECRET])
}

/// The secret access key the broken driver leaks; the kit is told it is secret.
const SECRET: &str = "hunter2";

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reference")
            .field("flaw", &self.flaw)
            .finish_non_exhaustive()
    }
}

#[test]
fn the_reference_driver_passes_every_obligation() {
    for configuration in [Flaw::None, Flaw::NoFeatures, Flaw::NoEtag] {
        let failures = kit(configuration).check_all();
        assert!(failures.is_empty(), "{configuration:?}: {failures:#?}");
    }
}

/// Each flaw and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::MissingIsEmpty, "missing_object_is_not_found"),
    (Flaw::TruncatesAtNul, "binary_objects_round_trip_exactly"),
    (Flaw::DropsEmptyObjects, "empty_object_round_trips"),
    (Flaw::TruncatesLargeObjects, "large_object_round_trips"),
    (Flaw::PanicsOnLargeObjects, "large_object_round_trips"),
    (Flaw::FirstWriteWins, "put_overwrites"),
    (Flaw::OverwriteKeepsTail, "put_overwrites"),
    (Flaw::PutNotAtomic, "put_is_atomic_for_readers"),
    (Flaw::HeadSizeWrong, "metadata_reports_key_and_size"),
    (Flaw::EtagConstant, "etag_tracks_content"),
    (Flaw::EtagWithoutDeclaring, "etag_tracks_content"),
    (
        Flaw::RewriteReportsAnotherEtag,
        "rewriting_identical_content_reports_the_current_etag",
    ),
    (Flaw::FoldsNonAsciiKeys, "unusual_keys_round_trip"),
    (Flaw::RefusesDotsInNames, "unusual_keys_round_trip"),
    (Flaw::AcceptsDotDotKeys, "invalid_keys_are_refused"),
    (
        Flaw::OnlyPutChecksLength,
        "one_key_rule_for_every_operation",
    ),
    (
        Flaw::ListAcceptsAnyPrefix,
        "one_key_rule_for_every_operation",
    ),
    (
        Flaw::PrefixNeedsRoomToGrow,
        "one_key_rule_for_every_operation",
    ),
    (
        Flaw::DeleteOfMissingFails,
        "delete_removes_and_is_idempotent",
    ),
    (Flaw::DeleteByPrefix, "delete_removes_and_is_idempotent"),
    (
        Flaw::DeleteLeavesDirectories,
        "delete_removes_and_is_idempotent",
    ),
    (Flaw::PrefixTrimsTrailingSlash, "list_filters_by_prefix"),
    (Flaw::PrefixMatchesWholeSegments, "list_filters_by_prefix"),
    (Flaw::ListUnsorted, "list_is_in_ascending_byte_order"),
    (Flaw::SortsSlashFirst, "list_is_in_ascending_byte_order"),
    (Flaw::SkipsSecondPage, "list_pages_follow_next_to_the_end"),
    (Flaw::IgnoresLimit, "list_pages_follow_next_to_the_end"),
    (
        Flaw::LimitZeroIsDefault,
        "list_limit_of_zero_is_invalid_input",
    ),
    (Flaw::NextOnFullPage, "list_next_only_when_more_follows"),
    (
        Flaw::StartAfterInclusive,
        "list_starts_strictly_after_start_after",
    ),
    (
        Flaw::StartAfterMustExist,
        "list_starts_strictly_after_start_after",
    ),
    (
        Flaw::DefaultPageUnbounded,
        "list_default_page_size_is_bounded",
    ),
    (Flaw::LosesConcurrentWrites, "concurrent_puts_lose_nothing"),
    (
        Flaw::PutFailsBesideDelete,
        "concurrent_puts_and_deletes_lose_nothing",
    ),
    (Flaw::IfAbsentOverwrites, "put_if_absent_creates_only_once"),
    (
        Flaw::PutIfWithoutDeclaring,
        "put_if_absent_creates_only_once",
    ),
    (Flaw::PutIfWithoutDeclaring, "put_if_match_compares_etags"),
    (
        Flaw::PutIfWithoutDeclaring,
        "concurrent_put_if_absent_has_one_winner",
    ),
    (Flaw::IfMatchIgnoresEtag, "put_if_match_compares_etags"),
    (
        Flaw::RacyIfAbsent,
        "concurrent_put_if_absent_has_one_winner",
    ),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::LastModifiedInAnotherZone,
        "metadata_reports_key_and_size",
    ),
    (Flaw::SecretInErrors, "secrets_never_show"),
    (Flaw::TrimsKeys, "near_identical_keys_are_independent"),
    (
        Flaw::IfAbsentByPrefix,
        "near_identical_keys_are_independent",
    ),
    (
        Flaw::LastModifiedOfFirstWrite,
        "metadata_follows_the_latest_write",
    ),
    (
        Flaw::ListMetaOfFirstWrite,
        "metadata_follows_the_latest_write",
    ),
    (
        Flaw::EmptiedPrefixAnnouncesMore,
        "emptied_prefix_lists_one_empty_page",
    ),
    (
        Flaw::EmptyCountsAsAbsent,
        "empty_objects_meet_put_conditions",
    ),
    (Flaw::RacyIfMatch, "concurrent_put_if_match_has_one_winner"),
    (
        Flaw::PutLosesVanishingPrefix,
        "concurrent_puts_and_deletes_lose_nothing",
    ),
    (
        Flaw::ListFailsOnVanishedKey,
        "listing_while_deleting_never_fails",
    ),
    (Flaw::DeleteDecodesKeys, "unusual_keys_round_trip"),
    (
        Flaw::TruncatesObjectsPastTheLimit,
        "objects_at_and_past_the_size_limit",
    ),
    (
        Flaw::ObjectsExpire,
        "objects_and_their_metadata_stay_until_changed",
    ),
    (
        Flaw::LastModifiedIsTheRead,
        "objects_and_their_metadata_stay_until_changed",
    ),
    (
        Flaw::LimitAboveDefaultEndsTheListing,
        "list_default_page_size_is_bounded",
    ),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, kit);
}

#[test]
fn every_flaw_is_tried() {
    // A flaw added to the enum but not to `CASES` would prove nothing.
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    let not_flaws = ["None", "NoFeatures", "NoEtag"];
    let untried = flaws::untried(include_str!("kit_objectstore.rs"), &tried, &not_flaws);
    assert!(untried.is_empty(), "flaws no test tries: {untried:?}");
}

#[test]
fn a_panicking_driver_is_a_failed_obligation_not_a_crash() {
    let failure = kit(Flaw::PanicsOnLargeObjects)
        .check("large_object_round_trips")
        .unwrap_err();
    assert!(
        failure.message.contains("panicked: object too large"),
        "{failure}"
    );
}

#[test]
fn a_failure_names_what_went_wrong() {
    let failure = kit(Flaw::SkipsSecondPage)
        .check("list_pages_follow_next_to_the_end")
        .unwrap_err();
    assert_eq!(failure.obligation, "list_pages_follow_next_to_the_end");
    assert!(failure.message.contains("missing"), "{failure}");
    let failure = kit(Flaw::RacyIfAbsent)
        .check("concurrent_put_if_absent_has_one_winner")
        .unwrap_err();
    assert!(failure.message.contains("exactly one must"), "{failure}");
    let failure = kit(Flaw::AcceptsDotDotKeys)
        .check("invalid_keys_are_refused")
        .unwrap_err();
    assert!(failure.message.contains("must answer"), "{failure}");
    let kind = ErrorKind::InvalidInput.to_string();
    assert!(failure.message.contains(&kind), "{failure}");
    let failure = kit(Flaw::OnlyPutChecksLength)
        .check("one_key_rule_for_every_operation")
        .unwrap_err();
    assert!(failure.message.starts_with("get("), "{failure}");
    assert!(failure.message.contains("in every operation"), "{failure}");
    let failure = kit(Flaw::ListAcceptsAnyPrefix)
        .check("one_key_rule_for_every_operation")
        .unwrap_err();
    assert!(failure.message.starts_with("list(\"/\")"), "{failure}");
}

#[test]
fn an_unknown_obligation_is_a_failure() {
    let failure = kit(Flaw::None).check("no_such_thing").unwrap_err();
    assert!(failure.message.contains("no such obligation"), "{failure}");
}
