//! The conformance kit of `fulltext`, on the public harness of sandloom-conformance: one `async fn` per
//! obligation, listed once in `define_kit!`, which also generates [`fulltext_conformance!`]
//! for driver crates' tests.
//!
//! ```
//! use sandloom_example_fulltext_contracts::kit::OBLIGATIONS;
//! assert_eq!(OBLIGATIONS.len(), 9);
//! assert!(OBLIGATIONS.contains(&"prefix_search_follows_the_declared_feature"));
//! ```
//!
//! [`fulltext_conformance!`]: crate::fulltext_conformance

use sandloom_conformance::{Instance, Kit, KitRequest, expect_kind, expect_unsupported};
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::ErrorKind;

use crate::{Fulltext, FulltextCapability, FulltextProvider, PREFIX};

/// The `fulltext` kit for driver `T`, whose instances are built from the options `options`
/// returns.
///
/// ```
/// use sandloom_example_fulltext_contracts::kit::fulltext_kit;
/// # use sandloom_example_fulltext_contracts::{Fulltext, FulltextOps, FulltextProvider};
/// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
/// # use sandloom_driverkit::sdk::InfraResult;
/// # /// Finds nothing: a stand-in for a driver under test.
/// # pub struct Blind;
/// # impl FulltextOps for Blind {
/// #     async fn index(&self, _: &str, _: &str) -> InfraResult<()> { Ok(()) }
/// #     async fn remove(&self, _: &str) -> InfraResult<bool> { Ok(false) }
/// #     async fn search(&self, _: &str, _: usize) -> InfraResult<Vec<String>> { Ok(Vec::new()) }
/// # }
/// # impl Driver for Blind {
/// #     type Options = NoOptions;
/// #     fn supported_features() -> &'static [&'static str] { &[] }
/// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Blind) }
/// # }
/// # impl FulltextProvider for Blind { const CONTRACT_VERSION: Version = Version::new(0, 1, 0); }
///
/// // `Blind` (hidden) indexes nothing, so the kit catches it.
/// let kit = fulltext_kit::<Blind>(|_request| NoOptions {});
/// let failure = kit.check("indexed_document_is_found").unwrap_err();
/// assert!(failure.message.contains("search(\"quick\", 10)"));
/// ```
pub fn fulltext_kit<T: FulltextProvider>(
    options: impl Fn(&KitRequest) -> <T as Driver>::Options + Send + Sync + 'static,
) -> Kit<T, ()> {
    Kit::build::<FulltextCapability>(obligations::<T>(), options, ())
}

