//! Requirements a module declares with `requires!` are linked into the binary and checked at
//! startup without the application listing them; a passing startup cannot fail on first use.

mod common;

use common::{only, start};
use sandloom::Problem;
use sandloom::sdk::{CACHE, cache, requires};

// This test binary plays the module: package `sandloom` needs `cache.sessions` with ttl.
requires!(CACHE, "sessions", features = [cache::TTL]);

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_fixture_good)
}

#[test]
fn linked_requirements_are_visible() {
    let found = sandloom::sdk::linked_requirements().iter().any(|r| {
        r.capability() == "cache"
            && r.instance() == "sessions"
            && r.module() == "sandloom-integration-tests"
    });
    assert!(found, "{:?}", sandloom::sdk::linked_requirements());
}

#[tokio::test]
async fn a_linked_requirement_is_checked_without_being_passed() {
    let err = start("[cache.default]\ndriver = \"fixture\"", linked())
        .await
        .unwrap_err();
    let Problem::NoInstance {
        instance, module, ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(
        (instance.as_str(), *module),
        ("sessions", "sandloom-integration-tests")
    );

    let err = start("[cache.sessions]\ndriver = \"fixture\"", linked())
        .await
        .unwrap_err();
    assert!(matches!(only(&err), Problem::Unusable { .. }), "{err}");
    assert!(err.to_string().contains("requires feature `ttl`"), "{err}");
}

#[tokio::test]
async fn a_met_requirement_cannot_fail_on_first_use() {
    let running = start(
        "[cache.sessions]\ndriver = \"fixture\"\nttl = true",
        linked(),
    )
    .await
    .unwrap();
    let sessions = running.infra().capability(&CACHE, "sessions");
    assert!(sessions.is_ok());
    running.shutdown().await.unwrap();
}
