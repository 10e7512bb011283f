//! SANDLOOM-B021: a selected name with two providers names both packages. An unselected
//! duplicate does not stop startup (there is no order to lose to, and nothing to choose).

mod common;

use common::{only, refused, start};
use sandloom::{ConflictKind, Problem};

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_fixture_good, sandloom_fixture_rival)
}

#[tokio::test]
async fn a_selected_name_with_two_providers_is_refused_naming_both() {
    let err = refused("[cache.default]\ndriver = \"fixture\"", linked()).await;
    let Problem::Conflict {
        name,
        packages,
        kind,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(name, "fixture");
    assert_eq!(
        packages,
        &["sandloom-fixture-good", "sandloom-fixture-rival"]
    );
    assert_eq!(kind, &ConflictKind::SelectedTwice);
    let text = err.to_string();
    assert!(
        text.contains("sandloom-fixture-good and sandloom-fixture-rival"),
        "{text}"
    );
    assert!(text.contains("there is no override"), "{text}");
}

#[tokio::test]
async fn an_unselected_duplicate_does_not_stop_startup() {
    let running = start("[lock.default]\ndriver = \"fixture\"", linked())
        .await
        .unwrap();
    running.shutdown().await.unwrap();
}
