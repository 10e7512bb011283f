//! The `objectstore.fs` driver: objects as files beneath a root, every path resolved beneath it.

mod files;
mod list;

use crate::objectstore_memory::{check_prefix, page_limit};
use crate::serving::Serving;
use files::Paths;
use sandloom_driverkit::objectstore::{
    CONDITIONAL_PUT, ETAG, ListOptions, ListPage, NAME, ObjectMeta, ObjectStoreOps,
    ObjectStoreProvider, PutCondition,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::RwLock;

use super::options::FsObjectStoreOptions;

/// The directory under the root where writes are staged; never an object key's first segment.
pub(crate) const TMP_DIR: &str = ".sandloom-tmp";

/// Staged files older than this are left over from a crash and removed by `start`.
const STALE_TEMP_AGE: Duration = Duration::from_hours(1);

/// The `objectstore.fs` driver: each object is a file under `root`, its key the `/`-separated
/// path relative to `root`.
///
/// - **Keys** follow [`validate_key`](sandloom_driverkit::objectstore::validate_key). Besides,
///   every operation (`put`, `put_if`, `get`, `head`, `delete`) refuses with `InvalidInput` a
///   key whose first segment is `.sandloom-tmp` (that directory stages writes) and a key with a
///   segment longer than the longest file name of the root's file system (255 bytes on most).
///   A list prefix is refused with `InvalidInput` when no key this store accepts starts with it
///   (see [`ObjectStore::list`](sandloom_driverkit::objectstore::ObjectStore::list)): `../`, `/`, `.sandloom-tmp/`, …. Because objects are files,
///   `a` cannot be an object while `a/b` is one: such a `put` answers `Conflict`, and
///   `get`/`head` of a directory answer `NotFound`.
/// - **Symbolic links are never followed**, on Unix (the only platforms this driver is built
///   for). Every path beneath `root` is resolved at the moment of use, relative to directory
///   handles, without following links (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`
///   on Linux, a walk by handles opened with `O_NOFOLLOW | O_DIRECTORY` where that call is
///   missing and on other Unix systems): staging, the rename into place, unlinking, reading,
///   metadata and directory listings never go through a path. A key whose path passes
///   through a link at that moment answers `InvalidInput` in `put`, `put_if`, `get`, `head`
///   and `delete`, whatever the link points to; `list` skips links. A link swapped in while an
///   operation runs cannot redirect it outside `root`. (`root` itself may be or contain a link:
///   it is the operator's configuration.)
/// - **Writes are atomic**: the data goes to a new file in `root/.sandloom-tmp/`, is synced,
///   then renamed over the key's path; readers see the old or the new object, never a part.
///   `delete` removes the file, then the directories it leaves empty (up to `root`).
/// - **Etag** (feature `etag`): 16 hex digits of the 64-bit FNV-1a hash of the content, `-`,
///   the length in hex. It is recomputed from the file by `head` and `list`, which therefore
///   read the objects they report. It catches any change of content, but is not a
///   cryptographic hash: contents crafted to collide would share an etag.
/// - **Conditional put** (feature `conditional_put`): the check and the write are atomic with
///   respect to every other operation of this driver instance; another process writing the
///   same directory is not excluded.
/// - **Listing** walks the tree in ascending byte order of keys and stops once the page is
///   full, skipping the staging directory, symbolic links, FIFOs, sockets and devices, and
///   names no key can have (not UTF-8, a backslash, a key too long). `get` and `head` of a
///   FIFO, socket or device answer `NotFound` (a FIFO never blocks them), `put` `Conflict`.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::objectstore::{ObjectStore, PutCondition};
/// use sandloom_embedded::{FsObjectStore, FsObjectStoreOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let dir = std::env::temp_dir().join(format!("sandloom-doc-{}", std::process::id()));
///     let store = FsObjectStore::from_options(FsObjectStoreOptions { root: dir.clone() }).unwrap();
///     store.start().await.unwrap();
///     let meta = store.put("reports/1.csv", "a,b\n".into()).await.unwrap();
///     assert_eq!(store.get("reports/1.csv").await.unwrap(), "a,b\n");
///     let stale = PutCondition::IfMatch("not-the-etag".into());
///     assert!(store.put_if("reports/1.csv", "x".into(), stale).await.is_err());
///     let current = PutCondition::IfMatch(meta.etag.unwrap());
///     assert!(store.put_if("reports/1.csv", "x".into(), current).await.is_ok());
///     # store.stop().await.unwrap();
///     # std::fs::remove_dir_all(dir).unwrap();
/// }
/// ```
#[derive(Debug)]
pub struct FsObjectStore {
    paths: Arc<Paths>,
    /// Plain writes share it; conditional puts hold it alone, making check-and-write atomic.
    gate: Arc<RwLock<()>>,
    staged: AtomicU64,
    serving: Serving,
}

impl FsObjectStore {
    /// Run `work` on the blocking pool; a task that panicked or was cancelled by a shutting
    /// down runtime is an `Unavailable` error, never a panic here.
    async fn blocking<T, F>(&self, work: F) -> InfraResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Paths) -> InfraResult<T> + Send + 'static,
    {
        self.serving.check(NAME)?;
        let paths = Arc::clone(&self.paths);
        tokio::task::spawn_blocking(move || work(&paths))
            .await
            .map_err(|err| {
                InfraError::unavailable(NAME, "a file system task did not finish").with_source(err)
            })?
    }

    /// A name for a staged file that no other write of this process uses.
    fn temp_name(&self) -> String {
        let n = self.staged.fetch_add(1, Ordering::Relaxed);
        format!("{}-{:x}-{n}.tmp", std::process::id(), self.paths.salt)
    }

    async fn write(
        &self,
        key: &str,
        data: Bytes,
        condition: Option<PutCondition>,
    ) -> InfraResult<ObjectMeta> {
        self.serving.check(NAME)?;
        let key = key.to_owned();
        let temp = self.temp_name();
        // The guard moves into the blocking task: if the caller gives up, the write still
        // finishes under the guard, so no conditional put can interleave with it.
        match condition {
            None => {
                let guard = Arc::clone(&self.gate).read_owned().await;
                self.blocking(move |paths| {
                    let _guard = guard;
                    paths.put(&key, &data, &temp, None)
                })
                .await
            }
            Some(condition) => {
                let guard = Arc::clone(&self.gate).write_owned().await;
                self.blocking(move |paths| {
                    let _guard = guard;
                    paths.put(&key, &data, &temp, Some(&condition))
                })
                .await
            }
        }
    }
}

