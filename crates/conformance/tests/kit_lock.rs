//! The lock kit against deliberately broken drivers: each flaw must be caught by the
//! obligation named for it, and the flawless reference driver must pass every obligation.

#[path = "support/flaws.rs"]
mod flaws;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use sandloom_conformance::Kit;
use sandloom_conformance::lock::{LockConformance, OBLIGATIONS};
use sandloom_driverkit::lock::{Lease, LockOps, LockProvider};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};

/// One way to be wrong, each named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
enum Flaw {
    None,
    ExpiryNotSet,
    AcquireOverwrites,
    ReleaseDoesNotFree,
    ReleaseIgnoresToken,
    TokenPerName,
    RefreshIgnoresToken,
    ExpiredLeasesNeverFreed,
    ReleaseOfExpiredAnswersTrue,
    /// Judges a lease by the `expires_at` the caller hands back, not by the lock's own expiry:
    /// a lease value from before a shortening refresh, or a made-up one, outlives the lease.
    TrustsCallersExpiry,
    RefreshRevivesExpired,
    RefreshDoesNotExtend,
    TwoHolders,
    AcceptsZeroTtl,
    AcceptsEmptyName,
    FoldsCase,
    PanicsOnNonAsciiNames,
    WorksAfterStop,
    RefusedAcquireResetsExpiry,
    EvictsAtAThousand,
    DeclaresUnknownFeature,
    /// Reports every lease as expiring 2 s after its ttl.
    ExpiryReportedLate,
    /// Holds a lock for three times the lease's ttl.
    LeaseOutlivesTtl,
    /// Frees a lock at a third of the lease's ttl.
    LeaseEndsEarly,
    /// Shows its password in its `Debug`.
    SecretInDebug,
    /// Shows its password in the error of an empty name.
    SecretInErrors,
    /// Refuses a ttl under a millisecond (0 ms once in its unit) as a zero ttl.
    SubMillisecondTtlRefused,
    /// Refuses a ttl of more than ten years as too large to hold.
    HugeTtlRefused,
    /// Reports a lease's expiry from the ttl in `u32` milliseconds: 400 days wrap to 55 hours.
    ExpiryWrapsAtU32Millis,
    /// Keeps only the whole seconds of a ttl of a second or more (1.5 s becomes 1 s).
    LeaseTruncatedToWholeSeconds,
    /// `refresh` only ever lengthens a lease: a shorter ttl than what is left changes nothing.
    RefreshOnlyExtends,
    /// `refresh` hands out a new token; the lease value from before no longer matches.
    RefreshIssuesNewToken,
    /// Takes over an expired lock by check, then set: racing acquirers all win it.
    TwoHoldersOfAnExpiredLock,
    /// `refresh` removes the lease and inserts it again: a concurrent refresh finds no holder.
    RefreshRemovesThenReinserts,
    /// Trims whitespace off the ends of names.
    TrimsNames,
    /// `release` checks the token, then deletes whatever the name holds by then: an expired
    /// holder's release deletes the lease of whoever took the lock over in between.
    ReleaseChecksThenDeletes,
    /// Fences are the wall clock's milliseconds: two grants within one millisecond share one.
    FenceFromClockMillis,
    /// The fence counter lives beside the lease, so a release resets it: grants start at 1.
    FenceRestartsAfterRelease,
    /// A takeover of an expired lease keeps that lease's fence.
    TakeoverKeepsFence,
    /// `refresh` mints a new fence.
    RefreshBumpsFence,
    /// `acquire_wait` answers `None` at once instead of waiting for its timeout.
    WaitGivesUpAtOnce,
    /// `acquire_wait` waits twice its timeout.
    WaitOverstaysItsTimeout,
    /// `acquire_wait` does not wake on a release, only at the holder's end or its timeout.
    WaitSleepsThroughRelease,
    /// `acquire_wait` woken by a release takes the lock without checking it is still free.
    WaitTakesWithoutCheck,
    /// `acquire_wait` does not check whether the driver was stopped.
    WaitWorksAfterStop,
    /// `refresh` holds the lease for half its ttl (a unit mix-up): a keep-alive renewing at a
    /// third of the ttl keeps it, but a renewal that hangs lets a contender in early.
    RefreshHoldsHalfTtl,
    /// `refresh` of a lease no longer held answers it unchanged, as if renewed (a script's
    /// "not held" read as success).
    RefreshOfALostLeaseSucceeds,
    /// Ends names at their first NUL character (a C-string backend).
    TruncatesNamesAtNul,
    /// Percent-decodes names (as a lock kept under a URL path might): `kit-j%6Fb` is `kit-job`.
    PercentDecodesNames,
    /// Reads an `acquire_wait` timeout over 10 years as no wait at all (an overflow guard).
    WaitTreatsHugeTimeoutsAsZero,
    /// Cuts names longer than 1,024 bytes to their first 1,024 (on a character boundary).
    TruncatesNamesPastTheLimit,
    /// Holds no lock longer than 2 s, whatever the ttl (and reports the ttl asked for).
    LeasesCappedAtTwoSeconds,
    /// `refresh` sets the lease to `ttl` from its acquire, not from the refresh.
    RefreshCountsFromTheAcquire,
}

