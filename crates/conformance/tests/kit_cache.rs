//! The cache kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sandloom_conformance::Kit;
use sandloom_conformance::cache::{CacheConformance, OBLIGATIONS};
use sandloom_driverkit::cache::{BULK, CacheOps, CacheProvider, INCREMENT, TTL};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};

/// One way to be wrong, each named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    MissingIsEmpty,
    TruncatesAtNul,
    DropsEmptyValues,
    TruncatesLargeValues,
    FirstWriteWins,
    KeepsValueAfterDelete,
    DeleteAlwaysTrue,
    FoldsNonAsciiKeys,
    AcceptsEmptyKey,
    LosesConcurrentWrites,
    IgnoresTtl,
    SetKeepsTtl,
    TtlWithoutDeclaring,
    RacyIncrement,
    BulkInKeyOrder,
    WorksAfterStop,
    PanicsOnLargeValues,
    ExpiredStillCounts,
    IncrementWraps,
    BulkWritesBeforeChecking,
    EmptyBatchRefused,
    /// Keeps an entry three times as long as its ttl.
    TtlThreeTimesTooLong,
    /// Drops an entry at a third of its ttl.
    TtlEndsEarly,
    /// Shows its password in its `Debug`.
    SecretInDebug,
    /// Shows its password in the error of an empty key.
    SecretInErrors,
    /// Pointed at an unreachable address, fails to start with its password in the error.
    SecretInStartError,
    /// What `SecretInStartError` is built with for an unreachable address.
    UnreachableWithSecret,
    /// Turns a ttl under a millisecond into 0 ms, which it stores as no expiry.
    SubMillisecondTtlNeverExpires,
    /// Reads a ttl over 30 days as a Unix timestamp (memcached's rule): long past, expired.
    LongTtlIsATimestamp,
    /// Keeps a ttl as `i32` seconds: 100 years wraps below zero, expired at once.
    TtlWrapsInI32Seconds,
    /// Keeps only the whole seconds of a ttl of a second or more (1.5 s becomes 1 s).
    TtlTruncatedToWholeSeconds,
    /// Counts every position of `delete_many` whose key had a value when the call began.
    DeleteManyCountsRepeats,
    /// Answers `None` past the 1,000th key of a `get_many`.
    GetManyStopsAtAThousand,
    /// Trims whitespace off a value before it parses it as a counter: `" 5"` counts as 5.
    IncrementAcceptsLooseNumbers,
    /// Counts only values it wrote itself: `set` of `"41"` is not a counter (allowed: no flaw,
    /// see `a_driver_may_refuse_to_count_decimal_text_written_by_set`).
    IncrementRefusesPlainNumbers,
    /// Writes the incremented counter without the entry's expiry.
    IncrementClearsTtl,
    /// Trims whitespace off the ends of keys.
    TrimsKeys,
    /// Lower-cases the key of `increment` only.
    IncrementFoldsCase,
    /// Remembers what `get` read, per thread, and answers it again for a second; only writes
    /// on the same thread forget it.
    ReadsCachedPerThread,
    /// `set_many` over an entry with a ttl keeps that expiry.
    SetManyKeepsTtl,
    /// Its optional operations skip the `Stopped` check (this stand-in models that by letting
    /// them revive the stopped driver).
    OptionalOperationsWorkAfterStop,
    /// Deletes by pattern (as Redis `KEYS` then `DEL` would): `delete("a*")` removes every key
    /// starting with `a`.
    DeleteByPattern,
    /// Cuts keys longer than 1,024 bytes to their first 1,024 (on a character boundary).
    TruncatesKeysPastTheLimit,
    /// Cuts values larger than 1 MiB to their first MiB.
    TruncatesValuesPastTheLimit,
    /// Ends keys at their first NUL character (a C-string backend).
    TruncatesKeysAtNul,
    /// Drops trailing dots and slashes off keys (as a file-backed store might).
    TrimsTrailingDotsAndSlashes,
    /// Gives every entry written without a ttl (`set`, `set_many`, a new counter) one of 2 s.
    DefaultTtlOfTwoSeconds,
}

