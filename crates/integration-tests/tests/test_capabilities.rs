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
    assert_eq!(
        geocoder.locate("Paris").await.unwrap(),
        Some((48.8566, 2.3522))
    );
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
    // At the capability's name, the token that is wrong, not the instance's.
    assert!(text.contains("(at infra.toml:1:2)"), "{text}");
}

#[test]
fn built_in_specs_hold_every_feature_apart_from_required_operations() {
    for spec in sandloom_kernel::registry::capabilities() {
        for feature in spec.features {
            assert!(
                !spec.required_operations.contains(feature),
                "`{}` lists `{feature}` as both required and optional",
                spec.name
            );
        }
    }
    let names: Vec<&str> = sandloom_kernel::registry::capabilities()
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

/// A third-party capability gets the built-ins' feature gate: `Table` implements `reverse`, but
/// an instance that does not declare the feature answers `Unsupported` through the kernel.
#[tokio::test]
async fn an_undeclared_optional_operation_of_a_third_party_capability_is_unsupported() {
    use sandloom::sdk::ErrorKind;

    let running = start(
        "[geocoder.default]\ndriver = \"table\"\n[geocoder.full]\ndriver = \"table\"\nreverse = true",
        sandloom::link_drivers!(sandloom_fixture_good),
    )
    .await
    .unwrap();
    let plain = running.infra().default_instance(&GEOCODER).unwrap();
    let err = plain.reverse(48.8566, 2.3522).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("feature `reverse`"), "{err}");
    let full = running.infra().capability(&GEOCODER, "full").unwrap();
    assert_eq!(
        full.reverse(48.8566, 2.3522).await.unwrap(),
        Some("Paris".to_owned())
    );
    running.shutdown().await.unwrap();
}

/// The names driverkit reserves are exactly the capabilities the runtime defines, and each
/// built-in contract's marker agrees with the kernel's spec.
#[test]
fn reserved_names_and_built_in_contracts_agree_with_the_runtime() {
    use sandloom_driverkit::RESERVED_CAPABILITIES;

    let mut runtime: Vec<&str> = sandloom_kernel::registry::capabilities()
        .iter()
        .filter(|spec| spec.package == "sandloom-kernel")
        .map(|spec| spec.name)
        .collect();
    let mut reserved: Vec<&str> = RESERVED_CAPABILITIES.iter().map(|r| r.name).collect();
    runtime.sort_unstable();
    reserved.sort_unstable();
    assert_eq!(runtime, reserved);

    agrees::<sandloom_driverkit::cache::CacheCapability>();
    agrees::<sandloom_driverkit::notifier::NotifierCapability>();
    agrees::<sandloom_driverkit::objectstore::ObjectStoreCapability>();
    agrees::<sandloom_driverkit::taskqueue::TaskQueueCapability>();
    agrees::<sandloom_driverkit::lock::LockCapability>();
    agrees::<sandloom_driverkit::secrets::SecretsCapability>();
    agrees::<sandloom_fixture_good::geocoder::GeocoderCapability>();
}

fn agrees<C: sandloom_driverkit::Contract>() {
    let spec = sandloom_kernel::registry::capabilities()
        .iter()
        .find(|spec| spec.name == C::NAME)
        .unwrap();
    assert_eq!(spec.contract_version, C::VERSION, "{}", C::NAME);
    assert_eq!(spec.features, C::FEATURES, "{}", C::NAME);
}
