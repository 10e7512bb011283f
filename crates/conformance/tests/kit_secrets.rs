//! The secrets kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation.
//!
//! The reference wraps `secrets.memory` (whose store the kit seeds through its handle), and each
//! flaw bends one of its answers.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use sandloom_conformance::secrets::{OBLIGATIONS, SecretsConformance, Seed};
use sandloom_conformance::{Kit, KitRequest};
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{Changes, LIST, SecretsOps, SecretsProvider, VERSIONS, WATCH};
use sandloom_driverkit::{Driver, DriverError, Version};
use sandloom_embedded::{MemorySecretStore, MemorySecrets, MemorySecretsOptions};

/// One way to be wrong, each named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    /// Declares no optional feature (not a flaw: the kit then checks `Unsupported`).
    NoFeatures,
    /// Trims trailing whitespace off values.
    TrimsValues,
    /// Reads values as UTF-8, replacing what is not.
    LossyUtf8,
    /// Cuts values at their first NUL byte, as C strings are.
    StopsAtNul,
    /// Keeps the first value it read of each name.
    ReturnsStaleValue,
    /// Reads values of any size.
    NoSizeLimit,
    /// Refuses a value of exactly the limit.
    LimitOffByOne,
    /// Answers `InvalidInput` for a value above the limit.
    TooLargeAsInvalidInput,
    /// Answers an empty value for a missing secret.
    MissingAsEmpty,
    /// Answers `NotFound` without naming the secret.
    NotFoundWithoutName,
    /// Answers `NotFound` when its backend is down.
    OutageAsNotFound,
    /// Answers `NotFound` for names that break the rule.
    AcceptsBadNames,
    /// Refuses names longer than 200 bytes.
    RefusesLongNames,
    /// Reads `a_b` as `a/b`.
    UnderscoreAsSlash,
    /// Folds names to lowercase.
    FoldsCase,
    /// Answers the current value for any version.
    VersionsAnswerCurrent,
    /// Answers the current value for version 0.
    VersionZeroIsCurrent,
    /// Never names a change.
    ChangesNeverFire,
    /// Names every secret as changed.
    ChangesNamesEverything,
    /// Names only what changed since its own last answer, whatever cursor it is given.
    ChangesForgetHistory,
    /// Answers `changes` at once, without waiting.
    ChangesDoNotWait,
    /// Takes a cursor it never issued for "from now".
    AcceptsUnknownCursors,
    /// Lists names in reverse order.
    ListUnsorted,
    /// Lists every name, whatever the prefix.
    ListIgnoresPrefix,
    /// Logs the values it reads at DEBUG.
    LogsValues,
    /// Puts the start of a value in its too-large error.
    ValueInErrors,
    /// Keeps serving after `stop`.
    WorksAfterStop,
    /// Shows its password in its `Debug`.
    SecretInDebug,
}

/// The options of the reference: a flaw, and the memory store it reads.
#[derive(Debug, Clone, serde::Deserialize)]
struct FlawedOptions {
    flaw: Flaw,
    store: String,
}

/// The value limit the kit is told of, and the reference keeps (unless `NoSizeLimit`).
const LIMIT: usize = 4096;

/// The password the broken drivers leak; the kit is told it is secret.
const SECRET: &str = "hunter2";

/// Stores whose backend is down (`outage`), by name.
static DOWN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

struct Reference {
    flaw: Flaw,
    store: String,
    inner: MemorySecrets,
    stale: Mutex<HashMap<String, Vec<u8>>>,
    last_cursor: AtomicU64,
}

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = if self.flaw == Flaw::SecretInDebug {
            SECRET
        } else {
            "<redacted>"
        };
        f.debug_struct("Reference")
            .field("password", &password)
            .finish_non_exhaustive()
    }
}

impl Reference {
    fn down(&self) -> bool {
        DOWN.lock().unwrap().contains(&self.store)
    }