/// The longest key and the largest value the contract has every driver hold.
const KEY_LIMIT: usize = 1024;
const VALUE_LIMIT: usize = 1024 * 1024;
/// What `DefaultTtlOfTwoSeconds` applies.
const DEFAULT_TTL: Duration = Duration::from_secs(2);

/// The password the broken drivers leak; the kit is told it is secret.
const SECRET: &str = "hunter2";

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = match self.flaw {
            Flaw::SecretInDebug => SECRET,
            _ => "<redacted>",
        };
        f.debug_struct("Reference")
            .field("flaw", &self.flaw)
            .field("password", &password)
            .finish_non_exhaustive()
    }
}

/// What `ReadsCachedPerThread` remembers: per thread and key, the value read and when.
type ReadMemo = HashMap<(std::thread::ThreadId, String), (Option<Bytes>, Instant)>;

struct Reference {
    flaw: Flaw,
    entries: Mutex<HashMap<String, (Bytes, Option<Instant>)>>,
    /// Keys whose value `increment` wrote (`IncrementRefusesPlainNumbers`).
    counters: Mutex<HashSet<String>>,
    memo: Mutex<ReadMemo>,
    stopped: AtomicBool,
}

const NAME: &str = "cache";

impl Reference {
    /// An optional operation's own `Stopped` check: skipped by `OptionalOperationsWorkAfterStop`,
    /// which answers from `check` as if it were still running.
    fn optional(&self) {
        if self.flaw == Flaw::OptionalOperationsWorkAfterStop {
            self.stopped.store(false, Ordering::Release);
        }
    }

    fn check(&self, key: &str) -> InfraResult<String> {
        if self.stopped.load(Ordering::Acquire) && self.flaw != Flaw::WorksAfterStop {
            return Err(InfraError::stopped(NAME));
        }
        if key.is_empty() && self.flaw == Flaw::SecretInErrors {
            return Err(InfraError::invalid_input(
                NAME,
                format!("empty key (server redis://:{SECRET}@127.0.0.1)"),
            ));
        }
        if key.is_empty() && self.flaw != Flaw::AcceptsEmptyKey {
            return Err(InfraError::invalid_input(NAME, "empty key"));
        }
        if self.flaw == Flaw::TrimsKeys {
            return Ok(key.trim().to_owned());
        }
        if self.flaw == Flaw::TruncatesKeysAtNul {
            return Ok(key.split('\0').next().unwrap_or_default().to_owned());
        }
        if self.flaw == Flaw::TrimsTrailingDotsAndSlashes {
            return Ok(key.trim_end_matches(['.', '/']).to_owned());
        }
        if self.flaw == Flaw::TruncatesKeysPastTheLimit && key.len() > KEY_LIMIT {
            let end = (0..=KEY_LIMIT)
                .rev()
                .find(|end| key.is_char_boundary(*end))
                .unwrap_or_default();
            return Ok(key[..end].to_owned());
        }
        if self.flaw == Flaw::FoldsNonAsciiKeys {
            return Ok(key
                .chars()
                .map(|c| if c.is_ascii() { c } else { '?' })
                .collect());
        }
        Ok(key.to_owned())
    }

    /// `ReadsCachedPerThread`: a write forgets what this thread read of `key`, and only that.
    fn forget_read(&self, key: &str) {
        let thread = std::thread::current().id();
        self.memo.lock().unwrap().remove(&(thread, key.to_owned()));
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Bytes, Option<Instant>)>> {
        self.entries.lock().unwrap()
    }

