//! `objectstore.memory`: objects in a sorted map inside the process.
//!
//! Also home of what both embedded object stores share: the etag and the listing rules.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::SystemTime;

use sandloom_driverkit::objectstore::{
    CONDITIONAL_PUT, DEFAULT_PAGE_SIZE, ETAG, ListOptions, ListPage, NAME, ObjectMeta,
    ObjectStoreOps, ObjectStoreProvider, PutCondition, validate_key, validate_prefix,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, NoOptions, Version};

use crate::serving::Serving;

/// The etag of `data`: 16 hex digits of the 64-bit FNV-1a hash of the bytes, `-`, then the
/// length in hex. Equal contents give equal etags in both embedded stores and across restarts.
/// It detects any accidental change; it is not a cryptographic hash, so two contents crafted to
/// collide would share an etag.
pub(crate) fn etag_of(data: &[u8]) -> String {
    let mut hasher = EtagHasher::default();
    hasher.update(data);
    hasher.finish()
}

/// [`etag_of`] over content that arrives in pieces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EtagHasher {
    hash: u64,
    len: u64,
}

impl Default for EtagHasher {
    fn default() -> Self {
        Self {
            hash: 0xcbf2_9ce4_8422_2325,
            len: 0,
        }
    }
}

impl EtagHasher {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub(crate) fn update(&mut self, data: &[u8]) {
        for byte in data {
            self.hash = (self.hash ^ u64::from(*byte)).wrapping_mul(Self::PRIME);
        }
        self.len += data.len() as u64;
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn finish(&self) -> String {
        format!("{:016x}-{:x}", self.hash, self.len)
    }
}

/// The page size `options` asks for: `InvalidInput` for zero, which could never make progress.
pub(crate) fn page_limit(options: &ListOptions) -> InfraResult<usize> {
    match options.limit {
        None => Ok(DEFAULT_PAGE_SIZE),
        Some(0) => Err(InfraError::invalid_input(
            NAME,
            "the list limit must be at least 1",
        )),
        Some(limit) => Ok(limit),
    }
}

/// `InvalidInput` for a list prefix that no key a store accepts can start with: one
/// [`validate_prefix`] refuses, or one that neither is a key `check` accepts nor becomes one with
/// one more character (`check` is the store's key rule, [`validate_key`] and what else the
/// store refuses in every operation).
pub(crate) fn check_prefix(
    prefix: &str,
    check: impl Fn(&str) -> InfraResult<()>,
) -> InfraResult<()> {
    validate_prefix(prefix)?;
    if prefix.is_empty() || check(prefix).is_ok() {
        return Ok(());
    }
    check(&format!("{prefix}x")).map_err(|err| {
        InfraError::invalid_input(
            NAME,
            format!(
                "no key this store accepts starts with the list prefix {prefix:?}: {}",
                err.message()
            ),
        )
    })
}

/// `Conflict` when `current` (the etag of the object under `key`, if any) fails `condition`.
pub(crate) fn check_condition(
    key: &str,
    current: Option<&str>,
    condition: &PutCondition,
) -> InfraResult<()> {
    match (condition, current) {
        (PutCondition::IfAbsent, None) => Ok(()),
        (PutCondition::IfAbsent, Some(_)) => Err(InfraError::conflict(
            NAME,
            format!("an object {key:?} already exists"),
        )),
        (PutCondition::IfMatch(expected), Some(etag)) if expected == etag => Ok(()),
        (PutCondition::IfMatch(_), Some(_)) => Err(InfraError::conflict(
            NAME,
            format!("the etag of {key:?} does not match"),
        )),
        (PutCondition::IfMatch(_), None) => Err(InfraError::conflict(
            NAME,
            format!("there is no object {key:?} to match"),
        )),
        (other, _) => Err(InfraError::new(
            ErrorKind::Unsupported,
            NAME,
            format!("the put condition {other:?} is not supported"),
        )),
    }
}

#[derive(Debug, Clone)]
struct Stored {
    data: Bytes,
    etag: String,
    modified: SystemTime,
}

impl Stored {
    fn meta(&self, key: &str) -> ObjectMeta {
        ObjectMeta::new(key, self.data.len() as u64)
            .with_etag(self.etag.clone())
            .with_last_modified(self.modified)
    }
}

/// The `objectstore.memory` driver: objects kept in memory, lost when the process exits.
///
/// Keys follow [`validate_key`] in every operation, and list prefixes [`validate_prefix`]
/// (`InvalidInput` otherwise); listing is in ascending byte order of keys, paged with
/// [`ListOptions`]; `delete` of a missing key succeeds. Unlike `objectstore.fs`, a key may be
/// both an object and the prefix of others (`a` and `a/b`). Features: `etag` (see
/// [`FsObjectStore`](crate::FsObjectStore) for the format, which both stores share) and
/// `conditional_put`. Options: none.
///
/// ```
/// use sandloom_driverkit::{Driver, NoOptions};
/// use sandloom_driverkit::objectstore::{ListOptions, ObjectStore};
/// use sandloom_embedded::MemoryObjectStore;
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let store = MemoryObjectStore::from_options(NoOptions {}).unwrap();
///     store.put("reports/1.csv", "a,b\n".into()).await.unwrap();
///     assert_eq!(store.get("reports/1.csv").await.unwrap(), "a,b\n");
///     let page = store.list("reports/", ListOptions::default()).await.unwrap();
///     assert_eq!(page.objects[0].key, "reports/1.csv");
/// }
/// ```
#[derive(Debug)]
pub struct MemoryObjectStore {
    objects: RwLock<BTreeMap<String, Stored>>,
    serving: Serving,
}

impl MemoryObjectStore {
    // Nothing panics while holding the lock; recover anyway rather than propagate.
    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<String, Stored>> {
        self.objects.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Stored>> {
        self.objects.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn stored(&self, key: &str) -> InfraResult<Stored> {
        self.serving.check(NAME)?;
        validate_key(key)?;
        self.read()
            .get(key)
            .cloned()
            .ok_or_else(|| InfraError::not_found(NAME, format!("no object {key:?}")))
    }

    fn store(
        &self,
        key: &str,
        data: Bytes,
        condition: Option<&PutCondition>,
    ) -> InfraResult<ObjectMeta> {
        self.serving.check(NAME)?;
        validate_key(key)?;
        let stored = Stored {
            etag: etag_of(&data),
            data,
            modified: SystemTime::now(),
        };
        let meta = stored.meta(key);
        let mut objects = self.write();
        if let Some(condition) = condition {
            let current = objects.get(key).map(|object| object.etag.as_str());
            check_condition(key, current, condition)?;
        }
        objects.insert(key.to_owned(), stored);
        Ok(meta)
    }
}

impl ObjectStoreOps for MemoryObjectStore {
    async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        self.store(key, data, None)
    }

    async fn get(&self, key: &str) -> InfraResult<Bytes> {
        self.stored(key).map(|stored| stored.data)
    }

    async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        self.stored(key).map(|stored| stored.meta(key))
    }

