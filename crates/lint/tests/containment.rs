//! C004: each way a module can reach driverkit, a driver or a backend SDK, proven on a fixture
//! that must fail, and a compliant workspace that must pass.

mod common;

use common::{assert_clean, assert_found, at, entry, lint};
use sandloom_lint::Code::C004;

#[test]
fn c004_direct_dependency_on_driverkit_and_on_a_driver_crate() {
    let report = lint("c004-direct");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/Cargo.toml", 13),
        ],
    );
    let kit = entry(
        &report,
        "orders/Cargo.toml",
        12,
        "[dependencies] sandloom-driverkit",
    );
    assert!(
        kit.message.contains("`sandloom-driverkit`"),
        "{}",
        kit.message
    );
    assert!(kit.help.contains("sandloom-sdk-infra"), "{}", kit.help);
    let driver = entry(&report, "orders/Cargo.toml", 13, "[dependencies] console");
    assert!(
        driver.message.contains("`console`, a driver crate"),
        "{}",
        driver.message
    );
}

#[test]
fn c004_renamed_dependency_is_seen_in_the_manifest_and_in_source() {
    let report = lint("c004-renamed");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/src/lib.rs", 3),
        ],
    );
    entry(
        &report,
        "orders/Cargo.toml",
        12,
        "[dependencies] dk (package \"sandloom-driverkit\")",
    );
    let used = at(&report, "orders/src/lib.rs", 3, 5);
    assert!(used.message.contains("uses `dk`"), "{}", used.message);
}

#[test]
fn c004_target_specific_normal_and_build_dependencies() {
    let report = lint("c004-target");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 14),
            (C004, "orders/Cargo.toml", 17),
        ],
    );
    entry(
        &report,
        "orders/Cargo.toml",
        14,
        "[target.'cfg(unix)'.dependencies] sandloom-driverkit",
    );
    let sdk = entry(
        &report,
        "orders/Cargo.toml",
        17,
        "[target.'cfg(windows)'.build-dependencies] redis",
    );
    assert!(
        sdk.message.contains("banned backend SDK"),
        "{}",
        sdk.message
    );
}

#[test]
fn c004_extern_crate_alias_and_its_uses() {
    let report = lint("c004-extern-alias");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/src/lib.rs", 3),
            (C004, "orders/src/lib.rs", 5),
            (C004, "orders/src/lib.rs", 6),
        ],
    );
    at(&report, "orders/src/lib.rs", 3, 14);
    let alias = at(&report, "orders/src/lib.rs", 5, 21);
    assert!(alias.message.contains("uses `kit`"), "{}", alias.message);
    at(&report, "orders/src/lib.rs", 6, 5);
}

#[test]
fn c004_nested_use_tree_in_a_submodule_file() {
    let report = lint("c004-use-tree");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/src/wiring.rs", 4),
        ],
    );
    at(&report, "orders/src/wiring.rs", 4, 5);
}

#[test]
fn c004_fully_qualified_type_and_expression_paths() {
    let report = lint("c004-qualified-path");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/src/lib.rs", 3),
            (C004, "orders/src/lib.rs", 4),
        ],
    );
    at(&report, "orders/src/lib.rs", 3, 23);
    at(&report, "orders/src/lib.rs", 4, 5);
}

#[test]
fn c004_macro_paths_and_a_module_that_registers_a_driver() {
    let report = lint("c004-macro-path");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/src/lib.rs", 5),
            (C004, "orders/src/lib.rs", 7),
        ],
    );
    let registers = at(&report, "orders/src/lib.rs", 5, 3);
    assert!(
        registers
            .message
            .contains("declared a module, but registers a driver"),
        "{}",
        registers.message
    );
    let uses = at(&report, "orders/src/lib.rs", 7, 1);
    assert!(
        uses.message.contains("uses `sandloom_driverkit`"),
        "{}",
        uses.message
    );
    let role = report.role_of("orders").expect("orders is a member");
    assert_eq!(role.role, Some(sandloom_lint::Role::Driver));
    assert_eq!(role.origin, sandloom_lint::RoleOrigin::Overridden);
}

#[test]
fn c004_banned_sdks_built_in_and_configured() {
    let report = lint("c004-banned-sdk");
    assert_found(
        &report,
        &[
            (C004, "orders/Cargo.toml", 12),
            (C004, "orders/Cargo.toml", 13),
            (C004, "orders/src/lib.rs", 3),
        ],
    );
    entry(&report, "orders/Cargo.toml", 12, "[dependencies] redis");
    let configured = entry(&report, "orders/Cargo.toml", 13, "[dependencies] memcache");
    assert!(
        configured.message.contains("banned backend SDK"),
        "{}",
        configured.message
    );
    at(&report, "orders/src/lib.rs", 3, 5);
}

#[test]
fn c004_parent_of_a_driver_crate() {
    let report = lint("c004-driver-parent");
    assert_found(&report, &[(C004, "orders/Cargo.toml", 12)]);
    let parent = entry(&report, "orders/Cargo.toml", 12, "[dependencies] bundle");
    assert!(
        parent
            .message
            .contains("a parent of the driver crate `console` (bundle → console)"),
        "{}",
        parent.message
    );
}

#[test]
fn c004_compliant_module_contract_driver_and_application_pass() {
    let report = lint("c004-compliant");
    assert_clean(&report);
    let role = |name: &str| {
        report
            .role_of(name)
            .and_then(|r| r.role)
            .map(sandloom_lint::Role::as_str)
    };
    assert_eq!(role("orders"), Some("module"));
    assert_eq!(role("geo-contract"), Some("contract"));
    assert_eq!(role("console"), Some("driver"));
    assert_eq!(role("app"), Some("application"));
}
