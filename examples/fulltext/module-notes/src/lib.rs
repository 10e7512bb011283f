//! Example module: notes, found by their words through the `fulltext` capability, which a
//! package of its own defines (`sandloom-example-fulltext-contracts`).
//!
//! It depends on `sandloom-sdk-infra` and that contract crate only, declares what it needs with
//! `requires!` like any module, and never sees the driver that serves it.

use sandloom_example_fulltext_contracts::{FULLTEXT, Fulltext, PREFIX};
use sandloom_sdk_infra::{AccessError, Infra, InfraResult, requires};

requires!(FULLTEXT, features = [PREFIX]);

/// Notes kept in the `default` fulltext instance.
///
/// ```
/// # fn demo(infra: &sandloom_sdk_infra::Infra) -> Result<(), sandloom_sdk_infra::AccessError> {
/// let notes = sandloom_example_notes::Notes::new(infra)?;
/// # Ok(()) }
/// ```
pub struct Notes<'a> {
    index: &'a dyn Fulltext,
}

impl<'a> Notes<'a> {
    /// Resolve the capability once.
    ///
    /// # Errors
    /// An [`AccessError`] when `fulltext.default` is not configured (startup checks it already,
    /// through `requires!`).
    ///
    /// ```
    /// # fn demo(infra: &sandloom_sdk_infra::Infra) {
    /// assert!(sandloom_example_notes::Notes::new(infra).is_ok());
    /// # }
    /// ```
    pub fn new(infra: &'a Infra) -> Result<Self, AccessError> {
        Ok(Self {
            index: infra.default_instance(&FULLTEXT)?,
        })
    }

    /// Keep a note.
    ///
    /// # Errors
    /// The index's error (`InvalidInput` for an empty id).
    ///
    /// ```
    /// # async fn demo(notes: &sandloom_example_notes::Notes<'_>) {
    /// notes.add("n1", "Call the plumber").await.unwrap();
    /// # }
    /// ```
    pub async fn add(&self, id: &str, text: &str) -> InfraResult<()> {
        self.index.index(id, text).await
    }

    /// The notes with every word of `query`, then those with a word starting with the last
    /// word of the query (for search-as-you-type), without repeats.
    ///
    /// # Errors
    /// The index's error (`InvalidInput` for a query without a word).
    ///
    /// ```
    /// # async fn demo(notes: &sandloom_example_notes::Notes<'_>) {
    /// let found = notes.find("plumb").await.unwrap();
    /// # }
    /// ```
    pub async fn find(&self, query: &str) -> InfraResult<Vec<String>> {
        let mut found = self.index.search(query, 20).await?;
        if let Some(last) = query.split_whitespace().last() {
            for id in self.index.search_prefix(last, 20).await? {
                if !found.contains(&id) {
                    found.push(id);
                }
            }
        }
        Ok(found)
    }
}
