//! E001 (dynamic loading) and E002 (source from outside the package).

mod common;

use common::{assert_clean, assert_found, at, entry, lint};
use sandloom_lint::Code::{E001, E002};

#[test]
fn e001_libloading_direct_and_renamed() {
    let report = lint("escape-libloading");
    assert_found(
        &report,
        &[
            (E001, "dyndriver/Cargo.toml", 12),
            (E001, "dyndriver/src/lib.rs", 4),
            (E001, "plugins/Cargo.toml", 12),
            (E001, "plugins/src/lib.rs", 3),
        ],
    );
    entry(
        &report,
        "dyndriver/Cargo.toml",
        12,
        "[dependencies] loader (package \"libloading\")",
    );
    at(&report, "dyndriver/src/lib.rs", 4, 29);
    entry(
        &report,
        "plugins/Cargo.toml",
        12,
        "[dependencies] libloading",
    );
    at(&report, "plugins/src/lib.rs", 3, 5);
}

#[test]
fn e001_dlopen_and_dlsym_through_libc_and_extern_blocks() {
    let report = lint("escape-dlopen");
    assert_found(
        &report,
        &[
            (E001, "native/src/lib.rs", 3),
            (E001, "native/src/lib.rs", 6),
            (E001, "native/src/lib.rs", 10),
        ],
    );
    assert!(
        at(&report, "native/src/lib.rs", 3, 20)
            .message
            .contains("`dlsym`")
    );
    assert!(
        at(&report, "native/src/lib.rs", 6, 8)
            .message
            .contains("`dlopen`")
    );
    assert!(
        at(&report, "native/src/lib.rs", 10, 33)
            .message
            .contains("`dlopen`")
    );
}

#[test]
fn e001_compliant_libc_use_and_an_application_that_loads_code_pass() {
    assert_clean(&lint("escape-compliant"));
}

#[test]
fn e002_path_attribute_outside_the_package() {
    let report = lint("source-path");
    assert_found(&report, &[(E002, "orders/src/lib.rs", 3)]);
    let outside = at(&report, "orders/src/lib.rs", 3, 1);
    assert!(
        outside.message.contains("source-shared/extra.rs"),
        "{}",
        outside.message
    );
}

#[test]
fn e002_include_outside_the_package_and_of_a_computed_path() {
    let report = lint("source-include");
    assert_found(
        &report,
        &[(E002, "gen/src/lib.rs", 3), (E002, "gen/src/lib.rs", 8)],
    );
    assert!(
        at(&report, "gen/src/lib.rs", 3, 1)
            .message
            .contains("generated.rs")
    );
    assert!(
        at(&report, "gen/src/lib.rs", 8, 5)
            .message
            .contains("computed path")
    );
}

#[test]
fn e002_compliant_paths_includes_and_include_str_pass() {
    assert_clean(&lint("source-compliant"));
}
