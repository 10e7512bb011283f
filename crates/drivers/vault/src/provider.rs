//! The `secrets.vault` driver: the operations and the lifecycle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use sandloom_driverkit::sdk::{InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{
    Changes, LIST, NAME, SecretsOps, SecretsProvider, VERSIONS, WATCH, check_name, check_prefix,
    not_found,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};
use tokio::sync::{Mutex, Notify};
use tokio::time::Instant;

use crate::client::{Answer, Client, Read};
use crate::entry::{self, Metadata};
use crate::errors::{backend, is_missing_entry};
use crate::options::VaultSecretsOptions;
use crate::watch::Watched;

/// Room in a read's answer besides the value: the entry's other fields, metadata, JSON.
const ANSWER_OVERHEAD: usize = 64 * 1024;
/// The largest metadata or list answer read.
const LISTING_LIMIT: usize = 16 * 1024 * 1024;
/// The longest a `changes` call waits: a `wait` above it (`Duration::MAX`) is cut to a year.
const LONGEST_WAIT: Duration = Duration::from_hours(365 * 24);

/// The `secrets.vault` driver: secrets in a KV version 2 engine of Vault or `OpenBao`, read over
/// its HTTP API. See the [crate docs](crate) for the mapping, the features and the errors.
///
/// ```
/// use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};
/// use sandloom_driverkit::Driver;
///
/// let options = VaultSecretsOptions {
///     token: Some("hvs.example".into()),
///     prefix: Some("apps/orders".into()),
///     ..VaultSecretsOptions::new("http://127.0.0.1:8200")
/// };
/// let secrets = VaultSecrets::from_options(options).unwrap(); // no I/O yet
/// assert_eq!(secrets.data_path("db/password"), "secret/data/apps/orders/db/password");
/// assert_eq!(VaultSecrets::supported_features(), ["versions", "watch", "list"]);
/// ```
pub struct VaultSecrets {
    client: Client,
    mount: String,
    /// `<prefix>/`, or empty.
    prefix: String,
    field: String,
    max_value_bytes: usize,
    poll_interval: Duration,
    watched: Mutex<Watched>,
    stopped: AtomicBool,
    /// Woken by `stop`, so that waiting `changes` calls answer `Stopped` at once.
    stopping: Notify,
}

impl std::fmt::Debug for VaultSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultSecrets")
            .field("address", self.client.address())
            .field("mount", &self.mount)
            .field("prefix", &self.prefix)
            .field("field", &self.field)
            .field("max_value_bytes", &self.max_value_bytes)
            .finish_non_exhaustive()
    }
}

impl VaultSecrets {
    /// The API path (under `/v1/`) of the secret `name`'s current value:
    /// `<mount>/data/<prefix>/<name>`. The name is not checked here.
    ///
    /// ```
    /// use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};
    /// use sandloom_driverkit::Driver;
    ///
    /// let options = VaultSecretsOptions { token: Some("t".into()), ..VaultSecretsOptions::new("http://127.0.0.1:8200") };
    /// let secrets = VaultSecrets::from_options(options).unwrap();
    /// assert_eq!(secrets.data_path("tls/server.key"), "secret/data/tls/server.key");
    /// ```
    pub fn data_path(&self, name: &str) -> String {
        format!("{}/data/{}{name}", self.mount, self.prefix)
    }

    /// `<mount>/metadata/<prefix><name>` (a folder when `name` ends in `/` or is empty).
    pub(crate) fn metadata_path(&self, name: &str) -> String {
        format!("{}/metadata/{}{name}", self.mount, self.prefix)
    }

