//! Roles: declared, inferred (and said so), overridden for crates that register drivers, and
//! R001 for an invalid `[package.metadata.sandloom]`.

mod common;

use common::{assert_found, entry, lint};
use sandloom_lint::Code::R001;
use sandloom_lint::{Role, RoleOrigin};

#[test]
fn roles_are_declared_inferred_or_overridden() {
    let report = lint("roles");
    let role = |name: &str| {
        let found = report.role_of(name).expect("a member");
        (found.role, found.origin, found.note.clone())
    };
    assert_eq!(role("declared").0, Some(Role::Module));
    assert_eq!(role("declared").1, RoleOrigin::Declared);
    let sneaky = role("sneaky");
    assert_eq!(
        (sneaky.0, sneaky.1),
        (Some(Role::Driver), RoleOrigin::Overridden)
    );
    assert!(
        sneaky
            .2
            .contains("declared contract, but registers drivers"),
        "{}",
        sneaky.2
    );
    let app = role("inferred-app");
    assert_eq!(
        (app.0, app.1),
        (Some(Role::Application), RoleOrigin::Inferred)
    );
    assert_eq!(app.2, "role inferred: application (depends on the kernel)");
    let module = role("inferred-module");
    assert_eq!(
        module.2,
        "role inferred: module (depends on sandloom-sdk-infra)"
    );
    assert_eq!(role("plain").0, None);
    assert!(role("typo").2.starts_with("declared role invalid (R001)"));
    assert!(
        report
            .to_text()
            .contains("role inferred: application (depends on the kernel)")
    );
}

#[test]
fn r001_unknown_role_and_unknown_key() {
    let report = lint("roles");
    assert_found(
        &report,
        &[
            (R001, "extra-key/Cargo.toml", 9),
            (R001, "typo/Cargo.toml", 8),
        ],
    );
    let typo = entry(
        &report,
        "typo/Cargo.toml",
        8,
        "[package.metadata.sandloom] role",
    );
    assert!(
        typo.message.contains("unknown role `modul`"),
        "{}",
        typo.message
    );
    entry(
        &report,
        "extra-key/Cargo.toml",
        9,
        "[package.metadata.sandloom] owner",
    );
}

#[test]
fn a_driver_inferred_from_registration_says_so() {
    let report = lint("c004-direct");
    let console = report.role_of("console").expect("a member");
    assert_eq!(console.note, "role inferred: driver (registers drivers)");
}
