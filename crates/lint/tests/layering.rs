//! L001: the three layering rules of this workspace, on stand-in crates of the same names.

mod common;

use common::{assert_clean, assert_found, entry, lint, manifest};
use sandloom_lint::Code::L001;
use sandloom_lint::LintError;

#[test]
fn l001_direct_and_transitive_violations_with_their_chains() {
    let report = lint("layering-violating");
    assert_found(
        &report,
        &[
            (L001, "console/Cargo.toml", 9),
            (L001, "sandloom-kernel/Cargo.toml", 8),
            (L001, "sandloom-sdk-infra/Cargo.toml", 8),
            (L001, "sandloom-sdk-infra/Cargo.toml", 8),
        ],
    );
    let driver = entry(
        &report,
        "console/Cargo.toml",
        9,
        "[dependencies] sandloom-kernel",
    );
    assert!(
        driver
            .message
            .contains("a driver must not depend directly on sandloom-kernel"),
        "{}",
        driver.message
    );
    let kernel = entry(
        &report,
        "sandloom-kernel/Cargo.toml",
        8,
        "[dependencies] glue",
    );
    assert!(
        kernel
            .message
            .contains("through sandloom-kernel → glue → sandloom-driverkit"),
        "{}",
        kernel.message
    );
    assert!(
        kernel
            .help
            .starts_with("the kernel never depends on driverkit"),
        "{}",
        kernel.help
    );
    let sdk: Vec<&str> = report
        .violations
        .iter()
        .filter(|v| v.krate == "sandloom-sdk-infra")
        .map(|v| v.message.as_str())
        .collect();
    assert!(
        sdk.iter()
            .any(|m| m.contains("depends on `sandloom-kernel`, but")),
        "{sdk:?}"
    );
    assert!(
        sdk.iter()
            .any(|m| m.contains("sandloom-kernel → glue → sandloom-driverkit")),
        "{sdk:?}"
    );
}

#[test]
fn l001_compliant_layering_passes() {
    // The driver reaches the kernel through driverkit: allowed, the driver rule is direct-only.
    assert_clean(&lint("layering-compliant"));
}

#[test]
fn a_rule_naming_no_member_is_a_configuration_error() {
    let error = sandloom_lint::lint(Some(&manifest("layering-bad-config")))
        .expect_err("a misspelt crate must not pass silently");
    assert!(matches!(error, LintError::Config(_)), "{error:?}");
    assert!(error.to_string().contains("sandloom-kernal"), "{error}");
}
