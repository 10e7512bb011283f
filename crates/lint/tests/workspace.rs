//! The lint on this repository, examples and test fixtures included: it must be clean.

use std::path::PathBuf;

use sandloom_lint::{Role, RoleOrigin};

#[test]
fn this_workspace_is_clean() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let report = sandloom_lint::lint(Some(&root)).expect("the lint runs on this workspace");
    assert!(
        report.is_clean(),
        "this workspace breaks its own rules:\n{}",
        report.to_text()
    );
    // Only test fixtures may break a rule on purpose.
    for allowed in &report.allowed {
        assert!(
            allowed.violation.krate.starts_with("sandloom-fixture-"),
            "an allowance excuses a crate that is not a test fixture: {allowed:?}"
        );
    }

    let role = |name: &str| {
        let found = report
            .role_of(name)
            .unwrap_or_else(|| panic!("`{name}` is a member"));
        (found.role, found.origin)
    };
    assert_eq!(
        role("sandloom-example-orders"),
        (Some(Role::Module), RoleOrigin::Declared)
    );
    assert_eq!(
        role("sandloom-example-driver-console"),
        (Some(Role::Driver), RoleOrigin::Declared)
    );
    assert_eq!(
        role("sandloom-embedded"),
        (Some(Role::Driver), RoleOrigin::Inferred)
    );
    assert_eq!(
        role("sandloom-kernel"),
        (Some(Role::Framework), RoleOrigin::Inferred)
    );
}
