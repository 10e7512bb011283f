//! The `secrets.file` driver.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, Notify};
use tokio::time::Instant;

use sandloom_driverkit::sdk::{InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{
    Changes, LIST, NAME, PolledChanges, SecretsOps, SecretsProvider, WATCH, check_prefix,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use super::options::FileSecretsOptions;
use super::tree::{self, Digest, DigestKeys, check_file_name};
use crate::secrets_memory::check_max_value_bytes;
use crate::serving::Serving;

/// The `secrets.file` driver: each secret is a file beneath `root`, its name the `/`-separated
/// path relative to it, as Kubernetes mounts a secret volume.
///
/// - **Kubernetes' layout**: when `root/..data` is a link, the files are read from the
///   directory it names, which must be an entry of `root` itself; Kubernetes swaps that link
///   atomically to publish new files. Each operation reads `..data` once and everything else
///   through the directory it named, so a read never mixes old and new files, and the links
///   Kubernetes puts beside it (`password -> ..data/password`) are never followed. Without
///   `..data`, the tree beneath `root` is read as it is.
/// - **Confinement**: every path beneath `root` is opened through directory handles without
///   following links (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux; the
///   walk `objectstore.fs` uses elsewhere), so nothing outside `root` is ever read. A secret
///   whose path passes through a link answers `Backend`.
/// - **Names**: the contract's rule, plus: no segment beginning with `..` (those entries are
///   hidden, as Kubernetes' own are) and none longer than 255 bytes, a file name's limit:
///   refused with `InvalidInput`. A name cannot be both a secret and a folder of secrets (`a`
///   and `a/b`), as a file cannot be a directory; a folder is `NotFound`. The mapping of names
///   to paths is one to one only on a case-sensitive file system: on a case-insensitive one
///   (macOS's default), `db/Password` and `db/password` are one file, so keep secrets on a
///   case-sensitive volume (a Kubernetes secret volume, a tmpfs, is).
/// - **Errors**: a missing file is `NotFound`; a `root` that cannot be opened (the volume is
///   gone) is `Unavailable`, never `NotFound`; a file above `max_value_bytes` is `Backend`,
///   and is not read.
/// - **Features**: `list` (walks the tree, skipping `..` entries, links and other files) and
///   `watch`: `changes` reads the tree again every `poll_interval_ms` while it waits, and
///   compares each file's content by a digest keyed with this instance's random keys (the
///   `..data` swap included: only the files whose content changed are named). Nothing runs
///   between calls; the tree read at `start` is the first comparison point. No `versions`.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::secrets::Secrets;
/// use sandloom_embedded::{FileSecrets, FileSecretsOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let root = std::env::temp_dir().join(format!("sandloom-doc-secrets-{}", std::process::id()));
///     std::fs::create_dir_all(root.join("db")).unwrap();
///     std::fs::write(root.join("db/password"), "s3cr3t").unwrap();
///     let secrets = FileSecrets::from_options(FileSecretsOptions::new(&root)).unwrap();
///     secrets.start().await.unwrap();
///     assert_eq!(secrets.get("db/password").await.unwrap().expose(), b"s3cr3t");
///     assert_eq!(secrets.list("").await.unwrap(), ["db/password"]);
///     let cursor = secrets.changes(0, Duration::ZERO).await.unwrap().cursor;
///     std::fs::write(root.join("db/password"), "rotated").unwrap();
///     let changes = secrets.changes(cursor, Duration::from_secs(5)).await.unwrap();
///     assert_eq!(changes.names, ["db/password"]);
///     std::fs::remove_dir_all(&root).unwrap();
/// }
/// ```
pub struct FileSecrets {
    root: Arc<Path>,
    max_value_bytes: usize,
    poll_interval: Duration,
    keys: Arc<DigestKeys>,
    watched: Mutex<PolledChanges<Digest>>,
    serving: Serving,
    /// Woken by `stop`, so that waiting `changes` calls answer `Stopped` at once.
    stopping: Notify,
}

impl std::fmt::Debug for FileSecrets {
    // Digests and keys are left out: they are of no use to people, and of some to an attacker.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSecrets")
            .field("root", &self.root)
            .field("max_value_bytes", &self.max_value_bytes)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

/// The longest a `changes` call waits: a `wait` above it (`Duration::MAX`) is cut to a year.
const LONGEST_WAIT: Duration = Duration::from_hours(365 * 24);

impl FileSecrets {
    /// Run `read` on a blocking thread with this instance's root.
    async fn blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Path) -> InfraResult<R> + Send + 'static,
    ) -> InfraResult<R> {
        let root = Arc::clone(&self.root);
        tokio::task::spawn_blocking(move || read(&root))
            .await
            .map_err(|err| {
                InfraError::unavailable(NAME, format!("secrets.file's read failed: {err}"))
            })?
    }

    /// Read the tree again and record what changed since the last scan.
    async fn rescan(&self, watched: &mut PolledChanges<Digest>) -> InfraResult<()> {
        let (limit, keys) = (self.max_value_bytes, Arc::clone(&self.keys));
        let digests = self
            .blocking(move |root| tree::scan(root, limit, &keys))
            .await?;
        watched.record_scan(digests);
        Ok(())
    }
}

impl SecretsOps for FileSecrets {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.serving.check(NAME)?;
        check_file_name(name)?;
        let (name, limit) = (name.to_owned(), self.max_value_bytes);
        self.blocking(move |root| tree::read(root, &name, limit))
            .await
    }

    async fn changes(&self, after: u64, wait: Duration) -> InfraResult<Changes> {
        let deadline = Instant::now() + wait.min(LONGEST_WAIT);
        let mut since = (after != 0).then_some(after);
        loop {
            let stopping = self.stopping.notified();
            tokio::pin!(stopping);
            stopping.as_mut().enable();
            self.serving.check(NAME)?;
            let next_scan = {
                let mut watched = self.watched.lock().await;
                if watched.due(self.poll_interval) || since.is_none() {
                    self.rescan(&mut watched).await?;
                }
                let names = watched.log().changed_since(after, &mut since)?;
                if !names.is_empty() || Instant::now() >= deadline {
                    return Ok(Changes::new(watched.log().cursor(), names));
                }
                watched.next_scan(self.poll_interval)
            };
            tokio::select! {
                () = tokio::time::sleep_until(next_scan.min(deadline)) => {}
                () = stopping => {}
            }
        }
    }

    async fn list(&self, prefix: &str) -> InfraResult<Vec<String>> {
        self.serving.check(NAME)?;
        check_prefix(prefix)?;
        let prefix = prefix.to_owned();
        let mut names = self.blocking(tree::names).await?;
        names.retain(|name| name.starts_with(&prefix));
        Ok(names)
    }
}

