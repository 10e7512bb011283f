//! O001: driver options (and the types inside them) refuse unknown fields. O002: a field
//! whose name reads as a credential is typed `Secret`/`SecretUrl`.

mod common;

use common::{assert_clean, assert_found, at, lint};
use sandloom_lint::Code::{O001, O002};

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

#[test]
fn o002_credentials_in_plain_types_are_refused_at_every_level() {
    let report = lint("options-secrets-violating");
    assert_found(
        &report,
        &[
            (O002, "kvcache/src/options.rs", 9),
            (O002, "kvcache/src/options.rs", 10),
            (O002, "kvcache/src/options.rs", 12),
            (O002, "kvcache/src/options.rs", 20),
            (O002, "kvcache/src/options.rs", 21),
        ],
    );
    let password = at(&report, "kvcache/src/options.rs", 9, 9);
    assert!(
        password
            .message
            .contains("field `password` of `KvOptions`, in the options of driver `KvCache`"),
        "{}",
        password.message
    );
    assert!(password.help.contains("Secret<"), "{}", password.help);
    // Renamed: the key INFRA spells is what reads as a credential.
    let renamed = at(&report, "kvcache/src/options.rs", 12, 9);
    assert!(
        renamed.message.contains("field `clientSecret`"),
        "{}",
        renamed.message
    );
}

#[test]
fn o002_secret_typed_credentials_and_lookalike_names_pass() {
    assert_clean(&lint("options-secrets-compliant"));
}
