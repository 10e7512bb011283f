//! The `secrets` change signal's bookkeeping, for drivers whose backend does not number its
//! changes: a [`ChangeLog`] issues the cursors, and [`PolledChanges`] finds what changed by
//! comparing one scan of the backend with the last.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use sandloom_sdk_infra::secrets::NAME;
use sandloom_sdk_infra::{InfraError, InfraResult};
use tokio::time::Instant;

/// The cursors a `secrets` driver issues from `changes`, and the cursor at which each name last
/// changed.
///
/// The cursor starts at 1 (a cursor is never 0, which callers pass for "from now") and moves one
/// step for each [`record`](Self::record) that names something. A driver keeps one log per
/// store, behind its own lock, and answers `changes` with
/// [`changed_since`](Self::changed_since).
///
/// ```
/// use sandloom_driverkit::secrets::ChangeLog;
///
/// let mut log = ChangeLog::new();
/// let mut since = None; // a `changes(0, …)` call: "from now"
/// assert!(log.changed_since(0, &mut since).unwrap().is_empty());
/// log.record(["db/password".to_owned()]);
/// assert_eq!(log.cursor(), 2);
/// assert_eq!(log.changed_since(0, &mut since).unwrap(), ["db/password"]);
/// assert!(log.changed_since(3, &mut None).is_err(), "a cursor never issued");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeLog {
    cursor: u64,
    changed: HashMap<String, u64>,
}

impl Default for ChangeLog {
    fn default() -> Self {
        Self::new()
    }
}

impl ChangeLog {
    /// An empty log, its cursor at 1.
    ///
    /// ```
    /// assert_eq!(sandloom_driverkit::secrets::ChangeLog::new().cursor(), 1);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            cursor: 1,
            changed: HashMap::new(),
        }
    }

    /// The cursor a `changes` call answers with now.
    ///
    /// ```
    /// use sandloom_driverkit::secrets::ChangeLog;
    ///
    /// let mut log = ChangeLog::new();
    /// log.record(["a".to_owned(), "b".to_owned()]);
    /// assert_eq!(log.cursor(), 2, "one step for the names changed together");
    /// ```
    #[must_use]
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Record that `names` changed together: the cursor moves one step and each name is marked
    /// changed at it. Nothing named, nothing moves. Returns whether the cursor moved, so a
    /// driver knows to wake its waiters.
    ///
    /// ```
    /// use sandloom_driverkit::secrets::ChangeLog;
    ///
    /// let mut log = ChangeLog::new();
    /// assert!(!log.record(Vec::new()));
    /// assert!(log.record(["a".to_owned()]));
    /// assert_eq!(log.cursor(), 2);
    /// ```
    pub fn record(&mut self, names: impl IntoIterator<Item = String>) -> bool {
        let mut names = names.into_iter().peekable();
        if names.peek().is_none() {
            return false;
        }
        self.cursor += 1;
        for name in names {
            self.changed.insert(name, self.cursor);
        }
        true
    }

    /// The names changed after `since`, sorted: what a `changes(after, …)` call answers.
    ///
    /// `since` belongs to the call and is fixed at its first look: start it at
    /// `(after != 0).then_some(after)`, and a call "from now" (`after` 0) takes the cursor of
    /// its first look, so the changes found while it waits are named.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an `after` this log never issued (above its cursor), as the contract
    /// asks.
    ///
    /// ```
    /// use sandloom_driverkit::secrets::ChangeLog;
    ///
    /// let mut log = ChangeLog::new();
    /// log.record(["a".to_owned()]);
    /// log.record(["b".to_owned()]);
    /// assert_eq!(log.changed_since(1, &mut Some(1)).unwrap(), ["a", "b"]);
    /// assert_eq!(log.changed_since(2, &mut Some(2)).unwrap(), ["b"]);
    /// assert!(log.changed_since(3, &mut Some(3)).unwrap().is_empty());
    /// ```
    pub fn changed_since(&self, after: u64, since: &mut Option<u64>) -> InfraResult<Vec<String>> {
        if after > self.cursor {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "cursor {after} was never issued (the cursor stands at {})",
                    self.cursor
                ),
            ));
        }
        let since = *since.get_or_insert(self.cursor);
        let mut names: Vec<String> = self
            .changed
            .iter()
            .filter(|&(_, &at)| at > since)
            .map(|(name, _)| name.clone())
            .collect();
        names.sort_unstable();
        Ok(names)
    }
}

