//! The `secrets.memory` driver.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::Notify;

use sandloom_driverkit::sdk::{InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{
    self, ChangeLog, Changes, LIST, NAME, SecretsOps, SecretsProvider, VERSIONS, WATCH, check_name,
    check_prefix, not_found, too_large,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use super::options::MemorySecretsOptions;
use crate::serving::Serving;

/// Named stores of this process. Weak: a store lives as long as a handle or an instance holds it.
static NAMED: Mutex<Option<HashMap<String, Weak<Store>>>> = Mutex::new(None);

/// One name's values: version `n` is `versions[n - 1]`, `None` once removed. Numbers are never
/// reused, removal included.
#[derive(Debug, Default)]
struct Entry {
    versions: Vec<Option<Secret<Vec<u8>>>>,
    /// Whether the last version is the current value (false after `remove`).
    live: bool,
}

#[derive(Debug)]
struct State {
    entries: BTreeMap<String, Entry>,
    /// The change history: one cursor step per change.
    log: ChangeLog,
}

/// The values and history of a store, and the waiters on it.
#[derive(Debug)]
struct Store {
    state: Mutex<State>,
    changed: Notify,
}

impl Store {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                entries: BTreeMap::new(),
                log: ChangeLog::new(),
            }),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock; recover anyway rather than propagate.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, state: &mut State, name: &str) {
        state.log.record([name.to_owned()]);
        self.changed.notify_waiters();
    }
}

/// A handle on a `secrets.memory` store: how tests put values in and take them out.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::secrets::Secrets;
/// use sandloom_embedded::{MemorySecretStore, MemorySecrets, MemorySecretsOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let store = MemorySecretStore::named("doc-handle");
///     assert_eq!(store.set("db/password", "first").unwrap(), 1);
///     let options = MemorySecretsOptions { store: Some("doc-handle".into()), ..Default::default() };
///     let secrets = MemorySecrets::from_options(options).unwrap();
///     assert_eq!(secrets.get("db/password").await.unwrap().expose(), b"first");
///     assert!(store.remove("db/password").unwrap());
///     assert!(secrets.get("db/password").await.is_err());
/// }
/// ```
#[derive(Debug, Clone)]
pub struct MemorySecretStore(Arc<Store>);

impl MemorySecretStore {
    /// The store named `name` in this process: the one instances with `store = "name"` read,
    /// made if none is alive.
    ///
    /// ```
    /// let a = sandloom_embedded::MemorySecretStore::named("doc-named");
    /// let b = sandloom_embedded::MemorySecretStore::named("doc-named");
    /// a.set("k", "v").unwrap();
    /// assert_eq!(b.set("k", "w").unwrap(), 2); // the same store: version 2
    /// ```
    #[must_use]
    pub fn named(name: &str) -> Self {
        let mut named = NAMED.lock().unwrap_or_else(PoisonError::into_inner);
        let stores = named.get_or_insert_with(HashMap::new);
        if let Some(store) = stores.get(name).and_then(Weak::upgrade) {
            return Self(store);
        }
        stores.retain(|_, store| store.strong_count() > 0);
        let store = Store::new();
        stores.insert(name.to_owned(), Arc::downgrade(&store));
        Self(store)
    }

    /// Store `value` as the new current version of `name`; its version number (1 for the first).
    /// Any size is stored: `get` refuses one above the instance's `max_value_bytes`.
    ///
    /// ```
    /// let store = sandloom_embedded::MemorySecretStore::named("doc-set");
    /// assert_eq!(store.set("api/token", vec![0_u8, 255]).unwrap(), 1);
    /// assert!(store.set("not a name", "x").is_err());
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for a name that breaks the contract's rule.
    pub fn set(&self, name: &str, value: impl Into<Vec<u8>>) -> InfraResult<u64> {
        check_name(name)?;
        let mut state = self.0.state();
        let entry = state.entries.entry(name.to_owned()).or_default();
        entry.versions.push(Some(Secret::new(value.into())));
        entry.live = true;
        let version = entry.versions.len() as u64;
        self.0.record(&mut state, name);
        Ok(version)
    }

