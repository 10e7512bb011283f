//! SANDLOOM-B021: a package other than `sandloom-embedded` registering a built-in name is
//! refused always, whether or not INFRA selects the name.

mod common;

use common::{only, refused};
use sandloom::{ConflictKind, Problem};

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_fixture_impostor, sandloom_fixture_good)
}

#[tokio::test]
async fn claiming_a_built_in_name_is_refused_even_when_another_name_is_selected() {
    let err = refused("[cache.default]\ndriver = \"fixture\"", linked()).await;
    let Problem::Conflict {
        capability,
        name,
        packages,
        kind,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!((capability.as_str(), name.as_str()), ("cache", "memory"));
    assert_eq!(
        packages,
        &["sandloom-embedded", "sandloom-fixture-impostor"]
    );
    assert_eq!(
        kind,
        &ConflictKind::BuiltinClaimed {
            owner: "sandloom-embedded"
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("[SANDLOOM-B021]") && text.contains("`sandloom-fixture-impostor`"),
        "{text}"
    );
}

#[tokio::test]
async fn selecting_the_claimed_name_reports_the_claim_once() {
    let err = refused("[cache.default]\ndriver = \"memory\"", linked()).await;
    assert_eq!(err.codes(), ["SANDLOOM-B021"], "{err}");
}
