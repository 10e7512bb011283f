//! SANDLOOM-B020 for a driver whose crate is a dependency but is not linked: this binary has
//! `sandloom-embedded` as a dev-dependency and never names it, so `cache.memory` is not linked,
//! and the error says to add it to `link_drivers!`.

mod common;

use common::{only, refused};
use sandloom::Problem;

#[tokio::test]
async fn a_dependency_no_code_names_is_not_linked_and_the_error_says_how_to_link_it() {
    let err = refused(
        "[cache.default]\ndriver = \"memory\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    let Problem::NoDriver {
        driver,
        linked,
        provided_by,
        dependency_not_linked,
        location,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(driver, "memory");
    assert_eq!(linked, &["fixture"], "linked cache drivers, sorted");
    assert_eq!(*provided_by, Some("sandloom-embedded"));
    assert!(dependency_not_linked);
    assert_eq!(location.to_string(), "infra.toml:2:1");
    let text = err.to_string();
    assert!(text.contains("[SANDLOOM-B020]"), "{text}");
    assert!(
        text.contains("is a dependency of this application, but no code names it"),
        "{text}"
    );
    assert!(
        text.contains(
            "add `sandloom_embedded` to the application's `sandloom::link_drivers!(…)` call"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_driver_without_a_known_crate_lists_the_linked_ones_and_suggests_a_close_name() {
    let err = refused(
        "[cache.default]\ndriver = \"fixtur\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    let Problem::NoDriver {
        provided_by,
        suggestion,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(*provided_by, None);
    assert_eq!(suggestion.as_deref(), Some("fixture"));
    assert!(err.to_string().contains("did you mean `fixture`?"), "{err}");
}

#[tokio::test]
async fn a_third_party_driver_from_an_unlinked_dependency_names_the_candidates() {
    // `notifier.console` comes from `sandloom-example-driver-console`, a dependency of this
    // package that no one knows provides it, and that this binary does not link.
    let err = refused(
        "[notifier.default]\ndriver = \"console\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    let Problem::NoDriver {
        provided_by,
        candidates,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(*provided_by, None);
    assert_eq!(candidates, &["sandloom_example_driver_console"]);
    assert!(
        only(&err).description().ends_with(
            "Dependencies of this application that register drivers but are not named in `link_drivers!`, so are not linked into the binary, and may provide it: `sandloom_example_driver_console`"
        ),
        "{err}"
    );
    assert_eq!(
        only(&err).action(),
        "name the crate that provides `notifier.console` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, `sandloom_example_driver_console` registers drivers, is not named there and may provide it (for example `sandloom::link_drivers!(…, sandloom_example_driver_console)`); if none does, add the crate that provides it with `cargo add` and name it there too"
    );
}

#[tokio::test]
async fn only_dependencies_that_register_drivers_are_candidates() {
    // No dependency is named like `pigeon` or `notifier`: every unlinked dependency of this
    // package whose sources register drivers is a candidate, and no other: not the module
    // crate `sandloom_example_orders`, the contract crate
    // `sandloom_example_fulltext_contracts`, `sandloom_test_support`, nor `clap`, `insta`,
    // `jsonschema` or `tempfile`.
    let err = refused(
        "[notifier.default]\ndriver = \"pigeon\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    let Problem::NoDriver { candidates, .. } = only(&err) else {
        panic!("{err}")
    };
    assert_eq!(
        candidates,
        &[
            "sandloom_driver_amqp",
            "sandloom_driver_postgres",
            "sandloom_driver_redis",
            "sandloom_driver_s3",
            "sandloom_driver_smtp",
            "sandloom_driver_vault",
            "sandloom_driver_webhook",
            "sandloom_embedded",
            "sandloom_example_driver_console",
            "sandloom_example_fulltext_memory",
            "sandloom_fixture_faulty",
            "sandloom_fixture_impostor",
            "sandloom_fixture_keyed",
            "sandloom_fixture_rival",
        ],
        "{err}"
    );
}

#[tokio::test]
async fn an_unknown_capability_names_the_unlinked_crate_that_defines_it() {
    let err = refused(
        "[fulltext.default]\ndriver = \"memory\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    assert_eq!(
        only(&err).to_string(),
        "[SANDLOOM-B010] unknown capability `fulltext` (at infra.toml:1:2)\n    \
         Action: link the crate that defines it: `sandloom_example_fulltext_contracts`, a dependency of this application, defines `fulltext` but no code names it, so it is not linked into the binary; add it to the application's `sandloom::link_drivers!(…)` call"
    );
}

#[tokio::test]
async fn a_reserved_capability_names_no_crate_and_says_it_is_not_public() {
    // Unlinked dependencies of this package register drivers, but none can serve `search`.
    let err = refused(
        "[search.default]\ndriver = \"elastic\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await;
    assert_eq!(
        only(&err).to_string(),
        "[SANDLOOM-B020] no driver `search.elastic` is linked; `search.default` selects it (at infra.toml:2:1). Linked `search` drivers: none\n    \
         Action: `search` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it and INFRA cannot use it; remove `[search.default]` from INFRA (it becomes usable when a Sandloom release publishes its operation trait and conformance kit)"
    );
    let config = sandloom::InfraConfig::from_toml_str("", "infra.toml").unwrap();
    let report = sandloom::conditions::ConditionReport::evaluate(
        &config,
        &sandloom::link_drivers!(sandloom_fixture_good),
        "search",
        "default",
    );
    assert!(
        report.to_string().starts_with(
            "Why `search.default` (development environment; `search` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it):\n"
        ),
        "{report}"
    );
}
