//! A third-party package defines a capability and a driver for it; modules reach it through a
//! typed key like the built-ins. Unknown capabilities are B010 with a suggestion.

mod common;

use common::{config, only, start};
use sandloom::{Kernel, codes};
use sandloom_fixture_good::geocoder::GEOCODER;

#[tokio::test]
async fn a_third_party_capability_resolves_and_is_reachable_through_its_key() {
    let running = start(
        "[geocoder.default]\ndriver = \"table\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await
    .unwrap();
    let geocoder = running.infra().default_instance(&GEOCODER).unwrap();
    assert_eq!(geocoder.locate("Paris"), Some((48.8566, 2.3522)));
    let line = &running.report().lines[0];
    assert_eq!(
        (
            line.capability.as_str(),
            line.contract_version.to_string().as_str()
        ),
        ("geocoder", "1.0.0")
    );
    running.shutdown().await.unwrap();
}

#[test]
fn an_unknown_capability_is_b010_with_location_and_suggestion() {
    let err = Kernel::new(
        config("[geocodr.default]\ndriver = \"table\""),
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .check()
    .unwrap_err();
    let problem = only(&err);
    assert_eq!(problem.code(), codes::CONFIG);
    let text = problem.to_string();
    assert!(
        text.contains("unknown capability `geocodr` (did you mean `geocoder`?)"),
        "{text}"
    );
    assert!(text.contains("infra.toml:1:10"), "{text}");
}

#[test]
fn built_in_specs_hold_every_feature_apart_from_required_operations() {
    for spec in sandloom::registry::capabilities() {
        for feature in spec.features {
            assert!(
                !spec.required_operations.contains(feature),
                "`{}` lists `{feature}` as both required and optional",
                spec.name
            );
        }
    }
    let names: Vec<&str> = sandloom::registry::capabilities()
        .iter()
        .map(|s| s.name)
        .collect();
    for expected in [
        "cache",
        "notifier",
        "objectstore",
        "taskqueue",
        "lock",
        "graph_store",
        "workflow",
        "search",
        "secrets",
        "geocoder",
    ] {
        assert!(
            names.contains(&expected),
            "missing spec `{expected}` in {names:?}"
        );
    }
}

#[tokio::test]
async fn a_key_declared_with_the_wrong_trait_is_a_typed_error_not_a_panic() {
    use sandloom::sdk::{AccessError, CapabilityRef, Notifier};
    const WRONG: CapabilityRef<dyn Notifier> = CapabilityRef::new("geocoder");
    let running = start(
        "[geocoder.default]\ndriver = \"table\"",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await
    .unwrap();
    let err = running.infra().default_instance(&WRONG).err().unwrap();
    assert!(matches!(err, AccessError::WrongType { .. }), "{err}");
    running.shutdown().await.unwrap();
}