sandloom_conformance::define_kit! {
    /// Run the whole `fulltext` kit from a driver crate's tests: one `#[test]` per obligation,
    /// in a module `fulltext_conformance` (or one named before the driver type).
    ///
    /// ```
    /// // tests/conformance.rs of a fulltext driver crate:
    /// # use sandloom_example_fulltext_contracts::{Fulltext, FulltextOps, FulltextProvider};
    /// # use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
    /// # use sandloom_driverkit::sdk::InfraResult;
    /// # pub struct MyIndex;
    /// # impl FulltextOps for MyIndex {
    /// #     async fn index(&self, _: &str, _: &str) -> InfraResult<()> { Ok(()) }
    /// #     async fn remove(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// #     async fn search(&self, _: &str, _: usize) -> InfraResult<Vec<String>> { Ok(Vec::new()) }
    /// # }
    /// # impl Driver for MyIndex {
    /// #     type Options = NoOptions;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(MyIndex) }
    /// # }
    /// # impl FulltextProvider for MyIndex { const CONTRACT_VERSION: Version = Version::new(0, 1, 0); }
    /// sandloom_example_fulltext_contracts::fulltext_conformance!(MyIndex, |_request| NoOptions {});
    /// # fn main() {}
    /// ```
    ///
    /// See `examples/fulltext/driver-memory/tests/conformance.rs` for a crate that runs it.
    macro fulltext_conformance;
    kit crate::kit::fulltext_kit;
    provider FulltextProvider;
    settings ();
    /// - `indexed_document_is_found`: an indexed document is found by each of its words, in any
    ///   case, and a word it lacks finds nothing.
    /// - `search_needs_every_word`: a query of several words finds only the documents with all.
    /// - `results_are_sorted_and_limited`: ids come sorted, at most `limit`; `limit` 0 gives none.
    /// - `reindexing_replaces_the_text`: indexing an id again forgets its old words.
    /// - `remove_reports_and_forgets`: `remove` answers `true`, then `false`, and the document
    ///   is no longer found.
    /// - `empty_id_or_query_is_invalid_input`: an empty id (index, remove) and a query without
    ///   a word are `InvalidInput`.
    /// - `prefix_search_follows_the_declared_feature`: declared `prefix`: words are found by
    ///   their prefix; undeclared: `search_prefix` answers `Unsupported`.
    /// - `operations_after_stop_fail_with_stopped`: after `stop`, every operation answers
    ///   `Stopped` (`search_prefix` may answer `Unsupported` when `prefix` is undeclared).
    /// - `secrets_never_show`: the values a driver crate declares secret (the kit's `secrets`
    ///   builder method) show in no `Debug` of its options or driver, and in no error of an
    ///   empty id or query, of any operation after `stop`, or of an instance pointed at an
    ///   unreachable address. A kit opts in to driverkit's check by listing this obligation.
    obligations [
        indexed_document_is_found,
        search_needs_every_word,
        results_are_sorted_and_limited,
        reindexing_replaces_the_text,
        remove_reports_and_forgets,
        empty_id_or_query_is_invalid_input,
        prefix_search_follows_the_declared_feature,
        operations_after_stop_fail_with_stopped,
        secrets_never_show,
    ];
}

/// The instance as modules get it: behind the contract's gate.
fn served<T: FulltextProvider>(i: &Instance<T>) -> &dyn Fulltext {
    i.served::<FulltextCapability>()
}

/// `search(query, limit)` must answer `expected`.
async fn finds<T: FulltextProvider>(
    i: &Instance<T>,
    query: &str,
    limit: usize,
    expected: &[&str],
) -> Result<(), String> {
    let found = i
        .driver()
        .search(query, limit)
        .await
        .map_err(|e| format!("search({query:?}, {limit}) failed: {e}"))?;
    if found != expected {
        return Err(format!(
            "search({query:?}, {limit}) answered {found:?}, expected {expected:?}"
        ));
    }
    Ok(())
}

async fn index<T: FulltextProvider>(i: &Instance<T>, id: &str, text: &str) -> Result<(), String> {
    served(i)
        .index(id, text)
        .await
        .map_err(|e| format!("index({id:?}, {text:?}) failed: {e}"))
}

async fn indexed_document_is_found<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    index(i, "a", "The Quick brown Fox").await?;
    finds(i, "quick", 10, &["a"]).await?;
    finds(i, "QUICK", 10, &["a"]).await?;
    finds(i, "fox", 10, &["a"]).await?;
    finds(i, "cat", 10, &[]).await
}

async fn search_needs_every_word<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    index(i, "a", "red apple").await?;
    index(i, "b", "red cherry").await?;
    index(i, "c", "green apple").await?;
    finds(i, "red", 10, &["a", "b"]).await?;
    finds(i, "red apple", 10, &["a"]).await?;
    finds(i, "apple, red!", 10, &["a"]).await?;
    finds(i, "red green", 10, &[]).await
}

async fn results_are_sorted_and_limited<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    for id in ["d", "b", "e", "a", "c"] {
        index(i, id, "common word").await?;
    }
    finds(i, "common", 10, &["a", "b", "c", "d", "e"]).await?;
    finds(i, "common", 3, &["a", "b", "c"]).await?;
    finds(i, "common", 0, &[]).await
}

