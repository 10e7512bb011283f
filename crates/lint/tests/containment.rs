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
fn c004_dependency_on_the_conformance_kits() {
    let report = lint("c004-conformance");
    assert_found(&report, &[(C004, "orders/Cargo.toml", 12)]);
    let kits = entry(
        &report,
        "orders/Cargo.toml",
        12,
        "[dependencies] sandloom-conformance",
    );
    assert!(
        kits.message.contains("`sandloom-conformance`"),
        "{}",
        kits.message
    );
    assert!(kits.help.contains("Infra::builder()"), "{}", kits.help);
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

#[test]
fn c004_reexport_of_driverkit_by_a_contract_crate_in_each_form() {
    let report = lint("c004-reexport");
    assert_found(
        &report,
        &[
            (C004, "orders/src/lib.rs", 4),
            (C004, "orders/src/lib.rs", 5),
            (C004, "orders/src/lib.rs", 12),
            (C004, "orders/src/lib.rs", 13),
            (C004, "orders/src/lib.rs", 14),
            (C004, "orders/src/lib.rs", 15),
            (C004, "orders/src/lib.rs", 18),
            (C004, "orders/src/lib.rs", 19),
            (C004, "orders/src/lib.rs", 22),
            (C004, "orders/src/lib.rs", 24),
        ],
    );
    // `pub use sandloom_driverkit as kit;`, reached by its full path.
    let drivers = at(&report, "orders/src/lib.rs", 12, 5);
    assert_eq!(
        drivers.message,
        "module `orders` uses `contracts::kit::__private::DRIVERS`, which leads to \
         `sandloom_driverkit::__private::DRIVERS` in `sandloom-driverkit`, the driver authors' \
         door, through re-exports: contracts (`pub use sandloom_driverkit as kit;` at \
         contracts/src/lib.rs:12) → sandloom-driverkit"
    );
    assert!(
        drivers
            .help
            .starts_with("use `contracts` for its own items only"),
        "{}",
        drivers.help
    );
    assert!(
        drivers.help.contains("sandloom-sdk-infra"),
        "{}",
        drivers.help
    );
    // `pub use sandloom_driverkit::__private;`
    let module = at(&report, "orders/src/lib.rs", 13, 11);
    assert!(
        module.message.contains(
            "uses `contracts::__private::DRIVERS`, which leads to \
             `sandloom_driverkit::__private::DRIVERS`"
        ) && module.message.contains(
            "contracts (`pub use sandloom_driverkit::__private;` at contracts/src/lib.rs:13) \
             → sandloom-driverkit"
        ),
        "{}",
        module.message
    );
    // `pub extern crate sandloom_driverkit;`, named with a leading `::`.
    let extern_crate = at(&report, "orders/src/lib.rs", 14, 13);
    assert!(
        extern_crate
            .message
            .contains("uses `::contracts::sandloom_driverkit::__private::DRIVERS`")
            && extern_crate.message.contains(
                "contracts (`pub extern crate sandloom_driverkit;` at contracts/src/lib.rs:14) \
             → sandloom-driverkit"
            ),
        "{}",
        extern_crate.message
    );
}

#[test]
fn c004_reexport_reached_through_a_use_and_a_glob() {
    let report = lint("c004-reexport");
    // `use contracts::kit;` is the violation, and so is every `kit::…` after it, macro paths
    // included.
    let import = at(&report, "orders/src/lib.rs", 4, 5);
    assert!(
        import.message.contains(
            "uses `contracts::kit`, which leads to `sandloom_driverkit` in `sandloom-driverkit`"
        ) && import.message.contains(
            "contracts (`pub use sandloom_driverkit as kit;` at contracts/src/lib.rs:12)"
        ),
        "{}",
        import.message
    );
    let ty = at(&report, "orders/src/lib.rs", 18, 21);
    assert!(
        ty.message.contains("uses `kit::NoOptions`"),
        "{}",
        ty.message
    );
    let call = at(&report, "orders/src/lib.rs", 19, 5);
    assert!(
        call.message.contains("uses `kit::NoOptions::default`"),
        "{}",
        call.message
    );
    let mac = at(&report, "orders/src/lib.rs", 24, 1);
    assert!(
        mac.message.contains(
            "uses `kit::define_capability!`, which leads to \
             `sandloom_driverkit::define_capability`"
        ),
        "{}",
        mac.message
    );
    // A glob of a module that glob-re-exports driverkit imports driverkit's names; a path
    // through that module leads into driverkit too.
    let glob = at(&report, "orders/src/lib.rs", 5, 5);
    assert!(
        glob.message.contains("uses `contracts::prelude::*`")
            && glob.message.contains(
                "contracts (`pub use ::sandloom_driverkit::*;` at contracts/src/lib.rs:17) \
                 → sandloom-driverkit"
            ),
        "{}",
        glob.message
    );
    let bound = at(&report, "orders/src/lib.rs", 22, 17);
    assert!(
        bound.message.contains(
            "uses `contracts::prelude::Driver`, which leads to `sandloom_driverkit::Driver`"
        ),
        "{}",
        bound.message
    );
}

#[test]
fn c004_reexport_in_a_submodule_of_a_renamed_dependency_with_a_renamed_driverkit() {
    let report = lint("c004-reexport");
    let renamed = at(&report, "orders/src/lib.rs", 15, 11);
    assert!(
        renamed.message.contains(
            "uses `search::wiring::internals::DRIVERS`, which leads to \
             `sandloom_driverkit::__private::DRIVERS` in `sandloom-driverkit`"
        ) && renamed.message.contains(
            "through re-exports: search-contract (`pub use ::dk::__private as internals;` at \
             search-contract/src/lib.rs:8) → sandloom-driverkit"
        ),
        "{}",
        renamed.message
    );
    assert!(
        renamed
            .help
            .starts_with("use `search-contract` for its own items only"),
        "{}",
        renamed.help
    );
}

#[test]
fn c004_reexport_chain_through_two_crates_to_driverkit_and_to_a_backend_sdk() {
    // orders → search-bridge (renamed `bridge`) → fulltext-contract → driverkit, and
    // orders → search-bridge → redis.
    let report = lint("c004-reexport-chain");
    assert_found(
        &report,
        &[
            (C004, "orders/src/lib.rs", 3),
            (C004, "orders/src/lib.rs", 6),
            (C004, "orders/src/lib.rs", 9),
            (C004, "orders/src/lib.rs", 18),
        ],
    );
    let chain = "→ fulltext-contract (`pub use sandloom_driverkit as kit;` at \
                 fulltext-contract/src/lib.rs:9) → sandloom-driverkit";
    let import = at(&report, "orders/src/lib.rs", 3, 5);
    assert!(
        import.message.contains(&format!(
            "uses `bridge::dk::Driver`, which leads to `sandloom_driverkit::Driver` in \
             `sandloom-driverkit`, the driver authors' door, through re-exports: search-bridge \
             (`pub use fulltext_contract::kit as dk;` at search-bridge/src/lib.rs:7) {chain}"
        )),
        "{}",
        import.message
    );
    assert!(
        import.help.starts_with(
            "use `search-bridge` for its own items only (a contract's operation trait and \
             `CapabilityRef`), not for what it passes on from `sandloom-driverkit` \
             (re-exported by `fulltext-contract`)"
        ),
        "{}",
        import.help
    );
    let module = at(&report, "orders/src/lib.rs", 6, 5);
    assert!(
        module.message.contains(&format!(
            "uses `bridge::tools::__private::DRIVERS`, which leads to \
             `sandloom_driverkit::__private::DRIVERS` in `sandloom-driverkit`, the driver \
             authors' door, through re-exports: search-bridge (`pub use \
             fulltext_contract::kit::__private;` at search-bridge/src/lib.rs:4) {chain}"
        )),
        "{}",
        module.message
    );
    let sdk = at(&report, "orders/src/lib.rs", 9, 27);
    assert!(
        sdk.message.contains(
            "uses `bridge::backend::Client`, which leads to `redis::Client` in `redis`, a \
             banned backend SDK, through re-exports: search-bridge (`pub use redis as backend;` \
             at search-bridge/src/lib.rs:8) → redis"
        ),
        "{}",
        sdk.message
    );
    assert!(
        sdk.help.contains("ask `Infra` for the capability"),
        "{}",
        sdk.help
    );
    // A bare trait name that a glob import supplies, from a named re-export.
    let bare = at(&report, "orders/src/lib.rs", 18, 10);
    assert!(
        bare.message.contains(&format!(
            "uses `Driver` (imported by `use bridge::prelude::*;` at line 14), which leads to \
             `sandloom_driverkit::Driver` in `sandloom-driverkit`, the driver authors' door, \
             through re-exports: search-bridge (`pub use fulltext_contract::kit::Driver;` at \
             search-bridge/src/lib.rs:11) {chain}"
        )),
        "{}",
        bare.message
    );
}

#[test]
fn c004_reexport_compliant_module_uses_only_the_contracts_own_items() {
    // The contract re-exports driverkit (as `kit`, for its drivers) and sdk-infra's items
    // (directly, and through `sandloom_driverkit::sdk`); the module imports the contract by
    // name and by glob, has a local `kit` module, and uses driverkit only in its tests; a
    // driver uses the contract's `kit`.
    let report = lint("c004-reexport-compliant");
    assert_clean(&report);
    let role = |name: &str| {
        report
            .role_of(name)
            .and_then(|r| r.role)
            .map(sandloom_lint::Role::as_str)
    };
    assert_eq!(role("orders"), Some("module"));
    assert_eq!(role("fulltext-contract"), Some("contract"));
    assert_eq!(role("fulltext-memory"), Some("driver"));
}