    async fn store(&self, key: &str, value: Bytes, ttl: Option<Duration>) -> InfraResult<()> {
        let key = self.check(key)?;
        let mut value = value;
        match self.flaw {
            Flaw::TruncatesAtNul => {
                let end = value.iter().position(|b| *b == 0).unwrap_or(value.len());
                value = value.slice(..end);
            }
            Flaw::DropsEmptyValues if value.is_empty() => return Ok(()),
            Flaw::TruncatesLargeValues => value = value.slice(..value.len().min(64 * 1024)),
            Flaw::TruncatesValuesPastTheLimit => {
                value = value.slice(..value.len().min(VALUE_LIMIT));
            }
            Flaw::PanicsOnLargeValues if value.len() > 64 * 1024 => panic!("value too large"),
            Flaw::FirstWriteWins if self.map().contains_key(&key) => return Ok(()),
            _ => {}
        }
        let expires = match (ttl, self.flaw) {
            (Some(_), Flaw::IgnoresTtl) => None,
            (None, Flaw::SetKeepsTtl) => self.map().get(&key).and_then(|(_, at)| *at),
            (None, Flaw::DefaultTtlOfTwoSeconds) => Some(Instant::now() + DEFAULT_TTL),
            (Some(ttl), Flaw::TtlThreeTimesTooLong) => Some(Instant::now() + ttl * 3),
            (Some(ttl), Flaw::TtlEndsEarly) => Some(Instant::now() + ttl / 3),
            (Some(ttl), Flaw::SubMillisecondTtlNeverExpires) if ttl.as_millis() == 0 => None,
            (Some(ttl), Flaw::LongTtlIsATimestamp) if ttl > Duration::from_hours(30 * 24) => {
                Some(Instant::now())
            }
            (Some(ttl), Flaw::TtlWrapsInI32Seconds) => {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let seconds = (ttl.as_secs() as i32).max(0) as u64;
                Some(Instant::now() + Duration::from_secs(seconds))
            }
            (Some(ttl), Flaw::TtlTruncatedToWholeSeconds) if ttl >= Duration::from_secs(1) => {
                Some(Instant::now() + Duration::from_secs(ttl.as_secs()))
            }
            // A deadline past what an `Instant` holds: never expires.
            (ttl, _) => ttl.and_then(|ttl| Instant::now().checked_add(ttl)),
        };
        self.counters.lock().unwrap().remove(&key);
        self.forget_read(&key);
        if self.flaw == Flaw::LosesConcurrentWrites {
            let mut copy = self.map().clone();
            tokio::task::yield_now().await;
            copy.insert(key, (value, expires));
            *self.map() = copy;
        } else {
            self.map().insert(key, (value, expires));
        }
        Ok(())
    }

    /// Drop `key`'s entry if its ttl passed, unless the flaw keeps expired entries for every
    /// operation but `get`.
    fn purge(&self, map: &mut HashMap<String, (Bytes, Option<Instant>)>, key: &str, reading: bool) {
        if !reading && self.flaw == Flaw::ExpiredStillCounts {
            return;
        }
        if let Some((_, Some(at))) = map.get(key)
            && *at <= Instant::now()
        {
            map.remove(key);
        }
    }

    /// `ExpiredStillCounts`: an entry that `get` sees expired is kept (marked by no expiry in
    /// the past) for the other operations.
    fn load(&self, key: &str) -> InfraResult<Option<Bytes>> {
        let key = self.check(key)?;
        if self.flaw == Flaw::ReadsCachedPerThread {
            let thread = std::thread::current().id();
            let memo = self
                .memo
                .lock()
                .unwrap()
                .get(&(thread, key.clone()))
                .cloned();
            if let Some((value, at)) = memo
                && at.elapsed() < Duration::from_secs(1)
            {
                return Ok(value);
            }
            let value = self.read(&key);
            self.memo
                .lock()
                .unwrap()
                .insert((thread, key), (value.clone(), Instant::now()));
            return Ok(value);
        }
        Ok(self.read(&key))
    }

