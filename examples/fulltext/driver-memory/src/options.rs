//! Options of `fulltext.memory`.

/// Options of `fulltext.memory`, from its `INFRA` table.
///
/// ```
/// use sandloom_example_fulltext_memory::MemoryOptions;
/// assert!(MemoryOptions::default().prefix);
/// ```
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryOptions {
    /// Declare the feature `prefix` (default `true`).
    pub prefix: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self { prefix: true }
    }
}