/// The longest name the contract has every driver hold.
const NAME_LIMIT: usize = 1024;
/// What `LeasesCappedAtTwoSeconds` caps every lease to.
const CAP: Duration = Duration::from_secs(2);

/// The longest lease the reference holds: 1,000 years (a longer ttl is held this long).
const LONGEST: Duration = Duration::from_hours(1000 * 365 * 24);

/// The password the broken drivers leak; the kit is told it is secret.
const SECRET: &str = "hunter2";

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = match self.flaw {
            Flaw::SecretInDebug => SECRET,
            _ => "<redacted>",
        };
        f.debug_struct("Reference")
            .field("password", &password)
            .finish_non_exhaustive()
    }
}

struct Held {
    /// When the lease was granted by an `acquire` (`RefreshCountsFromTheAcquire`).
    granted: Instant,
    token: String,
    fence: u64,
    until: Instant,
}

struct Reference {
    flaw: Flaw,
    held: Mutex<HashMap<String, Held>>,
    issued: AtomicU64,
    /// The last fence minted.
    fence: AtomicU64,
    /// Woken by every release.
    released: tokio::sync::Notify,
    stopped: AtomicBool,
}

const NAME: &str = "lock";

impl Reference {
    fn table(&self) -> MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap()
    }

    /// The table key of `name`, after the usual checks.
    fn key(&self, name: &str) -> InfraResult<String> {
        if self.stopped.load(Ordering::Acquire) && self.flaw != Flaw::WorksAfterStop {
            return Err(InfraError::stopped(NAME));
        }
        if name.is_empty() && self.flaw == Flaw::SecretInErrors {
            return Err(InfraError::invalid_input(
                NAME,
                format!("empty lock name (server redis://:{SECRET}@127.0.0.1)"),
            ));
        }
        if name.is_empty() && self.flaw != Flaw::AcceptsEmptyName {
            return Err(InfraError::invalid_input(NAME, "empty lock name"));
        }
        assert!(
            self.flaw != Flaw::PanicsOnNonAsciiNames || name.is_ascii(),
            "lock names must be ASCII"
        );
        Ok(match self.flaw {
            Flaw::FoldsCase => name.to_lowercase(),
            Flaw::TrimsNames => name.trim().to_owned(),
            Flaw::PercentDecodesNames => name.replace("%6F", "o"),
            Flaw::TruncatesNamesAtNul => name.split('\0').next().unwrap_or_default().to_owned(),
            Flaw::TruncatesNamesPastTheLimit if name.len() > NAME_LIMIT => {
                let end = (0..=NAME_LIMIT)
                    .rev()
                    .find(|end| name.is_char_boundary(*end))
                    .unwrap_or_default();
                name[..end].to_owned()
            }
            _ => name.to_owned(),
        })
    }

    fn check_ttl(&self, ttl: Duration) -> InfraResult<()> {
        if ttl.is_zero() && self.flaw != Flaw::AcceptsZeroTtl {
            return Err(InfraError::invalid_input(NAME, "zero ttl"));
        }
        if ttl.as_millis() == 0 && self.flaw == Flaw::SubMillisecondTtlRefused {
            return Err(InfraError::invalid_input(
                NAME,
                "zero ttl (in milliseconds)",
            ));
        }
        if ttl > Duration::from_hours(10 * 365 * 24) && self.flaw == Flaw::HugeTtlRefused {
            return Err(InfraError::invalid_input(NAME, "the ttl is too large"));
        }
        Ok(())
    }

    /// The ttl the reference holds a lease for: at most [`LONGEST`], and whole seconds only for
    /// `LeaseTruncatedToWholeSeconds`.
    fn held_for(&self, ttl: Duration) -> Duration {
        match self.flaw {
            Flaw::LeaseTruncatedToWholeSeconds if ttl >= Duration::from_secs(1) => {
                Duration::from_secs(ttl.as_secs())
            }
            _ => ttl.min(LONGEST),
        }
    }

    fn token(&self, name: &str) -> String {
        match self.flaw {
            Flaw::TokenPerName => format!("token-{name}"),
            _ => format!("token-{}", self.issued.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The fence of a new grant of `key`, whose table entry (if any) is `previous`.
    fn mint(&self, previous: Option<&Held>) -> u64 {
        match (self.flaw, previous) {
            (Flaw::FenceFromClockMillis, _) => SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_millis() as u64),
            (Flaw::FenceRestartsAfterRelease, previous) => {
                previous.map_or(1, |held| held.fence + 1)
            }
            (Flaw::TakeoverKeepsFence, Some(held)) => held.fence,
            _ => self.fence.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }

    fn lease(&self, name: &str, token: String, fence: u64, ttl: Duration) -> Lease {
        let expires_at = match self.flaw {
            Flaw::ExpiryNotSet => SystemTime::UNIX_EPOCH,
            Flaw::ExpiryReportedLate => SystemTime::now() + ttl + Duration::from_secs(2),
            Flaw::ExpiryWrapsAtU32Millis => {
                SystemTime::now() + Duration::from_millis(u64::from(ttl.as_millis() as u32))
            }
            _ => SystemTime::now() + self.held_for(ttl),
        };
        Lease::new(name, token, fence, expires_at)
    }

    fn is_held(&self, key: &str) -> bool {
        self.table().get(key).is_some_and(|held| {
            self.flaw == Flaw::ExpiredLeasesNeverFreed || held.until > Instant::now()
        })
    }
}

impl LockOps for Reference {
    async fn acquire(&self, name: &str, ttl: Duration) -> InfraResult<Option<Lease>> {
        let key = self.key(name)?;
        self.check_ttl(ttl)?;
        let token = self.token(name);
        let mut held = Held {
            granted: Instant::now(),
            token: token.clone(),
            fence: 0,
            until: Instant::now()
                + match self.flaw {
                    Flaw::LeaseOutlivesTtl => ttl * 3,
                    Flaw::LeaseEndsEarly => ttl / 3,
                    Flaw::LeasesCappedAtTwoSeconds => ttl.min(CAP),
                    _ => self.held_for(ttl),
                },
        };
        if self.flaw == Flaw::TwoHoldersOfAnExpiredLock
            && self
                .table()
                .get(&key)
                .is_some_and(|held| held.until <= Instant::now())
        {
            // Check, then set, on the way of an expired lease only.
            tokio::task::yield_now().await;
            let mut table = self.table();
            held.fence = self.mint(table.get(&key));
            let fence = held.fence;
            table.insert(key, held);
            return Ok(Some(self.lease(name, token, fence, ttl)));
        }
        if self.flaw == Flaw::TwoHolders {
            // Check, then set: another acquirer slips in between.
            if self.is_held(&key) {
                return Ok(None);
            }
            tokio::task::yield_now().await;
            let mut table = self.table();
            held.fence = self.mint(table.get(&key));
            let fence = held.fence;
            table.insert(key, held);
            return Ok(Some(self.lease(name, token, fence, ttl)));
        }
        let mut table = self.table();
        let occupied = table.get(&key).is_some_and(|held| {
            self.flaw == Flaw::ExpiredLeasesNeverFreed || held.until > Instant::now()
        });
        if self.flaw == Flaw::EvictsAtAThousand && table.len() >= 1000 {
            // A bounded table that makes room by dropping leases still held.
            table.clear();
        }
        if occupied && self.flaw != Flaw::AcquireOverwrites {
            if self.flaw == Flaw::RefusedAcquireResetsExpiry
                && let Some(current) = table.get_mut(&key)
            {
                // The refused caller's ttl lands on the holder's lease.
                current.until = held.until;
            }
            return Ok(None);
        }
        held.fence = self.mint(table.get(&key));
        let fence = held.fence;
        table.insert(key, held);
        Ok(Some(self.lease(name, token, fence, ttl)))
    }

    async fn acquire_wait(
        &self,
        name: &str,
        ttl: Duration,
        timeout: Duration,
    ) -> InfraResult<Option<Lease>> {
        if self.flaw == Flaw::WaitWorksAfterStop && self.stopped.load(Ordering::Acquire) {
            // Waits on a table nobody will release anything in again.
            tokio::time::sleep(timeout.min(Duration::from_millis(10))).await;
            return Ok(None);
        }
        let timeout = match self.flaw {
            Flaw::WaitGivesUpAtOnce => Duration::ZERO,
            Flaw::WaitOverstaysItsTimeout => timeout * 2,
            Flaw::WaitTreatsHugeTimeoutsAsZero if timeout > Duration::from_hours(10 * 365 * 24) => {
                Duration::ZERO
            }
            _ => timeout,
        };
        let deadline = tokio::time::Instant::now() + timeout;
        let mut woken = false;
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if woken && self.flaw == Flaw::WaitTakesWithoutCheck {
                let key = self.key(name)?;
                let token = self.token(name);
                let fence = self.mint(None);
                let until = Instant::now() + self.held_for(ttl);
                self.table().insert(
                    key,
                    Held {
                        granted: Instant::now(),
                        token: token.clone(),
                        fence,
                        until,
                    },
                );
                return Ok(Some(self.lease(name, token, fence, ttl)));
            }
            if let Some(lease) = self.acquire(name, ttl).await? {
                return Ok(Some(lease));
            }
            let key = self.key(name)?;
            let holder_end = self.table().get(&key).map(|held| held.until.into());
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            let wake = holder_end.map_or(deadline, |end: tokio::time::Instant| end.min(deadline));
            if self.flaw == Flaw::WaitSleepsThroughRelease {
                tokio::time::sleep_until(wake).await;
                continue;
            }
            tokio::select! {
                () = released => woken = true,
                () = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    async fn release(&self, lease: &Lease) -> InfraResult<bool> {
        let key = self.key(&lease.name)?;
        if self.flaw == Flaw::ReleaseChecksThenDeletes {
            let valid = match self.table().get(&key) {
                Some(held) if held.token == lease.token => held.until > Instant::now(),
                _ => return Ok(false),
            };
            // A window the racing acquires land in however loaded the machine is: one
            // `yield_now` let every contender finish first under a busy CI run, and the flaw
            // went uncaught.
            tokio::time::sleep(Duration::from_millis(25)).await;
            self.table().remove(&key);
            self.released.notify_waiters();
            return Ok(valid);
        }
        let mut table = self.table();
        let Some(held) = table.get(&key) else {
            return Ok(false);
        };
        if held.token != lease.token && self.flaw != Flaw::ReleaseIgnoresToken {
            return Ok(false);
        }
        let valid = match self.flaw {
            Flaw::ReleaseOfExpiredAnswersTrue => true,
            Flaw::TrustsCallersExpiry => lease.expires_at > SystemTime::now(),
            _ => held.until > Instant::now(),
        };
        if self.flaw != Flaw::ReleaseDoesNotFree {
            table.remove(&key);
        }
        drop(table);
        self.released.notify_waiters();
        Ok(valid)
    }

    async fn refresh(&self, lease: &Lease, ttl: Duration) -> InfraResult<Lease> {
        let key = self.key(&lease.name)?;
        self.check_ttl(ttl)?;
        if self.flaw == Flaw::RefreshRemovesThenReinserts {
            let removed = {
                let mut table = self.table();
                match table.get(&key) {
                    Some(held) if held.token == lease.token && held.until > Instant::now() => {
                        table.remove(&key)
                    }
                    _ => None,
                }
            };
            let Some(held) = removed else {
                return Err(InfraError::conflict(NAME, "not held by this token"));
            };
            tokio::task::yield_now().await;
            let until = Instant::now() + self.held_for(ttl);
            let fence = held.fence;
            self.table().insert(
                key,
                Held {
                    granted: held.granted,
                    token: held.token,
                    fence,
                    until,
                },
            );
            return Ok(self.lease(&lease.name, lease.token.clone(), fence, ttl));
        }
        let mut table = self.table();
        if self.flaw == Flaw::RefreshOfALostLeaseSucceeds
            && table
                .get(&key)
                .is_none_or(|held| held.token != lease.token || held.until <= Instant::now())
        {
            return Ok(lease.clone());
        }
        let Some(held) = table.get_mut(&key) else {
            return Err(InfraError::conflict(NAME, "not held"));
        };
        if held.token != lease.token && self.flaw != Flaw::RefreshIgnoresToken {
            return Err(InfraError::conflict(NAME, "held by another token"));
        }
        let expired = match self.flaw {
            Flaw::RefreshRevivesExpired => false,
            Flaw::TrustsCallersExpiry => lease.expires_at <= SystemTime::now(),
            _ => held.until <= Instant::now(),
        };
        if expired {
            return Err(InfraError::conflict(NAME, "expired"));
        }
        let until = match self.flaw {
            Flaw::LeasesCappedAtTwoSeconds => Instant::now() + ttl.min(CAP),
            Flaw::RefreshCountsFromTheAcquire => held.granted + self.held_for(ttl),
            Flaw::RefreshHoldsHalfTtl => Instant::now() + self.held_for(ttl) / 2,
            _ => Instant::now() + self.held_for(ttl),
        };
        match self.flaw {
            Flaw::RefreshDoesNotExtend => {}
            Flaw::RefreshOnlyExtends => {
                let kept = held.until.max(until);
                held.until = kept;
                let expires_at = SystemTime::now() + kept.saturating_duration_since(Instant::now());
                return Ok(Lease::new(
                    lease.name.clone(),
                    lease.token.clone(),
                    held.fence,
                    expires_at,
                ));
            }
            Flaw::RefreshIssuesNewToken => {
                let token = self.token(&lease.name);
                held.token.clone_from(&token);
                held.until = until;
                return Ok(self.lease(&lease.name, token, held.fence, ttl));
            }
            Flaw::RefreshBumpsFence => {
                held.until = until;
                held.fence = self.fence.fetch_add(1, Ordering::Relaxed) + 1;
                return Ok(self.lease(&lease.name, lease.token.clone(), held.fence, ttl));
            }
            _ => held.until = until,
        }
        let fence = held.fence;
        Ok(self.lease(&lease.name, lease.token.clone(), fence, ttl))
    }
}

impl Driver for Reference {
    type Options = Flaw;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn features_for(flaw: &Flaw) -> Vec<&'static str> {
        match flaw {
            Flaw::DeclaresUnknownFeature => vec!["xyzzy"],
            _ => Vec::new(),
        }
    }

    fn from_options(flaw: Flaw) -> Result<Self, DriverError> {
        Ok(Self {
            flaw,
            held: Mutex::new(HashMap::new()),
            issued: AtomicU64::new(0),
            fence: AtomicU64::new(0),
            released: tokio::sync::Notify::new(),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl LockProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

fn kit(flaw: Flaw) -> LockConformance<Reference> {
    LockConformance::<Reference>::new(move |_| flaw).secrets([SECRET])
}

// The reference as a driver crate runs it: one named test per obligation (and the macro's
// prefixed form compiles and covers every obligation).
sandloom_conformance::lock_conformance!(reference: Reference, |_request| Flaw::None);

#[test]
fn the_reference_driver_passes_every_obligation() {
    // Obligations are independent: run them side by side (several wait out short leases).
    let failures: Vec<_> = std::thread::scope(|scope| {
        let runs: Vec<_> = OBLIGATIONS
            .iter()
            .map(|obligation| scope.spawn(move || kit(Flaw::None).check(obligation)))
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().unwrap().err())
            .collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Each broken driver and the obligation that must catch it.
const CASES: &[(Flaw, &str)] = &[
    (Flaw::ExpiryNotSet, "acquire_grants_a_lease_naming_the_lock"),
    (Flaw::AcquireOverwrites, "a_held_lock_cannot_be_acquired"),
    (
        Flaw::ReleaseDoesNotFree,
        "release_by_the_holder_frees_the_lock",
    ),
    (
        Flaw::ReleaseIgnoresToken,
        "a_foreign_or_stale_token_can_neither_release_nor_refresh",
    ),
    (
        Flaw::TokenPerName,
        "a_foreign_or_stale_token_can_neither_release_nor_refresh",
    ),
    (
        Flaw::RefreshIgnoresToken,
        "a_foreign_or_stale_token_can_neither_release_nor_refresh",
    ),
    (
        Flaw::ExpiredLeasesNeverFreed,
        "an_expired_lease_can_be_taken_over",
    ),
    (
        Flaw::ReleaseOfExpiredAnswersTrue,
        "an_expired_lease_can_neither_be_released_nor_refreshed",
    ),
    (
        Flaw::TrustsCallersExpiry,
        "an_expired_lease_can_neither_be_released_nor_refreshed",
    ),
    (
        Flaw::RefreshRevivesExpired,
        "an_expired_lease_can_neither_be_released_nor_refreshed",
    ),
    (
        Flaw::RefusedAcquireResetsExpiry,
        "refused_acquires_leave_the_lease_as_it_was",
    ),
    (Flaw::RefreshDoesNotExtend, "refresh_extends_the_lease"),
    (Flaw::EvictsAtAThousand, "many_locks_are_held_at_once"),
    (
        Flaw::TwoHolders,
        "concurrent_acquirers_get_exactly_one_lease",
    ),
    (
        Flaw::AcceptsZeroTtl,
        "empty_name_or_zero_ttl_is_invalid_input",
    ),
    (
        Flaw::AcceptsEmptyName,
        "empty_name_or_zero_ttl_is_invalid_input",
    ),
    (Flaw::FoldsCase, "distinct_names_are_independent"),
    (
        Flaw::PanicsOnNonAsciiNames,
        "distinct_names_are_independent",
    ),
    (
        Flaw::WorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::ExpiryReportedLate,
        "acquire_grants_a_lease_naming_the_lock",
    ),
    (Flaw::ExpiryReportedLate, "refresh_extends_the_lease"),
    (Flaw::LeaseOutlivesTtl, "an_expired_lease_can_be_taken_over"),
    (
        Flaw::LeaseOutlivesTtl,
        "refused_acquires_leave_the_lease_as_it_was",
    ),
    (Flaw::LeaseEndsEarly, "an_expired_lease_can_be_taken_over"),
    (Flaw::SecretInDebug, "secrets_never_show"),
    (Flaw::SecretInErrors, "secrets_never_show"),
    (
        Flaw::SubMillisecondTtlRefused,
        "lease_ttl_extremes_are_accepted",
    ),
    (Flaw::HugeTtlRefused, "lease_ttl_extremes_are_accepted"),
    (
        Flaw::ExpiryWrapsAtU32Millis,
        "lease_ttl_extremes_are_accepted",
    ),
    (
        Flaw::LeaseTruncatedToWholeSeconds,
        "sub_second_leases_are_exact",
    ),
    (Flaw::LeaseOutlivesTtl, "sub_second_leases_are_exact"),
    (
        Flaw::RefreshOnlyExtends,
        "refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token",
    ),
    (
        Flaw::RefreshIssuesNewToken,
        "refresh_sets_the_lease_to_ttl_from_now_and_keeps_the_token",
    ),
    (
        Flaw::TwoHoldersOfAnExpiredLock,
        "concurrent_contenders_leave_one_holder",
    ),
    (
        Flaw::RefreshRemovesThenReinserts,
        "concurrent_contenders_leave_one_holder",
    ),
    (Flaw::TrimsNames, "distinct_names_are_independent"),
    (
        Flaw::ReleaseChecksThenDeletes,
        "concurrent_contenders_leave_one_holder",
    ),
    (
        Flaw::FenceFromClockMillis,
        "fences_strictly_increase_with_every_grant",
    ),
    (
        Flaw::FenceRestartsAfterRelease,
        "fences_strictly_increase_with_every_grant",
    ),
    (
        Flaw::TakeoverKeepsFence,
        "fences_strictly_increase_with_every_grant",
    ),
    (
        Flaw::TakeoverKeepsFence,
        "a_paused_holder_finds_its_lease_lost_and_its_fence_stale",
    ),
    (
        Flaw::RefreshBumpsFence,
        "fences_strictly_increase_with_every_grant",
    ),
    (Flaw::WaitGivesUpAtOnce, "acquire_wait_respects_its_timeout"),
    (
        Flaw::WaitOverstaysItsTimeout,
        "acquire_wait_respects_its_timeout",
    ),
    (
        Flaw::WaitSleepsThroughRelease,
        "acquire_wait_wakes_when_the_lock_is_released_or_expires",
    ),
    (
        Flaw::WaitTakesWithoutCheck,
        "acquire_wait_wakes_when_the_lock_is_released_or_expires",
    ),
    (
        Flaw::WaitWorksAfterStop,
        "operations_after_stop_fail_with_stopped",
    ),
    (
        Flaw::RefreshDoesNotExtend,
        "keep_alive_holds_a_lease_past_several_ttls",
    ),
    (
        Flaw::RefreshIssuesNewToken,
        "keep_alive_holds_a_lease_past_several_ttls",
    ),
    (
        Flaw::RefreshIgnoresToken,
        "keep_alive_reports_a_lease_taken_over_as_lost",
    ),
    (
        Flaw::RefreshOfALostLeaseSucceeds,
        "keep_alive_reports_a_lease_taken_over_as_lost",
    ),
    (
        Flaw::RefreshHoldsHalfTtl,
        "keep_alive_fails_closed_when_renewal_hangs_or_fails",
    ),
    (Flaw::PercentDecodesNames, "distinct_names_are_independent"),
    (Flaw::TruncatesNamesAtNul, "names_at_and_past_the_limit"),
    (
        Flaw::WaitTreatsHugeTimeoutsAsZero,
        "acquire_wait_timeouts_at_the_extremes",
    ),
    (
        Flaw::TruncatesNamesPastTheLimit,
        "names_at_and_past_the_limit",
    ),
    (
        Flaw::LeasesCappedAtTwoSeconds,
        "leases_last_their_whole_ttl_counted_from_the_last_grant",
    ),
    (
        Flaw::RefreshCountsFromTheAcquire,
        "leases_last_their_whole_ttl_counted_from_the_last_grant",
    ),
];

#[test]
fn each_broken_driver_is_caught_by_its_obligation() {
    Kit::assert_catches_all(CASES, kit);
}

#[test]
fn two_holders_are_caught_every_time() {
    for _ in 0..20 {
        let outcome = kit(Flaw::TwoHolders).check("concurrent_acquirers_get_exactly_one_lease");
        assert!(outcome.is_err(), "a check-then-set lock slipped through");
    }
}

#[test]
fn a_panicking_driver_is_a_failed_obligation_not_a_crash() {
    let failure = kit(Flaw::PanicsOnNonAsciiNames)
        .check("distinct_names_are_independent")
        .unwrap_err();
    assert!(
        failure
            .message
            .contains("panicked: lock names must be ASCII"),
        "{failure}"
    );
}

#[test]
fn an_unknown_obligation_is_a_failure() {
    let failure = kit(Flaw::None).check("no_such_thing").unwrap_err();
    assert!(failure.message.contains("no such obligation"), "{failure}");
}

#[test]
fn a_driver_declaring_a_feature_its_contract_lacks_fails_every_obligation() {
    let failures = LockConformance::<Reference>::new(|_| Flaw::DeclaresUnknownFeature).check_all();
    assert_eq!(failures.len(), OBLIGATIONS.len(), "{failures:#?}");
    assert!(
        failures[0]
            .message
            .contains("the kernel would refuse this instance: it reports feature `xyzzy`"),
        "{}",
        failures[0]
    );
}

#[test]
fn a_lease_that_outlives_its_ttl_is_caught_within_the_declared_tolerance_only() {
    let failure = kit(Flaw::LeaseOutlivesTtl)
        .check("an_expired_lease_can_be_taken_over")
        .unwrap_err();
    assert!(failure.message.contains("declared tolerance"), "{failure}");
    // 600 ms late is within a declared second: the setting is what the obligation holds to.
    let widened = kit(Flaw::LeaseOutlivesTtl).tolerance(Duration::from_secs(1));
    assert_eq!(widened.check("an_expired_lease_can_be_taken_over"), Ok(()));
}

#[test]
fn every_flaw_is_tried() {
    // A flaw added to the enum but not to `CASES` would prove nothing.
    let tried: Vec<String> = CASES.iter().map(|(flaw, _)| format!("{flaw:?}")).collect();
    // `DeclaresUnknownFeature` fails every obligation: its own test says so.
    let not_flaws = ["None", "DeclaresUnknownFeature"];
    let untried = flaws::untried(include_str!("kit_lock.rs"), &tried, &not_flaws);
    assert!(untried.is_empty(), "flaws no test tries: {untried:?}");
}
