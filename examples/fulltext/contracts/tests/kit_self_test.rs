//! The `fulltext` kit against deliberately broken drivers: each flaw must be caught by the
//! obligation that names it, and the reference driver (`Reference`) must pass every obligation
//! with `prefix` declared and without it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use sandloom_conformance::Kit;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Secret, Version};
use sandloom_example_fulltext_contracts::kit::fulltext_kit;
use sandloom_example_fulltext_contracts::{FulltextOps, FulltextProvider, PREFIX, words};

/// One way to get the contract wrong, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Flaw {
    #[default]
    None,
    CaseSensitive,
    AnyWordMatches,
    Unsorted,
    IgnoresLimit,
    KeepsOldWords,
    RemoveAlwaysTrue,
    AcceptsEmptyId,
    EmptyQueryFindsAll,
    PrefixIsExact,
    PanicsOnSearch,
    ServesAfterStop,
    /// Names its API key in the error of an empty id.
    SecretInErrors,
}

/// The API key the options carry; the kit is told it is secret.
const API_KEY: &str = "fulltext-api-key-42";

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Options {
    #[serde(skip)]
    flaw: Flaw,
    prefix: bool,
    #[serde(skip)]
    api_key: Secret<String>,
}

#[derive(Debug)]
struct Reference {
    flaw: Flaw,
    api_key: Secret<String>,
    docs: Mutex<BTreeMap<String, Vec<String>>>,
    stopped: AtomicBool,
}

impl Reference {
    fn running(&self) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) && self.flaw != Flaw::ServesAfterStop {
            return Err(InfraError::stopped("fulltext"));
        }
        Ok(())
    }

    fn matching(&self, limit: usize, keep: impl Fn(&[String]) -> bool) -> Vec<String> {
        let docs = self.docs.lock().unwrap();
        let mut ids: Vec<String> = docs
            .iter()
            .filter(|(_, words)| keep(words))
            .map(|(id, _)| id.clone())
            .collect();
        if self.flaw == Flaw::Unsorted {
            ids.reverse();
        }
        if self.flaw != Flaw::IgnoresLimit {
            ids.truncate(limit);
        }
        ids
    }
}

impl FulltextOps for Reference {
    async fn index(&self, id: &str, text: &str) -> InfraResult<()> {
        self.running()?;
        if id.is_empty() && self.flaw == Flaw::SecretInErrors {
            let key = self.api_key.expose();
            return Err(InfraError::invalid_input(
                "fulltext",
                format!("empty id (key {key})"),
            ));
        }
        if id.is_empty() && self.flaw != Flaw::AcceptsEmptyId {
            return Err(InfraError::invalid_input("fulltext", "empty id"));
        }
        let mut found = if self.flaw == Flaw::CaseSensitive {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        } else {
            words(text)
        };
        let mut docs = self.docs.lock().unwrap();
        if self.flaw == Flaw::KeepsOldWords
            && let Some(old) = docs.get(id)
        {
            found.extend(old.iter().cloned());
        }
        docs.insert(id.to_owned(), found);
        Ok(())
    }

    async fn remove(&self, id: &str) -> InfraResult<bool> {
        self.running()?;
        if id.is_empty() {
            return Err(InfraError::invalid_input("fulltext", "empty id"));
        }
        let removed = self.docs.lock().unwrap().remove(id).is_some();
        Ok(removed || self.flaw == Flaw::RemoveAlwaysTrue)
    }

    async fn search(&self, query: &str, limit: usize) -> InfraResult<Vec<String>> {
        self.running()?;
        assert!(self.flaw != Flaw::PanicsOnSearch, "index corrupted");
        let wanted: BTreeSet<String> = words(query).into_iter().collect();
        if wanted.is_empty() && self.flaw != Flaw::EmptyQueryFindsAll {
            return Err(InfraError::invalid_input(
                "fulltext",
                "a query needs a word",
            ));
        }
        let any = self.flaw == Flaw::AnyWordMatches;
        Ok(self.matching(limit, |doc| {
            let has = |w: &String| doc.contains(w);
            if any {
                wanted.iter().any(has)
            } else {
                wanted.iter().all(has)
            }
        }))
    }

    async fn search_prefix(&self, prefix: &str, limit: usize) -> InfraResult<Vec<String>> {
        self.running()?;
        let prefix = prefix.to_lowercase();
        let exact = self.flaw == Flaw::PrefixIsExact;
        Ok(self.matching(limit, |doc| {
            doc.iter().any(|w| {
                if exact {
                    *w == prefix
                } else {
                    w.starts_with(&prefix)
                }
            })
        }))
    }
}

impl Driver for Reference {
    type Options = Options;

    fn supported_features() -> &'static [&'static str] {
        &[PREFIX]
    }

    fn features_for(options: &Options) -> Vec<&'static str> {
        if options.prefix {
            vec![PREFIX]
        } else {
            Vec::new()
        }
    }

    fn from_options(options: Options) -> Result<Self, DriverError> {
        Ok(Self {
            flaw: options.flaw,
            api_key: options.api_key,
            docs: Mutex::new(BTreeMap::new()),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl FulltextProvider for Reference {
    const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
}

fn options(flaw: Flaw, prefix: bool) -> impl Fn(&sandloom_conformance::KitRequest) -> Options {
    move |_| Options {
        flaw,
        prefix,
        api_key: API_KEY.into(),
    }
}

#[test]
fn the_reference_driver_passes_every_obligation_with_and_without_prefix() {
    for prefix in [true, false] {
        let failures = fulltext_kit::<Reference>(options(Flaw::None, prefix))
            .secrets([API_KEY])
            .check_all();
        assert!(failures.is_empty(), "prefix = {prefix}: {failures:#?}");
    }
}

#[test]
fn every_flaw_is_caught_by_its_obligation() {
    // Each flaw with whether the instance declares `prefix`.
    let cases = [
        ((Flaw::CaseSensitive, true), "indexed_document_is_found"),
        ((Flaw::AnyWordMatches, true), "search_needs_every_word"),
        ((Flaw::Unsorted, true), "results_are_sorted_and_limited"),
        ((Flaw::IgnoresLimit, true), "results_are_sorted_and_limited"),
        ((Flaw::KeepsOldWords, true), "reindexing_replaces_the_text"),
        ((Flaw::RemoveAlwaysTrue, true), "remove_reports_and_forgets"),
        (
            (Flaw::AcceptsEmptyId, true),
            "empty_id_or_query_is_invalid_input",
        ),
        (
            (Flaw::EmptyQueryFindsAll, true),
            "empty_id_or_query_is_invalid_input",
        ),
        (
            (Flaw::PrefixIsExact, true),
            "prefix_search_follows_the_declared_feature",
        ),
        ((Flaw::PanicsOnSearch, true), "indexed_document_is_found"),
        (
            (Flaw::ServesAfterStop, true),
            "operations_after_stop_fail_with_stopped",
        ),
        ((Flaw::SecretInErrors, false), "secrets_never_show"),
    ];
    Kit::assert_catches_all(&cases, |(flaw, prefix)| {
        fulltext_kit::<Reference>(options(flaw, prefix)).secrets([API_KEY])
    });
    // A panic is reported as a failure, not a crashed test.
    let failure = fulltext_kit::<Reference>(options(Flaw::PanicsOnSearch, false))
        .assert_catches("indexed_document_is_found");
    assert!(
        failure.message.contains("panicked: index corrupted"),
        "{failure}"
    );
}