impl Driver for FileSecrets {
    type Options = FileSecretsOptions;

    fn supported_features() -> &'static [&'static str] {
        &[WATCH, LIST]
    }

    fn validate(options: &FileSecretsOptions) -> Result<(), DriverError> {
        check_max_value_bytes(options.max_value_bytes)?;
        if options.root.as_os_str().is_empty() {
            return Err(DriverError::new(
                "`root` must name the directory holding the secrets",
            ));
        }
        if options.poll_interval_ms < 10 {
            return Err(DriverError::new(format!(
                "`poll_interval_ms` must be at least 10, not {}",
                options.poll_interval_ms
            )));
        }
        Ok(())
    }

    fn from_options(options: FileSecretsOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        Ok(Self {
            root: Arc::from(options.root.as_path()),
            max_value_bytes: options.max_value_bytes,
            poll_interval: Duration::from_millis(options.poll_interval_ms),
            keys: Arc::new(DigestKeys::new()),
            watched: Mutex::new(PolledChanges::new()),
            serving: Serving::default(),
            stopping: Notify::new(),
        })
    }

    /// Read the tree once: a root that cannot be read fails the start, and what it holds is
    /// the change signal's first comparison point.
    async fn start(&self) -> Result<(), DriverError> {
        let mut watched = self.watched.lock().await;
        self.rescan(&mut watched).await.map_err(|err| {
            DriverError::new(format!(
                "secrets.file cannot read its directory {}: {}",
                self.root.display(),
                err.message()
            ))
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        self.stopping.notify_waiters();
        Ok(())
    }

    async fn health(&self) -> Health {
        if let Err(err) = self.serving.check(NAME) {
            return Health::Unhealthy(err.to_string());
        }
        match self.blocking(|root| tree::data_dir(root).map(drop)).await {
            Ok(()) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }
}

impl SecretsProvider for FileSecrets {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
