//! The index.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};
use sandloom_example_fulltext_contracts::{FulltextOps, FulltextProvider, PREFIX, words};

use crate::MemoryOptions;

const NAME: &str = "fulltext";

/// An inverted index in memory: each word to the ids of the documents that contain it.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_example_fulltext_contracts::Fulltext;
/// use sandloom_example_fulltext_memory::{MemoryFulltext, MemoryOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let index = MemoryFulltext::from_options(MemoryOptions::default()).unwrap();
/// index.index("note-1", "Buy oat milk").await.unwrap();
/// assert_eq!(index.search("milk", 10).await.unwrap(), ["note-1"]);
/// # }
/// ```
pub struct MemoryFulltext {
    index: RwLock<Index>,
    stopped: AtomicBool,
}

#[derive(Default)]
struct Index {
    documents: BTreeMap<String, BTreeSet<String>>,
    postings: BTreeMap<String, BTreeSet<String>>,
}

impl Index {
    fn remove(&mut self, id: &str) -> bool {
        let Some(old) = self.documents.remove(id) else {
            return false;
        };
        for word in old {
            if let Some(ids) = self.postings.get_mut(&word) {
                ids.remove(id);
                if ids.is_empty() {
                    self.postings.remove(&word);
                }
            }
        }
        true
    }
}

impl MemoryFulltext {
    fn running(&self) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        Ok(())
    }

    fn valid_id(id: &str) -> InfraResult<()> {
        if id.is_empty() {
            return Err(InfraError::invalid_input(
                NAME,
                "a document id must not be empty",
            ));
        }
        Ok(())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        // A panic while holding the lock cannot leave the index half-written (each write is one
        // call), so a poisoned lock is still usable.
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Index> {
        self.index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl FulltextOps for MemoryFulltext {
    async fn index(&self, id: &str, text: &str) -> InfraResult<()> {
        self.running()?;
        Self::valid_id(id)?;
        let found: BTreeSet<String> = words(text).into_iter().collect();
        let mut index = self.write();
        index.remove(id);
        for word in &found {
            index
                .postings
                .entry(word.clone())
                .or_default()
                .insert(id.to_owned());
        }
        index.documents.insert(id.to_owned(), found);
        Ok(())
    }

    async fn remove(&self, id: &str) -> InfraResult<bool> {
        self.running()?;
        Self::valid_id(id)?;
        Ok(self.write().remove(id))
    }

    async fn search(&self, query: &str, limit: usize) -> InfraResult<Vec<String>> {
        self.running()?;
        let wanted = words(query);
        let Some((first, rest)) = wanted.split_first() else {
            return Err(InfraError::invalid_input(
                NAME,
                "a query needs at least one word",
            ));
        };
        let index = self.read();
        let Some(candidates) = index.postings.get(first) else {
            return Ok(Vec::new());
        };
        Ok(candidates
            .iter()
            .filter(|id| {
                rest.iter().all(|word| {
                    index
                        .postings
                        .get(word)
                        .is_some_and(|ids| ids.contains(*id))
                })
            })
            .take(limit)
            .cloned()
            .collect())
    }

    async fn search_prefix(&self, prefix: &str, limit: usize) -> InfraResult<Vec<String>> {
        self.running()?;
        let prefix = prefix.to_lowercase();
        let index = self.read();
        let ids: BTreeSet<&String> = index
            .postings
            .range(prefix.clone()..)
            .take_while(|(word, _)| word.starts_with(&prefix))
            .flat_map(|(_, ids)| ids)
            .collect();
        Ok(ids.into_iter().take(limit).cloned().collect())
    }
}

impl Driver for MemoryFulltext {
    type Options = MemoryOptions;

    fn supported_features() -> &'static [&'static str] {
        &[PREFIX]
    }

    fn features_for(options: &MemoryOptions) -> Vec<&'static str> {
        if options.prefix {
            vec![PREFIX]
        } else {
            Vec::new()
        }
    }

    fn from_options(_options: MemoryOptions) -> Result<Self, DriverError> {
        Ok(Self {
            index: RwLock::new(Index::default()),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl FulltextProvider for MemoryFulltext {
    const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
}