async fn reindexing_replaces_the_text<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    index(i, "a", "red").await?;
    index(i, "a", "blue").await?;
    finds(i, "red", 10, &[]).await?;
    finds(i, "blue", 10, &["a"]).await
}

async fn remove_reports_and_forgets<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    index(i, "a", "hello").await?;
    let first = served(i).remove("a").await;
    let second = served(i).remove("a").await;
    if !matches!((&first, &second), (Ok(true), Ok(false))) {
        return Err(format!(
            "remove(\"a\") twice answered {first:?} then {second:?}, expected Ok(true) then Ok(false)"
        ));
    }
    finds(i, "hello", 10, &[]).await
}

async fn empty_id_or_query_is_invalid_input<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    let fulltext = served(i);
    expect_kind(
        "index(\"\", \"text\")",
        ErrorKind::InvalidInput,
        &fulltext.index("", "text").await,
    )?;
    expect_kind(
        "remove(\"\")",
        ErrorKind::InvalidInput,
        &fulltext.remove("").await,
    )?;
    expect_kind(
        "search(\" !? \", 10)",
        ErrorKind::InvalidInput,
        &fulltext.search(" !? ", 10).await,
    )?;
    // A refusal breaks nothing.
    index(i, "a", "still works").await?;
    finds(i, "works", 10, &["a"]).await
}

async fn prefix_search_follows_the_declared_feature<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    index(i, "a", "quick fox").await?;
    index(i, "b", "quiet night").await?;
    let found = served(i).search_prefix("QUI", 10).await;
    if !i.declares(PREFIX) {
        return expect_unsupported("search_prefix", &found);
    }
    let found = found.map_err(|e| format!("search_prefix(\"QUI\", 10) failed: {e}"))?;
    if found != ["a", "b"] {
        return Err(format!(
            "search_prefix(\"QUI\", 10) answered {found:?}, expected [\"a\", \"b\"]"
        ));
    }
    let one = served(i).search_prefix("nig", 1).await;
    if !matches!(one.as_deref(), Ok([id]) if id == "b") {
        return Err(format!(
            "search_prefix(\"nig\", 1) answered {one:?}, expected [\"b\"]"
        ));
    }
    Ok(())
}

async fn operations_after_stop_fail_with_stopped<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    let fulltext = served(i);
    i.driver()
        .stop()
        .await
        .map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "index after stop",
        ErrorKind::Stopped,
        &fulltext.index("a", "x").await,
    )?;
    expect_kind(
        "remove after stop",
        ErrorKind::Stopped,
        &fulltext.remove("a").await,
    )?;
    expect_kind(
        "search after stop",
        ErrorKind::Stopped,
        &fulltext.search("x", 1).await,
    )?;
    let prefix = fulltext.search_prefix("x", 1).await;
    if i.declares(PREFIX) {
        expect_kind("search_prefix after stop", ErrorKind::Stopped, &prefix)
    } else {
        match prefix {
            Err(e) if matches!(e.kind(), ErrorKind::Stopped | ErrorKind::Unsupported) => Ok(()),
            other => Err(format!(
                "search_prefix after stop must answer Stopped or Unsupported, it answered {other:?}"
            )),
        }
    }
}

/// The shared check of driverkit, given every error this contract can provoke: it does the
/// rest (options, driver, after `stop`, an unreachable instance).
async fn secrets_never_show<T: FulltextProvider>(
    i: &Instance<T>,
    _settings: &(),
) -> Result<(), String> {
    i.secrets_never_show(|fulltext| {
        Box::pin(async move {
            vec![
                fulltext.index("", "text").await.err(),
                fulltext.remove("").await.err(),
                fulltext.search(" !? ", 10).await.err(),
                fulltext.search_prefix("", 10).await.err(),
                // Errors only after `stop` or where the backend cannot be reached.
                fulltext.index("kit-secrets", "text").await.err(),
                fulltext.search("text", 10).await.err(),
            ]
        })
    })
    .await
}