    fn check_up(&self, name: &str) -> InfraResult<()> {
        if !self.down() {
            return Ok(());
        }
        if self.flaw == Flaw::OutageAsNotFound {
            return Err(sandloom_driverkit::secrets::not_found(name));
        }
        Err(InfraError::unavailable("secrets", "the backend is down"))
    }

    fn name<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        match self.flaw {
            Flaw::UnderscoreAsSlash => name.replace('_', "/").into(),
            Flaw::FoldsCase => name.to_lowercase().into(),
            _ => name.into(),
        }
    }

    /// Bend the answer of a read as the flaw says.
    fn bend(&self, name: &str, read: InfraResult<Secret<Vec<u8>>>) -> InfraResult<Secret<Vec<u8>>> {
        let value = match read {
            Ok(value) => value,
            Err(error) => {
                return match (self.flaw, error.kind()) {
                    (Flaw::MissingAsEmpty, ErrorKind::NotFound) => Ok(Secret::new(Vec::new())),
                    (Flaw::NotFoundWithoutName, ErrorKind::NotFound) => {
                        Err(InfraError::not_found("secrets", "no such secret"))
                    }
                    (Flaw::AcceptsBadNames, ErrorKind::InvalidInput) => {
                        Err(sandloom_driverkit::secrets::not_found(name))
                    }
                    (Flaw::TooLargeAsInvalidInput, ErrorKind::Backend) => {
                        Err(InfraError::invalid_input("secrets", "too large"))
                    }
                    _ => Err(error),
                };
            }
        };
        let mut bytes = value.expose().clone();
        match self.flaw {
            Flaw::TrimsValues => bytes.truncate(bytes.trim_ascii_end().len()),
            Flaw::LossyUtf8 => bytes = String::from_utf8_lossy(&bytes).into_owned().into_bytes(),
            Flaw::StopsAtNul => {
                bytes.truncate(bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len()));
            }
            Flaw::ReturnsStaleValue => {
                let mut stale = self.stale.lock().unwrap();
                bytes.clone_from(stale.entry(name.to_owned()).or_insert(bytes.clone()));
            }
            Flaw::LimitOffByOne if bytes.len() == LIMIT => {
                return Err(sandloom_driverkit::secrets::too_large(
                    name,
                    LIMIT as u64,
                    LIMIT,
                ));
            }
            Flaw::LogsValues => {
                tracing::debug!(value = %String::from_utf8_lossy(&bytes), "read a secret");
            }
            _ => {}
        }
        Ok(Secret::new(bytes))
    }
}

impl SecretsOps for Reference {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.check_up(name)?;
        let mapped = self.name(name);
        if self.flaw == Flaw::RefusesLongNames && name.len() > 200 {
            return Err(InfraError::invalid_input(
                "secrets",
                "names are at most 200 bytes",
            ));
        }
        let read = self.inner.get(&mapped).await;
        if self.flaw == Flaw::ValueInErrors
            && read.as_ref().is_err_and(|e| e.kind() == ErrorKind::Backend)
        {
            let value = self.inner_value_unchecked(&mapped);
            return Err(InfraError::new(
                ErrorKind::Backend,
                "secrets",
                format!(
                    "value starting {:?} is too large",
                    String::from_utf8_lossy(&value[..value.len().min(40)])
                ),
            ));
        }
        self.bend(name, read)
    }

    async fn get_version(&self, name: &str, version: u64) -> InfraResult<Secret<Vec<u8>>> {
        self.check_up(name)?;
        match self.flaw {
            Flaw::VersionsAnswerCurrent => self.inner.get(name).await,
            Flaw::VersionZeroIsCurrent if version == 0 => self.inner.get(name).await,
            _ => self.inner.get_version(name, version).await,
        }
    }

    async fn current_version(&self, name: &str) -> InfraResult<u64> {
        self.check_up(name)?;
        self.inner.current_version(name).await
    }

    async fn changes(&self, after: u64, wait: Duration) -> InfraResult<Changes> {
        let answer = match self.flaw {
            Flaw::ChangesDoNotWait => self.inner.changes(after, Duration::ZERO).await,
            Flaw::AcceptsUnknownCursors => {
                let now = self.inner.changes(0, Duration::ZERO).await?.cursor;
                let after = if after > now { 0 } else { after };
                self.inner.changes(after, wait).await
            }
            Flaw::ChangesForgetHistory => {
                let last = self.last_cursor.load(Ordering::SeqCst);
                let answer = self.inner.changes(after.max(last), wait).await?;
                self.last_cursor.store(answer.cursor, Ordering::SeqCst);
                Ok(answer)
            }
            _ => self.inner.changes(after, wait).await,
        }?;
        Ok(match self.flaw {
            Flaw::ChangesNeverFire => Changes::new(answer.cursor, Vec::new()),
            Flaw::ChangesNamesEverything if !answer.names.is_empty() => {
                Changes::new(answer.cursor, self.inner.list("").await?)
            }
            _ => answer,
        })
    }

    async fn list(&self, prefix: &str) -> InfraResult<Vec<String>> {
        let mut names = match self.flaw {
            Flaw::ListIgnoresPrefix => {
                sandloom_driverkit::secrets::check_prefix(prefix)?;
                self.inner.list("").await?
            }
            _ => self.inner.list(prefix).await?,
        };
        if self.flaw == Flaw::ListUnsorted {
            names.reverse();
        }
        Ok(names)
    }
}

