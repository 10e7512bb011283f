//! The change signal by polling: each scan lists the names under the prefix and reads each
//! one's metadata (never a value); a name whose current version, update time or deletion
//! state differs from the last scan's, or that appeared or went, has changed.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::{StreamExt as _, TryStreamExt as _};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::secrets::NAME;
use tokio::time::Instant;

use crate::entry::VersionState;
use crate::provider::VaultSecrets;

/// Metadata reads a scan has in flight at once.
const CONCURRENT_READS: usize = 8;

/// What is compared from one scan to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Digest {
    current_version: u64,
    updated_time: String,
    current: VersionState,
}

/// The last scan and the history of changes found.
#[derive(Debug)]
pub(crate) struct Watched {
    /// Each name's digest at the last scan (`None`: not scanned yet).
    digests: Option<HashMap<String, Digest>>,
    scanned_at: Option<Instant>,
    /// Starts at 1 (a cursor is never 0); one step per scan that found changes.
    cursor: u64,
    /// The cursor at which each name last changed.
    changed: HashMap<String, u64>,
}

impl Default for Watched {
    fn default() -> Self {
        Self {
            digests: None,
            scanned_at: None,
            cursor: 1,
            changed: HashMap::new(),
        }
    }
}

impl Watched {
    /// Whether the last scan is older than `interval` (or there was none).
    pub(crate) fn due(&self, interval: Duration) -> bool {
        self.scanned_at.is_none_or(|at| at.elapsed() >= interval)
    }

    /// When the next scan is due.
    pub(crate) fn next_scan(&self, interval: Duration) -> Instant {
        self.scanned_at
            .map_or_else(Instant::now, |at| at + interval)
    }

    pub(crate) fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Record a scan: what differs from the last one moves the cursor one step.
    pub(crate) fn record(&mut self, current: HashMap<String, Digest>) {
        self.scanned_at = Some(Instant::now());
        let Some(previous) = self.digests.take() else {
            self.digests = Some(current);
            return; // the first scan: the comparison point
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
        if !changed.is_empty() {
            self.cursor += 1;
            for name in changed {
                self.changed.insert(name, self.cursor);
            }
        }
    }

    /// The names changed after `since`, sorted; `since` is fixed at the call's first look
    /// (`after`, or the cursor then for 0). `InvalidInput` for a cursor never issued.
    pub(crate) fn changed_since(
        &self,
        after: u64,
        since: &mut Option<u64>,
    ) -> InfraResult<Vec<String>> {
        if after > self.cursor {
            return Err(InfraError::invalid_input(
                NAME,
                format!(
                    "cursor {after} was never issued by this instance (it stands at {})",
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

/// Read the digest of every name under the driver's prefix.
pub(crate) async fn scan(driver: &VaultSecrets) -> InfraResult<HashMap<String, Digest>> {
    let names = driver.names_under("").await?;
    futures_util::stream::iter(names)
        .map(|name| async move {
            let metadata = driver.metadata(&name).await?;
            Ok::<_, InfraError>(metadata.map(|metadata| {
                let current = metadata
                    .versions
                    .get(&metadata.current_version.to_string())
                    .cloned()
                    .unwrap_or_default();
                (
                    name,
                    Digest {
                        current_version: metadata.current_version,
                        updated_time: metadata.updated_time,
                        current,
                    },
                )
            }))
        })
        .buffer_unordered(CONCURRENT_READS)
        // A name listed then removed before its metadata was read is simply gone.
        .try_filter_map(|found| async move { Ok(found) })
        .try_collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(version: u64) -> Digest {
        Digest {
            current_version: version,
            updated_time: format!("t{version}"),
            current: VersionState::default(),
        }
    }

    #[test]
    fn scans_move_the_cursor_once_per_change_and_name_what_changed() {
        let mut watched = Watched::default();
        watched.record(HashMap::from([("a".to_owned(), digest(1))]));
        assert_eq!(watched.cursor(), 1);
        let mut since = None;
        assert!(watched.changed_since(0, &mut since).unwrap().is_empty());
        watched.record(HashMap::from([("a".to_owned(), digest(1))]));
        assert_eq!(watched.cursor(), 1, "nothing changed");
        watched.record(HashMap::from([
            ("a".to_owned(), digest(2)),
            ("b".to_owned(), digest(1)),
        ]));
        assert_eq!(watched.cursor(), 2);
        assert_eq!(watched.changed_since(0, &mut since).unwrap(), ["a", "b"]);
        watched.record(HashMap::from([("b".to_owned(), digest(1))]));
        assert_eq!(watched.changed_since(2, &mut Some(2)).unwrap(), ["a"]);
        assert!(watched.changed_since(4, &mut None).is_err());
    }
}