    fn read(&self, key: &str) -> Option<Bytes> {
        let key = key.to_owned();
        let mut map = self.map();
        if self.flaw == Flaw::ExpiredStillCounts
            && let Some((_, Some(at))) = map.get(&key)
            && *at <= Instant::now()
        {
            return None;
        }
        self.purge(&mut map, &key, true);
        match map.get(&key) {
            Some((value, _)) => Some(value.clone()),
            None if self.flaw == Flaw::MissingIsEmpty => Some(Bytes::new()),
            None => None,
        }
    }
}

impl CacheOps for Reference {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        self.load(key)
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        self.store(key, value, None).await
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        let key = self.check(key)?;
        let mut map = self.map();
        self.purge(&mut map, &key, false);
        let existed = match self.flaw {
            Flaw::KeepsValueAfterDelete => map.contains_key(&key),
            Flaw::DeleteByPattern if key.ends_with('*') => {
                let prefix = &key[..key.len() - 1];
                let before = map.len();
                map.retain(|stored, _| !stored.starts_with(prefix));
                map.len() < before
            }
            _ => map.remove(&key).is_some(),
        };
        drop(map);
        self.forget_read(&key);
        Ok(existed || self.flaw == Flaw::DeleteAlwaysTrue)
    }

    async fn set_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> InfraResult<()> {
        self.optional();
        if self.flaw == Flaw::TtlWithoutDeclaring {
            return self.store(key, value, Some(ttl)).await;
        }
        if ttl.is_zero() {
            return Err(InfraError::invalid_input(NAME, "zero ttl"));
        }
        self.store(key, value, Some(ttl)).await
    }

    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        self.optional();
        let mut key = self.check(key)?;
        if self.flaw == Flaw::IncrementFoldsCase {
            key = key.to_lowercase();
        }
        let loose = self.flaw == Flaw::IncrementAcceptsLooseNumbers;
        let own_only = self.flaw == Flaw::IncrementRefusesPlainNumbers;
        let counters = self.counters.lock().unwrap().clone();
        let read = |map: &HashMap<String, (Bytes, Option<Instant>)>| -> InfraResult<i64> {
            let not_a_counter = || InfraError::conflict(NAME, "not a counter");
            match map.get(&key) {
                None => Ok(0),
                Some(_) if own_only && !counters.contains(&key) => Err(not_a_counter()),
                Some((value, _)) => std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| {
                        s.parse::<i64>()
                            .ok()
                            .or_else(|| loose.then(|| s.trim().parse().ok()).flatten())
                    })
                    .ok_or_else(not_a_counter),
            }
        };
        let expiry = |map: &HashMap<String, (Bytes, Option<Instant>)>| match self.flaw {
            Flaw::IncrementClearsTtl => None,
            Flaw::DefaultTtlOfTwoSeconds if !map.contains_key(&key) => {
                Some(Instant::now() + DEFAULT_TTL)
            }
            _ => map.get(&key).and_then(|(_, at)| *at),
        };
        if self.flaw == Flaw::RacyIncrement {
            let current = read(&self.map())?;
            tokio::task::yield_now().await;
            self.map().insert(
                key.clone(),
                (Bytes::from((current + delta).to_string()), None),
            );
            self.counters.lock().unwrap().insert(key);
            return Ok(current + delta);
        }
        let mut map = self.map();
        self.purge(&mut map, &key, false);
        let current = read(&map)?;
        let next = match self.flaw {
            Flaw::IncrementWraps => current.wrapping_add(delta),
            _ => current
                .checked_add(delta)
                .ok_or_else(|| InfraError::conflict(NAME, "the counter would overflow"))?,
        };
        let expires = expiry(&map);
        map.insert(key.clone(), (Bytes::from(next.to_string()), expires));
        drop(map);
        self.counters.lock().unwrap().insert(key.clone());
        self.forget_read(&key);
        Ok(next)
    }

    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        self.optional();
        if keys.is_empty() && self.flaw == Flaw::EmptyBatchRefused {
            return Err(InfraError::invalid_input(NAME, "no keys"));
        }
        let mut keys = keys.to_vec();
        if self.flaw == Flaw::BulkInKeyOrder {
            keys.sort_unstable();
        }
        let mut values: Vec<Option<Bytes>> = keys
            .iter()
            .map(|key| self.load(key))
            .collect::<InfraResult<_>>()?;
        if self.flaw == Flaw::GetManyStopsAtAThousand {
            values.iter_mut().skip(1000).for_each(|value| *value = None);
        }
        Ok(values)
    }

    async fn set_many(&self, entries: &[(&str, Bytes)]) -> InfraResult<()> {
        self.optional();
        if self.flaw != Flaw::BulkWritesBeforeChecking {
            for (key, _) in entries {
                self.check(key)?;
            }
        }
        for (key, value) in entries {
            let kept = match self.flaw {
                Flaw::SetManyKeepsTtl => self
                    .map()
                    .get(*key)
                    .and_then(|(_, at)| *at)
                    .map(|at| at.saturating_duration_since(Instant::now())),
                _ => None,
            };
            self.store(key, value.clone(), kept).await?;
        }
        Ok(())
    }

    async fn delete_many(&self, keys: &[&str]) -> InfraResult<u64> {
        self.optional();
        if self.flaw != Flaw::BulkWritesBeforeChecking {
            for key in keys {
                self.check(key)?;
            }
        }
        if self.flaw == Flaw::DeleteManyCountsRepeats {
            let mut count = 0;
            for key in keys {
                count += u64::from(self.load(key)?.is_some());
            }
            for key in keys {
                self.delete(key).await?;
            }
            return Ok(count);
        }
        let mut count = 0;
        for key in keys {
            count += u64::from(self.delete(key).await?);
        }
        Ok(count)
    }
}