/// The change signal of a `secrets` driver that polls: each scan reads a digest `D` of every
/// name (a version, an update time, a keyed hash of the value: whatever shows a change without
/// keeping the value), and a name whose digest differs from the last scan's, or that appeared or
/// went, has changed.
///
/// The first scan is the comparison point and changes nothing. The driver decides when to scan
/// ([`due`](Self::due), [`next_scan`](Self::next_scan)), and answers `changes` from the
/// [`log`](Self::log). Time is tokio's, so tests with a paused clock see scans fall due.
///
/// ```
/// use std::collections::HashMap;
/// use std::time::Duration;
/// use sandloom_driverkit::secrets::PolledChanges;
///
/// let mut polled = PolledChanges::<u64>::new();
/// assert!(polled.due(Duration::from_secs(1)), "never scanned");
/// polled.record_scan(HashMap::from([("db/password".to_owned(), 1)]));
/// let cursor = polled.log().cursor();
/// polled.record_scan(HashMap::from([("db/password".to_owned(), 2), ("api/key".to_owned(), 1)]));
/// let changed = polled.log().changed_since(cursor, &mut Some(cursor)).unwrap();
/// assert_eq!(changed, ["api/key", "db/password"]);
/// ```
pub struct PolledChanges<D> {
    /// Each name's digest at the last scan (`None`: not scanned yet).
    digests: Option<HashMap<String, D>>,
    scanned_at: Option<Instant>,
    log: ChangeLog,
}

impl<D> fmt::Debug for PolledChanges<D> {
    // Digests are left out: they are of no use to people, and may be of some to an attacker.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolledChanges")
            .field("scanned_at", &self.scanned_at)
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

impl<D> Default for PolledChanges<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D> PolledChanges<D> {
    /// Nothing scanned yet, the cursor at 1.
    ///
    /// ```
    /// let polled = sandloom_driverkit::secrets::PolledChanges::<u64>::new();
    /// assert_eq!(polled.log().cursor(), 1);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            digests: None,
            scanned_at: None,
            log: ChangeLog::new(),
        }
    }

    /// Whether the last scan is at least `interval` old, or there was none.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::time::Duration;
    /// use sandloom_driverkit::secrets::PolledChanges;
    ///
    /// let mut polled = PolledChanges::<u64>::new();
    /// polled.record_scan(HashMap::new());
    /// assert!(!polled.due(Duration::from_secs(60)));
    /// assert!(polled.due(Duration::ZERO));
    /// ```
    #[must_use]
    pub fn due(&self, interval: Duration) -> bool {
        self.scanned_at.is_none_or(|at| at.elapsed() >= interval)
    }

    /// When the next scan falls due: `interval` after the last, or now if there was none.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::time::Duration;
    /// use sandloom_driverkit::secrets::PolledChanges;
    ///
    /// let mut polled = PolledChanges::<u64>::new();
    /// polled.record_scan(HashMap::new());
    /// assert!(polled.next_scan(Duration::from_secs(60)) > tokio::time::Instant::now());
    /// ```
    #[must_use]
    pub fn next_scan(&self, interval: Duration) -> Instant {
        self.scanned_at
            .map_or_else(Instant::now, |at| at + interval)
    }

    /// The cursors issued and what changed at each: what `changes` answers from.
    ///
    /// ```
    /// let polled = sandloom_driverkit::secrets::PolledChanges::<u64>::new();
    /// assert!(polled.log().changed_since(0, &mut None).unwrap().is_empty());
    /// ```
    #[must_use]
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }
}

