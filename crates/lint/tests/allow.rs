//! Allowances: an expected violation is listed apart and does not fail; a stale one is A001.

mod common;

use common::{assert_found, entry, lint};
use sandloom_lint::Code::{A001, O001};

#[test]
fn allowed_violations_are_listed_with_their_reason_and_stale_allowances_fail() {
    let report = lint("allowances");
    assert_found(&report, &[(A001, "Cargo.toml", 10)]);
    let stale = entry(
        &report,
        "Cargo.toml",
        10,
        "[[workspace.metadata.sandloom.allow]] crate = \"lenient\", code = \"E001\"",
    );
    assert!(
        stale.message.contains("matches no violation"),
        "{}",
        stale.message
    );

    assert_eq!(report.allowed.len(), 1, "{}", report.to_text());
    let allowed = &report.allowed[0];
    assert_eq!(allowed.violation.code, O001);
    assert_eq!(
        allowed.violation.location.file.to_str(),
        Some("lenient/src/lib.rs")
    );
    assert_eq!(allowed.violation.location.line, Some(6));
    assert!(allowed.reason.contains("on purpose"));
    assert!(report.to_text().contains("allowed[O001]"));
}