impl Reference {
    /// The stored bytes of `name`, whatever their size (for `ValueInErrors`).
    fn inner_value_unchecked(&self, name: &str) -> Vec<u8> {
        let unlimited = MemorySecrets::from_options(MemorySecretsOptions {
            store: Some(self.store.clone()),
            ..Default::default()
        })
        .expect("valid options");
        futures_util::FutureExt::now_or_never(unlimited.get(name))
            .and_then(Result::ok)
            .map(|value| value.expose().clone())
            .unwrap_or_default()
    }
}

impl Driver for Reference {
    type Options = FlawedOptions;

    fn supported_features() -> &'static [&'static str] {
        &[VERSIONS, WATCH, LIST]
    }

    fn features_for(options: &FlawedOptions) -> Vec<&'static str> {
        if options.flaw == Flaw::NoFeatures {
            Vec::new()
        } else {
            vec![VERSIONS, WATCH, LIST]
        }
    }

    fn from_options(options: FlawedOptions) -> Result<Self, DriverError> {
        let limit = if options.flaw == Flaw::NoSizeLimit {
            sandloom_driverkit::secrets::MAX_VALUE_BYTES
        } else {
            LIMIT
        };
        Ok(Self {
            flaw: options.flaw,
            inner: MemorySecrets::from_options(MemorySecretsOptions {
                store: Some(options.store.clone()),
                max_value_bytes: limit,
            })?,
            store: options.store,
            stale: Mutex::default(),
            last_cursor: AtomicU64::new(0),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        if self.flaw != Flaw::WorksAfterStop {
            self.inner.stop().await?;
        }
        Ok(())
    }
}

impl SecretsProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
}

fn seed(request: &KitRequest, seed: &Seed) -> Result<(), String> {
    let store = MemorySecretStore::named(&request.scratch_dir.display().to_string());
    match seed {
        Seed::Set { name, value } => store.set(name, value.clone()).map(drop),
        Seed::Remove { name } => store.remove(name).map(drop),
        _ => return Err(format!("unknown {seed:?}")),
    }
    .map_err(|e| e.to_string())
}

#[allow(clippy::unnecessary_wraps)] // the kit's outage closure may fail
fn outage(request: &KitRequest) -> Result<(), String> {
    DOWN.lock()
        .unwrap()
        .insert(request.scratch_dir.display().to_string());
    Ok(())
}

fn kit(flaw: Flaw) -> SecretsConformance<Reference> {
    SecretsConformance::<Reference>::new(move |request| FlawedOptions {
        flaw,
        store: request.scratch_dir.display().to_string(),
    })
    .seeder(seed)
    .outage(outage)
    .max_value_bytes(LIMIT)
    .secrets([SECRET])
}