impl<D: PartialEq> PolledChanges<D> {
    /// Record a scan made now: every name whose digest differs from the last scan's, and every
    /// name the last scan had and this one has not, changed together (one cursor step). The
    /// first scan only sets the comparison point.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use sandloom_driverkit::secrets::PolledChanges;
    ///
    /// let mut polled = PolledChanges::new();
    /// polled.record_scan(HashMap::from([("a".to_owned(), 1)]));
    /// assert_eq!(polled.log().cursor(), 1, "the comparison point");
    /// polled.record_scan(HashMap::new());
    /// assert_eq!(polled.log().changed_since(1, &mut Some(1)).unwrap(), ["a"], "gone");
    /// ```
    pub fn record_scan(&mut self, current: HashMap<String, D>) {
        self.scanned_at = Some(Instant::now());
        let Some(previous) = self.digests.take() else {
            self.digests = Some(current);
            return;
        };
        let mut changed: Vec<String> = current
            .iter()
            .filter(|&(name, digest)| previous.get(name) != Some(digest))
            .map(|(name, _)| name.clone())
            .collect();
        changed.extend(
            previous
                .into_keys()
                .filter(|name| !current.contains_key(name)),
        );
        self.digests = Some(current);
        self.log.record(changed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(entries: &[(&str, u32)]) -> HashMap<String, u32> {
        entries
            .iter()
            .map(|&(name, digest)| (name.to_owned(), digest))
            .collect()
    }

    #[test]
    fn scans_move_the_cursor_once_per_change_and_name_what_changed() {
        let mut polled = PolledChanges::new();
        polled.record_scan(scan(&[("a", 1)]));
        assert_eq!(
            polled.log().cursor(),
            1,
            "the first scan is the comparison point"
        );
        let mut since = None;
        assert!(
            polled
                .log()
                .changed_since(0, &mut since)
                .unwrap()
                .is_empty()
        );
        assert_eq!(since, Some(1), "fixed at the first look");
        polled.record_scan(scan(&[("a", 1)]));
        assert_eq!(polled.log().cursor(), 1, "nothing changed");
        polled.record_scan(scan(&[("a", 2), ("b", 1)]));
        assert_eq!(
            polled.log().cursor(),
            2,
            "one step for everything one scan found"
        );
        assert_eq!(
            polled.log().changed_since(0, &mut since).unwrap(),
            ["a", "b"]
        );
        polled.record_scan(scan(&[("b", 1)]));
        assert_eq!(polled.log().cursor(), 3);
        assert_eq!(
            polled.log().changed_since(2, &mut Some(2)).unwrap(),
            ["a"],
            "a went"
        );
        assert_eq!(
            polled.log().changed_since(1, &mut Some(1)).unwrap(),
            ["a", "b"],
            "each name once, at its last change"
        );
    }

    #[test]
    fn a_cursor_never_issued_is_invalid_input() {
        let mut log = ChangeLog::new();
        log.record(["a".to_owned()]);
        let err = log.changed_since(3, &mut None).unwrap_err();
        assert_eq!(err.kind(), sandloom_sdk_infra::ErrorKind::InvalidInput);
        assert!(
            err.to_string().contains("cursor 3 was never issued"),
            "{err}"
        );
        assert!(log.changed_since(2, &mut None).unwrap().is_empty());
    }

    #[test]
    fn recording_nothing_moves_nothing() {
        let mut log = ChangeLog::new();
        assert!(!log.record(std::iter::empty()));
        assert_eq!(log, ChangeLog::new());
    }

    #[test]
    fn debug_leaves_the_digests_out() {
        let mut polled = PolledChanges::new();
        polled.record_scan(HashMap::from([("a".to_owned(), "digest-of-a")]));
        let debug = format!("{polled:?}");
        assert!(!debug.contains("digest-of-a"), "{debug}");
        assert!(debug.contains("PolledChanges"), "{debug}");
    }

    #[test]
    fn a_scan_falls_due_after_its_interval() {
        let (long, none) = (Duration::from_hours(1), Duration::ZERO);
        let mut polled = PolledChanges::<u32>::new();
        assert!(polled.due(long), "never scanned");
        assert!(
            polled.next_scan(long) <= Instant::now(),
            "never scanned: due now"
        );
        polled.record_scan(HashMap::new());
        assert!(!polled.due(long));
        assert!(polled.due(none));
        assert!(polled.next_scan(long) > Instant::now() + long / 2);
    }
}