    /// Remove `name` and every version of it; `false` when it held no value.
    ///
    /// ```
    /// let store = sandloom_embedded::MemorySecretStore::named("doc-remove");
    /// store.set("k", "v").unwrap();
    /// assert!(store.remove("k").unwrap());
    /// assert!(!store.remove("k").unwrap());
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for a name that breaks the contract's rule.
    pub fn remove(&self, name: &str) -> InfraResult<bool> {
        check_name(name)?;
        let mut state = self.0.state();
        let Some(entry) = state.entries.get_mut(name).filter(|entry| entry.live) else {
            return Ok(false);
        };
        entry.live = false;
        entry
            .versions
            .iter_mut()
            .for_each(|version| *version = None);
        self.0.record(&mut state, name);
        Ok(true)
    }
}

/// The `secrets.memory` driver: secrets in the process's memory, for tests.
///
/// Every feature: `versions` (1, 2, 3… per name, never reused; a removed secret's versions are
/// gone), `watch` (a change wakes waiters at once; cursors are the store's, shared by the
/// instances of a named store) and `list`. Values go in through a [`MemorySecretStore`]: the
/// instance's own ([`store`](Self::store)), or a named one shared with the option `store`.
/// Binary-safe; values above `max_value_bytes` are stored but never read.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::secrets::Secrets;
/// use sandloom_embedded::{MemorySecrets, MemorySecretsOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let secrets = MemorySecrets::from_options(MemorySecretsOptions::default()).unwrap();
///     let cursor = secrets.changes(0, Duration::ZERO).await.unwrap().cursor;
///     secrets.store().set("db/password", "s3cr3t").unwrap();
///     assert_eq!(secrets.get("db/password").await.unwrap().expose_str().unwrap(), "s3cr3t");
///     let changes = secrets.changes(cursor, Duration::from_secs(1)).await.unwrap();
///     assert_eq!(changes.names, ["db/password"]);
///     assert_eq!(secrets.list("db/").await.unwrap(), ["db/password"]);
/// }
/// ```
#[derive(Debug)]
pub struct MemorySecrets {
    store: Arc<Store>,
    max_value_bytes: usize,
    serving: Serving,
    /// Woken by `stop`, so that waiting `changes` calls answer `Stopped` at once.
    stopping: Notify,
}

impl MemorySecrets {
    /// The handle on this instance's store, to put values in.
    ///
    /// ```
    /// use sandloom_driverkit::Driver;
    /// let secrets = sandloom_embedded::MemorySecrets::from_options(Default::default()).unwrap();
    /// assert_eq!(secrets.store().set("k", "v").unwrap(), 1);
    /// ```
    #[must_use]
    pub fn store(&self) -> MemorySecretStore {
        MemorySecretStore(Arc::clone(&self.store))
    }

    fn value(&self, name: &str, version: Option<u64>) -> InfraResult<Secret<Vec<u8>>> {
        self.serving.check(NAME)?;
        check_name(name)?;
        if version == Some(0) {
            return Err(InfraError::invalid_input(
                NAME,
                "versions are numbered from 1; 0 is no version",
            ));
        }
        let state = self.store.state();
        let entry = state
            .entries
            .get(name)
            .filter(|entry| entry.live)
            .ok_or_else(|| not_found(name))?;
        let number = version.unwrap_or(entry.versions.len() as u64);
        let value = usize::try_from(number - 1)
            .ok()
            .and_then(|index| entry.versions.get(index))
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                InfraError::not_found(NAME, format!("no version {number} of secret {name:?}"))
            })?;
        if value.expose().len() > self.max_value_bytes {
            return Err(too_large(
                name,
                value.expose().len() as u64,
                self.max_value_bytes,
            ));
        }
        Ok(value.clone())
    }
}

impl SecretsOps for MemorySecrets {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.value(name, None)
    }

    async fn get_version(&self, name: &str, version: u64) -> InfraResult<Secret<Vec<u8>>> {
        self.value(name, Some(version))
    }

    async fn current_version(&self, name: &str) -> InfraResult<u64> {
        self.serving.check(NAME)?;
        check_name(name)?;
        let state = self.store.state();
        state
            .entries
            .get(name)
            .filter(|entry| entry.live)
            .map(|entry| entry.versions.len() as u64)
            .ok_or_else(|| not_found(name))
    }

    async fn changes(&self, after: u64, wait: Duration) -> InfraResult<Changes> {
        let deadline = tokio::time::Instant::now() + wait.min(LONGEST_WAIT);
        let mut since = (after != 0).then_some(after);
        loop {
            let changed = self.store.changed.notified();
            let stopping = self.stopping.notified();
            tokio::pin!(changed, stopping);
            // Registered before the state and `stop` are read: a change or a stop after the
            // reads wakes this waiter.
            changed.as_mut().enable();
            stopping.as_mut().enable();
            self.serving.check(NAME)?;
            {
                let state = self.store.state();
                let names = state.log.changed_since(after, &mut since)?;
                if !names.is_empty() || tokio::time::Instant::now() >= deadline {
                    return Ok(Changes::new(state.log.cursor(), names));
                }
            }
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(deadline) => {}
                () = stopping => {}
            }
        }
    }

    async fn list(&self, prefix: &str) -> InfraResult<Vec<String>> {
        self.serving.check(NAME)?;
        check_prefix(prefix)?;
        let state = self.store.state();
        Ok(state
            .entries
            .range(prefix.to_owned()..)
            .take_while(|(name, _)| name.starts_with(prefix))
            .filter(|(_, entry)| entry.live)
            .map(|(name, _)| name.clone())
            .collect())
    }
}