impl Driver for Reference {
    type Options = Flaw;

    fn supported_features() -> &'static [&'static str] {
        &[TTL, INCREMENT, BULK]
    }

    fn features_for(flaw: &Flaw) -> Vec<&'static str> {
        match flaw {
            Flaw::TtlWithoutDeclaring => vec![INCREMENT, BULK],
            _ => vec![TTL, INCREMENT, BULK],
        }
    }

    fn from_options(flaw: Flaw) -> Result<Self, DriverError> {
        Ok(Self {
            flaw,
            entries: Mutex::new(HashMap::new()),
            counters: Mutex::new(HashSet::new()),
            memo: Mutex::new(HashMap::new()),
            stopped: AtomicBool::new(false),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        if self.flaw == Flaw::UnreachableWithSecret {
            return Err(DriverError::new(format!(
                "cannot connect to redis://:{SECRET}@127.0.0.1:1"
            )));
        }
        Ok(())
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl CacheProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[test]
fn the_reference_driver_passes_every_obligation() {
    let failures = CacheConformance::<Reference>::new(|_| Flaw::None)
        .secrets([SECRET])
        .check_all();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The kit for `flaw`, told the password is secret; an unreachable instance of
/// `SecretInStartError` fails its start with the password.
fn kit(flaw: Flaw) -> CacheConformance<Reference> {
    CacheConformance::<Reference>::new(move |request| match flaw {
        Flaw::SecretInStartError if request.unreachable => Flaw::UnreachableWithSecret,
        Flaw::SecretInStartError => Flaw::None,
        flaw => flaw,
    })
    .secrets([SECRET])
}

#[test]
fn each_leak_of_a_secret_is_caught_and_not_repeated() {
    for (flaw, shown_in) in [
        (Flaw::SecretInDebug, "the Debug of the started driver"),
        (
            Flaw::SecretInErrors,
            "the Display of an error of the started driver (invalid_input)",
        ),
        (
            Flaw::SecretInStartError,
            "the Display of the error of `start` (an instance pointed at",
        ),
    ] {
        let failure = kit(flaw).check("secrets_never_show").unwrap_err();
        assert!(
            failure
                .message
                .contains(&format!("declared secret #1 shows in {shown_in}")),
            "{flaw:?}: {failure}"
        );
        assert!(!failure.message.contains(SECRET), "{flaw:?}: {failure}");
    }
}

#[test]
fn an_empty_secret_is_refused() {
    let failure = CacheConformance::<Reference>::new(|_| Flaw::None)
        .secrets(["", SECRET])
        .check("secrets_never_show")
        .unwrap_err();
    assert!(
        failure
            .message
            .contains("an empty value was declared secret"),
        "{failure}"
    );
}

/// Each broken driver and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::MissingIsEmpty, "get_missing_key_returns_none"),
    (Flaw::TruncatesAtNul, "binary_values_round_trip_exactly"),
    (Flaw::DropsEmptyValues, "empty_value_round_trips"),
    (Flaw::TruncatesLargeValues, "large_value_round_trips"),
    (Flaw::PanicsOnLargeValues, "large_value_round_trips"),
    (Flaw::FirstWriteWins, "set_overwrites"),
    (
        Flaw::KeepsValueAfterDelete,
        "delete_reports_existence_and_removes",
    ),
    (
        Flaw::DeleteAlwaysTrue,
        "delete_reports_existence_and_removes",
    ),
    (Flaw::FoldsNonAsciiKeys, "long_and_non_ascii_keys_work"),
    (Flaw::AcceptsEmptyKey, "empty_key_is_invalid_input"),
    (
        Flaw::LosesConcurrentWrites,
        "concurrent_tasks_lose_no_writes",
    ),
    (Flaw::IgnoresTtl, "ttl_entries_expire"),
    (Flaw::SetKeepsTtl, "ttl_entries_expire"),
    (Flaw::TtlWithoutDeclaring, "ttl_entries_expire"),
    (Flaw::RacyIncrement, "increment_is_atomic"),
    (Flaw::BulkInKeyOrder, "bulk_operations_work"),
    (
        Flaw::ExpiredStillCounts,
        "expiry_is_seen_by_every_operation",
    ),
    (Flaw::IncrementWraps, "increment_at_the_limits"),
    (
        Flaw::BulkWritesBeforeChecking,
        "every_operation_refuses_an_empty_key",
    ),
    (Flaw::EmptyBatchRefused, "empty_batches_are_no_ops"),
    (Flaw::TtlThreeTimesTooLong, "ttl_entries_expire"),
    (
        Flaw::TtlThreeTimesTooLong,
        "expiry_is_seen_by_every_operation",
    ),
    (Flaw::TtlEndsEarly, "ttl_entries_expire"),
    (Flaw::SecretInDebug, "secrets_never_show"),
    (Flaw::SecretInErrors, "secrets_never_show"),
    (Flaw::SecretInStartError, "secrets_never_show"),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (Flaw::SetManyKeepsTtl, "expiry_is_seen_by_every_operation"),
    (
        Flaw::OptionalOperationsWorkAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::SubMillisecondTtlNeverExpires,
        "ttl_extremes_are_accepted",
    ),
    (Flaw::LongTtlIsATimestamp, "ttl_extremes_are_accepted"),
    (Flaw::TtlWrapsInI32Seconds, "ttl_extremes_are_accepted"),
    (
        Flaw::TtlTruncatedToWholeSeconds,
        "sub_second_ttls_are_exact",
    ),
    (Flaw::TtlThreeTimesTooLong, "sub_second_ttls_are_exact"),
    (
        Flaw::DeleteManyCountsRepeats,
        "bulk_handles_repeated_keys_and_large_batches",
    ),
    (
        Flaw::GetManyStopsAtAThousand,
        "bulk_handles_repeated_keys_and_large_batches",
    ),
    (
        Flaw::IncrementAcceptsLooseNumbers,
        "counters_are_plain_decimal_values",
    ),
    (
        Flaw::IncrementClearsTtl,
        "counters_are_plain_decimal_values",
    ),
    (Flaw::TrimsKeys, "near_identical_keys_are_distinct"),
    (Flaw::IncrementFoldsCase, "near_identical_keys_are_distinct"),
    (Flaw::DeleteByPattern, "near_identical_keys_are_distinct"),
    (
        Flaw::ReadsCachedPerThread,
        "writes_are_seen_at_once_by_other_tasks",
    ),
    (
        Flaw::TruncatesKeysPastTheLimit,
        "keys_and_values_at_and_past_their_limits",
    ),
    (
        Flaw::TruncatesValuesPastTheLimit,
        "keys_and_values_at_and_past_their_limits",
    ),
    (
        Flaw::DefaultTtlOfTwoSeconds,
        "entries_without_ttl_never_expire",
    ),
    (
        Flaw::TruncatesKeysAtNul,
        "keys_and_values_at_and_past_their_limits",
    ),
    (
        Flaw::TrimsTrailingDotsAndSlashes,
        "near_identical_keys_are_distinct",
    ),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, kit);
}

/// The contract lets a driver count decimal text written by `set`, or refuse it: a kit that
/// failed either would fail correct drivers.
#[test]
fn a_driver_may_refuse_to_count_decimal_text_written_by_set() {
    for obligation in [
        "counters_are_plain_decimal_values",
        "increment_is_atomic",
        "increment_at_the_limits",
    ] {
        let result = kit(Flaw::IncrementRefusesPlainNumbers).check(obligation);
        assert!(result.is_ok(), "{obligation}: {result:?}");
    }
}

#[test]
fn a_panicking_driver_is_a_failed_obligation_not_a_crash() {
    let failure = CacheConformance::<Reference>::new(|_| Flaw::PanicsOnLargeValues)
        .check("large_value_round_trips")
        .unwrap_err();
    assert!(
        failure.message.contains("panicked: value too large"),
        "{failure}"
    );
}

#[test]
fn an_unknown_obligation_is_a_failure() {
    let failure = CacheConformance::<Reference>::new(|_| Flaw::None)
        .check("no_such_thing")
        .unwrap_err();
    assert!(failure.message.contains("no such obligation"), "{failure}");
}

#[test]
fn a_ttl_kept_too_long_is_caught_within_the_declared_tolerance_only() {
    let strict = CacheConformance::<Reference>::new(|_| Flaw::TtlThreeTimesTooLong);
    let failure = strict.check("ttl_entries_expire").unwrap_err();
    assert!(failure.message.contains("declared tolerance"), "{failure}");
    // 600 ms late is within a declared second: the setting is what the obligation holds to.
    let widened = CacheConformance::<Reference>::new(|_| Flaw::TtlThreeTimesTooLong)
        .tolerance(Duration::from_secs(1));
    assert_eq!(widened.check("ttl_entries_expire"), Ok(()));
}

#[test]
fn a_tolerance_above_the_maximum_is_refused_by_every_obligation() {
    let kit = CacheConformance::<Reference>::new(|_| Flaw::None).tolerance(Duration::from_secs(6));
    let failures = kit.check_all();
    assert_eq!(failures.len(), OBLIGATIONS.len(), "{failures:#?}");
    assert!(
        failures[0]
            .message
            .contains("a timing tolerance of 6s is above the maximum of 5s"),
        "{}",
        failures[0]
    );
}

#[test]
fn every_flaw_is_tried() {
    // A flaw added to the enum but not to `CASES` would prove nothing.
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    // `UnreachableWithSecret` is what `SecretInStartError` builds; `IncrementRefusesPlainNumbers`
    // is allowed (a_driver_may_refuse_to_count_decimal_text_written_by_set).
    let not_flaws = [
        "None",
        "UnreachableWithSecret",
        "IncrementRefusesPlainNumbers",
    ];
    let untried = flaws::untried(include_str!("kit_cache.rs"), &tried, &not_flaws);
    assert!(untried.is_empty(), "flaws no test tries: {untried:?}");
}
