//! Shared helpers: lint a fixture workspace and compare what was found with what must be.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

use sandloom_lint::{Code, Report, Violation};

/// The manifest of the fixture workspace `name` (under `tests/fixtures/`).
pub fn manifest(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join("Cargo.toml")
}

/// Lint the fixture workspace `name` through the library API.
pub fn lint(name: &str) -> Report {
    sandloom_lint::lint(Some(&manifest(name)))
        .unwrap_or_else(|e| panic!("the lint could not run on fixture `{name}`: {e}"))
}

/// Assert exactly these violations, as (code, file, line), in any order.
pub fn assert_found(report: &Report, expected: &[(Code, &str, usize)]) {
    let mut found: Vec<(Code, String, usize)> = report
        .violations
        .iter()
        .map(|v| {
            let file = v.location.file.to_string_lossy().into_owned();
            (v.code, file, v.location.line.unwrap_or(0))
        })
        .collect();
    let mut expected: Vec<(Code, String, usize)> = expected
        .iter()
        .map(|(code, file, line)| (*code, (*file).to_owned(), *line))
        .collect();
    found.sort();
    expected.sort();
    assert_eq!(
        found,
        expected,
        "\nthe lint reported:\n{}",
        report.to_text()
    );
}

/// Assert nothing was found.
pub fn assert_clean(report: &Report) {
    assert!(
        report.is_clean(),
        "expected no violations:\n{}",
        report.to_text()
    );
}

/// The one violation at `file:line:column`.
pub fn at<'r>(report: &'r Report, file: &str, line: usize, column: usize) -> &'r Violation {
    report
        .violations
        .iter()
        .find(|v| {
            v.location.file.to_string_lossy() == file
                && v.location.line == Some(line)
                && v.location.column == Some(column)
        })
        .unwrap_or_else(|| panic!("nothing at {file}:{line}:{column}:\n{}", report.to_text()))
}

/// The manifest violation at `file:line`, checking its entry.
pub fn entry<'r>(report: &'r Report, file: &str, line: usize, entry: &str) -> &'r Violation {
    let found = report
        .violations
        .iter()
        .find(|v| v.location.file.to_string_lossy() == file && v.location.line == Some(line))
        .unwrap_or_else(|| panic!("nothing at {file}:{line}:\n{}", report.to_text()));
    assert_eq!(found.location.entry.as_deref(), Some(entry), "{found:?}");
    found
}
