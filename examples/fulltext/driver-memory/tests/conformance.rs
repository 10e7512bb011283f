//! `fulltext.memory` against the `fulltext` kit, with the feature `prefix` declared and without.

use sandloom_example_fulltext_memory::{MemoryFulltext, MemoryOptions};

sandloom_example_fulltext_contracts::fulltext_conformance!(MemoryFulltext, |_request| {
    MemoryOptions::default()
});

sandloom_example_fulltext_contracts::fulltext_conformance!(
    without_prefix: MemoryFulltext,
    |_request| MemoryOptions { prefix: false }
);
