//! KITS.md and its kit table describe the kits as they are: for each kit, the same
//! obligations, by name and count, as its `OBLIGATIONS`. A new or renamed obligation fails here
//! until the pages say so.

use sandloom_conformance::{cache, lock, notifier, objectstore, secrets, taskqueue};

const KITS_MD: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../KITS.md"));

const KITS: [(&str, &str, &[&str]); 6] = [
    ("cache", "cache", cache::OBLIGATIONS),
    ("objectstore", "objectstore", objectstore::OBLIGATIONS),
    ("taskqueue", "taskqueue", taskqueue::OBLIGATIONS),
    ("notifier", "notifier", notifier::OBLIGATIONS),
    ("lock", "lock", lock::OBLIGATIONS),
    ("secrets", "secrets", secrets::OBLIGATIONS),
];

/// The obligations KITS.md lists under `## {title} (N obligations)`, and N.
fn section(title: &str) -> (usize, Vec<&'static str>) {
    let heading = format!("\n## {title} (");
    let start = KITS_MD
        .find(&heading)
        .unwrap_or_else(|| panic!("KITS.md has no section `## {title} (…)`"));
    let rest = &KITS_MD[start + heading.len()..];
    let count = rest
        .split_once(' ')
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("`## {title} (N obligations)`: N is not a number"));
    let body = rest.split("\n## ").next().unwrap_or_default();
    let names = body
        .lines()
        .filter_map(|line| line.strip_prefix("- `"))
        .filter_map(|line| line.split_once('`').map(|(name, _)| name))
        .collect();
    (count, names)
}

#[test]
fn kits_md_lists_every_obligation_of_every_kit() {
    for (title, _, obligations) in KITS {
        let (count, names) = section(title);
        assert_eq!(count, obligations.len(), "KITS.md: the count of `{title}`");
        assert_eq!(
            names, obligations,
            "KITS.md: the obligations of `{title}`, in order"
        );
    }
}

#[test]
fn the_kit_tables_give_each_kit_its_count() {
    for (title, kit, obligations) in KITS {
        let row = format!("| {title} | `{kit}_conformance!` | {} |", obligations.len());
        assert!(KITS_MD.contains(&row), "KITS.md's table lacks `{row}`");
    }
}
