//! The change signal by polling: each scan lists the names under the prefix and reads each
//! one's metadata (never a value); a name whose current version, update time or deletion
//! state differs from the last scan's, or that appeared or went, has changed.

use std::collections::HashMap;

use futures_util::{StreamExt as _, TryStreamExt as _};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::secrets::PolledChanges;

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
pub(crate) type Watched = PolledChanges<Digest>;

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
