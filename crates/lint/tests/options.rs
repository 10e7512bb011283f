//! O001: driver options (and the types inside them) refuse unknown fields.

mod common;

use common::{assert_clean, assert_found, at, lint};
use sandloom_lint::Code::O001;

#[test]
fn o001_options_nested_options_and_flatten() {
    let report = lint("options-violating");
    assert_found(
        &report,
        &[
            (O001, "pgcache/src/options.rs", 7),
            (O001, "pgcache/src/options.rs", 14),
            (O001, "pgcache/src/options.rs", 27),
        ],
    );
    let top = at(&report, "pgcache/src/options.rs", 7, 12);
    assert!(
        top.message
            .contains("`PgOptions`, the options of driver `PgCache`"),
        "{}",
        top.message
    );
    assert!(top.help.contains("deny_unknown_fields"), "{}", top.help);
    let nested = at(&report, "pgcache/src/options.rs", 14, 12);
    assert!(
        nested.message.contains("a field type of `PgOptions`"),
        "{}",
        nested.message
    );
    let flatten = at(&report, "pgcache/src/options.rs", 27, 12);
    assert!(flatten.message.contains("flatten"), "{}", flatten.message);
}

#[test]
fn o001_compliant_options_pass() {
    assert_clean(&lint("options-compliant"));
}