    fn check(&self) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) {
            Err(InfraError::stopped(NAME))
        } else {
            Ok(())
        }
    }

    /// Read the value at `path` (of the secret `name`), `None` when there is none.
    async fn read(&self, name: &str, path: &str) -> InfraResult<Option<Secret<Vec<u8>>>> {
        // A text value escaped in JSON takes at most 6 bytes per byte (`\u0000`).
        let bound = self.max_value_bytes.saturating_mul(6) + ANSWER_OVERHEAD;
        let answer = match self.client.call(Method::GET, path, bound).await {
            Ok(answer) => answer,
            Err(Read::Failed(err)) => return Err(err),
            Err(Read::Oversized) => {
                return Err(InfraError::new(
                    sandloom_driverkit::sdk::ErrorKind::Backend,
                    NAME,
                    format!(
                        "secret {name:?} is above this store's limit of {} bytes (its answer is \
                         over {bound} bytes): it is not read",
                        self.max_value_bytes
                    ),
                ));
            }
        };
        if is_missing_entry(&answer) {
            return Ok(None);
        }
        if answer.status != StatusCode::OK {
            return Err(self.client.refused(path, &answer));
        }
        entry::value(&answer.body, name, &self.field, self.max_value_bytes)
    }

    /// The metadata of the secret `name`, `None` when it has none.
    pub(crate) async fn metadata(&self, name: &str) -> InfraResult<Option<Metadata>> {
        let path = self.metadata_path(name);
        let answer = self.listing(Method::GET, &path).await?;
        if is_missing_entry(&answer) {
            return Ok(None);
        }
        if answer.status != StatusCode::OK {
            return Err(self.client.refused(&path, &answer));
        }
        entry::metadata(&answer.body, name).map(Some)
    }

    /// Send a metadata or list request.
    async fn listing(&self, method: Method, path: &str) -> InfraResult<Answer> {
        self.client
            .call(method, path, LISTING_LIMIT)
            .await
            .map_err(|read| match read {
                Read::Failed(err) => err,
                Read::Oversized => backend(path, "the answer is above 16 MiB"),
            })
    }

    /// The names in the folder `folder` (`""` or ending in `/`) and beneath it.
    pub(crate) async fn names_under(&self, folder: &str) -> InfraResult<Vec<String>> {
        let mut names = Vec::new();
        let mut folders = vec![folder.to_owned()];
        while let Some(folder) = folders.pop() {
            let path = self.metadata_path(&folder);
            let list = Method::from_bytes(b"LIST").unwrap_or(Method::GET);
            let answer = self.listing(list, &path).await?;
            if is_missing_entry(&answer) {
                continue; // an empty folder
            }
            if answer.status != StatusCode::OK {
                return Err(self.client.refused(&path, &answer));
            }
            for key in entry::keys(&answer.body, &path)? {
                let full = format!("{folder}{key}");
                if full.ends_with('/') {
                    folders.push(full);
                } else if check_name(&full).is_ok() {
                    // Entries whose names break the rule (written by other tools) are not
                    // secrets this driver can serve: left out.
                    names.push(full);
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }

    /// Check that the mount is a KV version 2 engine this token can reach.
    async fn preflight(&self) -> Result<(), String> {
        let path = format!("sys/internal/ui/mounts/{}", self.mount);
        let answer = self
            .listing(Method::GET, &path)
            .await
            .map_err(|err| err.message().to_owned())?;
        if answer.status == StatusCode::FORBIDDEN {
            // Vault answers 403 both for a token it refuses and for a mount that does not
            // exist (its preflight cannot tell them apart for the caller).
            return Err(format!(
                "{} — either the token is not valid (expired, revoked, mistyped), or the mount \
                 {:?} does not exist or its policy grants nothing under it",
                self.client.refused(&path, &answer).message(),
                self.mount
            ));
        }
        if answer.status != StatusCode::OK {
            return Err(self.client.refused(&path, &answer).message().to_owned());
        }
        let mount = entry::mount(&answer.body)
            .ok_or_else(|| format!("secrets.vault: {path} answered what no Vault answers"))?;
        if mount.path.trim_end_matches('/') != self.mount {
            return Err(format!(
                "`mount` {:?} is not a mount: the mount that holds it is {:?} (set `mount` to \
                 it and the rest in `prefix`)",
                self.mount,
                mount.path.trim_end_matches('/')
            ));
        }
        let version = mount
            .options
            .as_ref()
            .and_then(|options| options.get("version"))
            .map(String::as_str);
        if mount.kind != "kv" || version != Some("2") {
            return Err(format!(
                "`mount` {:?} is a {:?} engine (version {}), not KV version 2: enable one with \
                 `bao secrets enable -version=2 -path={} kv`",
                self.mount,
                mount.kind,
                version.unwrap_or("none"),
                self.mount
            ));
        }
        Ok(())
    }
}

impl SecretsOps for VaultSecrets {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.check()?;
        check_name(name)?;
        self.read(name, &self.data_path(name))
            .await?
            .ok_or_else(|| not_found(name))
    }

    async fn get_version(&self, name: &str, version: u64) -> InfraResult<Secret<Vec<u8>>> {
        self.check()?;
        check_name(name)?;
        if version == 0 {
            // Vault reads version 0 as "the current one": the contract numbers from 1.
            return Err(InfraError::invalid_input(
                NAME,
                format!("version 0 of {name:?}: versions are numbered from 1"),
            ));
        }
        let path = format!("{}?version={version}", self.data_path(name));
        self.read(name, &path).await?.ok_or_else(|| {
            InfraError::not_found(NAME, format!("no version {version} of secret {name:?}"))
        })
    }

    async fn current_version(&self, name: &str) -> InfraResult<u64> {
        self.check()?;
        check_name(name)?;
        self.metadata(name)
            .await?
            .and_then(|metadata| metadata.live_version())
            .ok_or_else(|| not_found(name))
    }

    async fn changes(&self, after: u64, wait: Duration) -> InfraResult<Changes> {
        let deadline = Instant::now() + wait.min(LONGEST_WAIT);
        let mut since = (after != 0).then_some(after);
        loop {
            let stopping = self.stopping.notified();
            tokio::pin!(stopping);
            stopping.as_mut().enable();
            self.check()?;
            let next_scan = {
                let mut watched = self.watched.lock().await;
                if watched.due(self.poll_interval) || since.is_none() {
                    let digests = crate::watch::scan(self).await?;
                    watched.record_scan(digests);
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
        self.check()?;
        check_prefix(prefix)?;
        // Start at the deepest folder the prefix names: `db/pa` lists `db/` only.
        let folder = prefix.rfind('/').map_or("", |at| &prefix[..=at]);
        if folder.contains("//") || folder.starts_with('/') {
            return Ok(Vec::new()); // no name has an empty segment
        }
        let mut names = self.names_under(folder).await?;
        names.retain(|name| name.starts_with(prefix));
        Ok(names)
    }
}

impl Driver for VaultSecrets {
    type Options = VaultSecretsOptions;

    fn supported_features() -> &'static [&'static str] {
        &[VERSIONS, WATCH, LIST]
    }

    fn validate(options: &VaultSecretsOptions) -> Result<(), DriverError> {
        options.check().map(drop)
    }

    fn from_options(options: VaultSecretsOptions) -> Result<Self, DriverError> {
        let checked = options.check()?;
        let client = Client::new(&checked, options.address.clone())?;
        Ok(Self {
            client,
            mount: checked.mount,
            prefix: checked.prefix.map(|p| format!("{p}/")).unwrap_or_default(),
            field: checked.field,
            max_value_bytes: checked.max_value_bytes,
            poll_interval: checked.poll_interval,
            watched: Mutex::new(Watched::default()),
            stopped: AtomicBool::new(false),
            stopping: Notify::new(),
        })
    }

    /// Log in (`AppRole`) and check that the mount is a KV version 2 engine the token reaches:
    /// a wrong address, token or mount fails the start, not the first read.
    async fn start(&self) -> Result<(), DriverError> {
        self.preflight().await.map_err(|why| {
            DriverError::new(format!(
                "secrets.vault cannot use {} (mount {:?}): {why}",
                self.client.address(),
                self.mount
            ))
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        self.stopping.notify_waiters();
        Ok(())
    }

    /// The same check as `start`, bounded by the request timeout: the server answers, is
    /// unsealed, and the token still reaches the mount.
    async fn health(&self) -> Health {
        if let Err(err) = self.check() {
            return Health::Unhealthy(err.to_string());
        }
        match self.preflight().await {
            Ok(()) => Health::Healthy,
            Err(why) => Health::Unhealthy(why),
        }
    }
}

impl SecretsProvider for VaultSecrets {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