// The reference as a driver crate runs it: one named test per obligation.
sandloom_conformance::secrets_conformance!(
    reference: Reference,
    |request| FlawedOptions { flaw: Flaw::None, store: request.scratch_dir.display().to_string() },
    .seeder(seed)
    .outage(outage)
    .max_value_bytes(LIMIT)
);

#[test]
fn the_reference_driver_passes_every_obligation_with_and_without_features() {
    for flaw in [Flaw::None, Flaw::NoFeatures] {
        let failures = kit(flaw).check_all();
        assert!(failures.is_empty(), "{flaw:?}: {failures:#?}");
    }
}

/// Each broken driver and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::TrimsValues, "get_reads_values_exactly"),
    (Flaw::LossyUtf8, "get_reads_values_exactly"),
    (Flaw::StopsAtNul, "get_reads_values_exactly"),
    (Flaw::ReturnsStaleValue, "get_reads_values_exactly"),
    (Flaw::NoSizeLimit, "values_up_to_the_limit_and_none_past_it"),
    (
        Flaw::LimitOffByOne,
        "values_up_to_the_limit_and_none_past_it",
    ),
    (
        Flaw::TooLargeAsInvalidInput,
        "values_up_to_the_limit_and_none_past_it",
    ),
    (
        Flaw::MissingAsEmpty,
        "a_missing_secret_is_not_found_naming_it",
    ),
    (
        Flaw::NotFoundWithoutName,
        "a_missing_secret_is_not_found_naming_it",
    ),
    (
        Flaw::OutageAsNotFound,
        "not_found_and_unavailable_are_distinct",
    ),
    (Flaw::AcceptsBadNames, "invalid_names_are_invalid_input"),
    (Flaw::RefusesLongNames, "names_at_their_limits_are_served"),
    (
        Flaw::UnderscoreAsSlash,
        "names_that_look_alike_are_distinct",
    ),
    (Flaw::FoldsCase, "names_that_look_alike_are_distinct"),
    (Flaw::VersionsAnswerCurrent, "versions_are_read_by_number"),
    (Flaw::VersionZeroIsCurrent, "versions_are_read_by_number"),
    (Flaw::ChangesNeverFire, "changes_signal_every_change"),
    (Flaw::ChangesNamesEverything, "changes_signal_every_change"),
    (Flaw::ChangesForgetHistory, "changes_signal_every_change"),
    (
        Flaw::ChangesDoNotWait,
        "changes_wait_their_time_and_refuse_unknown_cursors",
    ),
    (
        Flaw::AcceptsUnknownCursors,
        "changes_wait_their_time_and_refuse_unknown_cursors",
    ),
    (Flaw::ListUnsorted, "list_answers_names_under_a_prefix"),
    (Flaw::ListIgnoresPrefix, "list_answers_names_under_a_prefix"),
    (Flaw::LogsValues, "values_never_show"),
    (Flaw::ValueInErrors, "values_never_show"),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (Flaw::SecretInDebug, "secrets_never_show"),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, kit);
}

#[test]
fn a_kit_without_a_seeder_fails_every_obligation_saying_so() {
    let kit = SecretsConformance::<Reference>::new(|request| FlawedOptions {
        flaw: Flaw::None,
        store: request.scratch_dir.display().to_string(),
    });
    let failure = kit.check("get_reads_values_exactly").unwrap_err();
    assert!(failure.message.contains("no seeder"), "{failure}");
}

#[test]
fn a_value_limit_outside_the_contract_is_refused() {
    let failures = kit(Flaw::None).max_value_bytes(0).check_all();
    assert_eq!(failures.len(), OBLIGATIONS.len(), "{failures:#?}");
}

#[test]
fn every_flaw_is_tried() {
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    let untried = flaws::untried(
        include_str!("kit_secrets.rs"),
        &tried,
        &["None", "NoFeatures"],
    );
    assert!(untried.is_empty(), "flaws no case tries: {untried:?}");
}