/// The longest a `changes` call waits: a `wait` above it (`Duration::MAX`) is cut to a year.
const LONGEST_WAIT: Duration = Duration::from_hours(365 * 24);

impl Driver for MemorySecrets {
    type Options = MemorySecretsOptions;

    fn supported_features() -> &'static [&'static str] {
        &[VERSIONS, WATCH, LIST]
    }

    fn validate(options: &MemorySecretsOptions) -> Result<(), DriverError> {
        check_max_value_bytes(options.max_value_bytes)?;
        if options.store.as_deref() == Some("") {
            return Err(DriverError::new(
                "`store` must not be empty: name a store, or leave the option out for a private one",
            ));
        }
        Ok(())
    }

    fn from_options(options: MemorySecretsOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        let store = match options.store.as_deref() {
            Some(name) => MemorySecretStore::named(name).0,
            None => Store::new(),
        };
        Ok(Self {
            store,
            max_value_bytes: options.max_value_bytes,
            serving: Serving::default(),
            stopping: Notify::new(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        self.stopping.notify_waiters();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

/// `max_value_bytes` is 1 to the contract's maximum: shared by every `secrets` driver here.
pub(crate) fn check_max_value_bytes(max: usize) -> Result<(), DriverError> {
    if max == 0 || max > secrets::MAX_VALUE_BYTES {
        return Err(DriverError::new(format!(
            "`max_value_bytes` must be 1 to {} (1 MiB, the contract's maximum), not {max}",
            secrets::MAX_VALUE_BYTES
        )));
    }
    Ok(())
}

impl SecretsProvider for MemorySecrets {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandloom_driverkit::secrets::MAX_VALUE_BYTES;

    #[tokio::test]
    async fn versions_are_never_reused_and_removal_takes_them_all() {
        let secrets = MemorySecrets::from_options(MemorySecretsOptions::default()).unwrap();
        let store = secrets.store();
        assert_eq!(store.set("k", "one").unwrap(), 1);
        assert_eq!(store.set("k", "two").unwrap(), 2);
        assert_eq!(secrets.get_version("k", 1).await.unwrap().expose(), b"one");
        assert!(store.remove("k").unwrap());
        assert!(secrets.get_version("k", 1).await.is_err());
        assert!(secrets.current_version("k").await.is_err());
        assert_eq!(store.set("k", "three").unwrap(), 3);
        assert_eq!(secrets.current_version("k").await.unwrap(), 3);
        assert!(
            secrets.get_version("k", 2).await.is_err(),
            "removed with the rest"
        );
    }

    #[test]
    fn options_are_validated() {
        for bad in [0, MAX_VALUE_BYTES + 1] {
            let options = MemorySecretsOptions {
                max_value_bytes: bad,
                ..Default::default()
            };
            assert!(MemorySecrets::validate(&options).is_err(), "{bad}");
        }
        let empty = MemorySecretsOptions {
            store: Some(String::new()),
            ..Default::default()
        };
        assert!(MemorySecrets::validate(&empty).is_err());
    }

    #[tokio::test]
    async fn a_waiting_changes_call_ends_with_stop() {
        let secrets =
            Arc::new(MemorySecrets::from_options(MemorySecretsOptions::default()).unwrap());
        let waiting = tokio::spawn({
            let secrets = Arc::clone(&secrets);
            async move { secrets.changes(0, Duration::from_secs(30)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        secrets.stop().await.unwrap();
        let answered = tokio::time::timeout(Duration::from_secs(2), waiting)
            .await
            .expect("answered at once")
            .unwrap();
        assert_eq!(
            answered.unwrap_err().kind(),
            sandloom_driverkit::sdk::ErrorKind::Stopped
        );
    }
}