impl ObjectStoreOps for FsObjectStore {
    async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        self.write(key, data, None).await
    }

    async fn get(&self, key: &str) -> InfraResult<Bytes> {
        let key = key.to_owned();
        self.blocking(move |paths| paths.get(&key)).await
    }

    async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        let key = key.to_owned();
        self.blocking(move |paths| paths.head(&key)).await
    }

    async fn delete(&self, key: &str) -> InfraResult<()> {
        self.serving.check(NAME)?;
        let key = key.to_owned();
        let guard = Arc::clone(&self.gate).read_owned().await;
        self.blocking(move |paths| {
            let _guard = guard;
            paths.delete(&key)
        })
        .await
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> InfraResult<ListPage> {
        self.serving.check(NAME)?;
        check_prefix(prefix, |key| self.paths.check_key(key))?;
        let limit = page_limit(&options)?;
        let prefix = prefix.to_owned();
        self.blocking(move |paths| {
            list::list(paths, &prefix, options.start_after.as_deref(), limit)
        })
        .await
    }

    async fn put_if(
        &self,
        key: &str,
        data: Bytes,
        condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        self.write(key, data, Some(condition)).await
    }
}

impl Driver for FsObjectStore {
    type Options = FsObjectStoreOptions;

    fn supported_features() -> &'static [&'static str] {
        &[ETAG, CONDITIONAL_PUT]
    }

    fn validate(options: &FsObjectStoreOptions) -> Result<(), DriverError> {
        if options.root.as_os_str().is_empty() {
            return Err(DriverError::new("must not be empty").at_option("root"));
        }
        Ok(())
    }

    fn from_options(options: FsObjectStoreOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        Ok(Self {
            paths: Arc::new(Paths::new(options.root)),
            gate: Arc::new(RwLock::new(())),
            staged: AtomicU64::new(0),
            serving: Serving::default(),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        let paths = Arc::clone(&self.paths);
        tokio::task::spawn_blocking(move || paths.prepare(STALE_TEMP_AGE))
            .await
            .map_err(|err| {
                DriverError::new("preparing the object store root did not finish").with_source(err)
            })?
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        Ok(())
    }

    async fn health(&self) -> Health {
        if let Err(err) = self.serving.check(NAME) {
            return Health::Unhealthy(err.to_string());
        }
        let root = self.paths.root.clone();
        match tokio::fs::metadata(&root).await {
            Ok(meta) if meta.is_dir() => Health::Healthy,
            Ok(_) => Health::Unhealthy(format!("{} is not a directory", root.display())),
            Err(err) => Health::Unhealthy(format!("cannot reach {}: {err}", root.display())),
        }
    }
}

impl ObjectStoreProvider for FsObjectStore {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests;