    async fn delete(&self, key: &str) -> InfraResult<()> {
        self.serving.check(NAME)?;
        validate_key(key)?;
        self.write().remove(key);
        Ok(())
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> InfraResult<ListPage> {
        self.serving.check(NAME)?;
        check_prefix(prefix, validate_key)?;
        let limit = page_limit(&options)?;
        // Keys with `prefix` are one contiguous run in byte order; start at the later of the
        // prefix and `start_after`, stop at the first key without the prefix.
        let start = match options.start_after.as_deref() {
            Some(after) if after >= prefix => Bound::Excluded(after),
            _ => Bound::Included(prefix),
        };
        let objects = self.read();
        let mut run = objects
            .range::<str, _>((start, Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix));
        let page: Vec<ObjectMeta> = run
            .by_ref()
            .take(limit)
            .map(|(key, stored)| stored.meta(key))
            .collect();
        let next = match run.next() {
            Some(_) => page.last().map(|meta| meta.key.clone()),
            None => None,
        };
        Ok(ListPage::new(page, next))
    }

    async fn put_if(
        &self,
        key: &str,
        data: Bytes,
        condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        self.store(key, data, Some(&condition))
    }
}

impl Driver for MemoryObjectStore {
    type Options = NoOptions;

    fn supported_features() -> &'static [&'static str] {
        &[ETAG, CONDITIONAL_PUT]
    }

    fn from_options(_options: NoOptions) -> Result<Self, DriverError> {
        Ok(Self {
            objects: RwLock::new(BTreeMap::new()),
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        self.write().clear();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl ObjectStoreProvider for MemoryObjectStore {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
pub(crate) mod tests;
