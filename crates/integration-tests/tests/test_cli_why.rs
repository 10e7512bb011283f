//! `infra why` on what the fixture drivers break: a duplicate provider (SANDLOOM-B021), another
//! contract major, a feature a module requires, an experimental capability in production.

use sandloom::cli::{Status, execute};
use sandloom::sdk::{CACHE, cache, requires};
use serde_json::Value;

// `cache.sessions` must declare `ttl`, which the fixture drivers declare only with `ttl = true`.
requires!(CACHE, "sessions", features = [cache::TTL]);

fn linked() -> sandloom::LinkedDrivers {
    // good and rival both register `cache.fixture`; faulty registers `cache.future-major`
    // (contract 2.0.0) among others; `fulltext.memory` serves an experimental capability.
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_fixture_good,
        sandloom_fixture_rival,
        sandloom_fixture_faulty,
        sandloom_example_fulltext_memory
    )
}

/// `infra why TARGET --infra FILE` on `text`, in `format`.
fn why(target: &str, text: &str, format: &str) -> (Status, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infra.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = execute(
        linked(),
        [
            "app", "infra", "why", target, "--infra", &path, "--format", format,
        ],
        &mut out,
        &mut err,
    );
    let out = String::from_utf8(out).unwrap().replace(&path, "infra.toml");
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    (status, out)
}

fn why_json(target: &str, text: &str) -> (Status, Value) {
    let (status, out) = why(target, text, "json");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["format_version"], 1);
    assert_eq!(json["command"], "why");
    (status, json)
}

fn candidate<'a>(json: &'a Value, driver: &str, package: &str) -> &'a Value {
    json["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["driver"] == driver && c["package"] == package)
        .unwrap_or_else(|| panic!("no candidate {driver} of {package}: {json:#}"))
}

fn kinds(candidate: &Value) -> Vec<&str> {
    candidate["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect()
}

const SESSIONS: &str = "[cache.sessions]\ndriver = \"memory\"\n";

#[test]
fn a_name_with_two_providers_is_a_conflict_naming_both() {
    let text = format!("[cache.default]\ndriver = \"fixture\"\n{SESSIONS}");
    let (status, out) = why("cache.default", &text, "text");
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("why_conflict", out);

    let (_, json) = why_json("cache.default", &text);
    assert_eq!(json["configured"], "fixture");
    assert_eq!(json["selected"], Value::Null);
    for package in ["sandloom-fixture-good", "sandloom-fixture-rival"] {
        let fixture = candidate(&json, "fixture", package);
        assert_eq!(fixture["selected"], false);
        let reason = &fixture["reasons"][0];
        assert_eq!(reason["kind"], "duplicate_provider");
        assert_eq!(reason["code"], "SANDLOOM-B021");
        assert_eq!(
            reason["packages"],
            serde_json::json!(["sandloom-fixture-good", "sandloom-fixture-rival"])
        );
    }
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B021");
    assert_eq!(json["problems"][0]["location"]["line"], 2);
}

#[test]
fn another_contract_major_is_named_with_both_versions() {
    let text = format!("[cache.default]\ndriver = \"future-major\"\n{SESSIONS}");
    let (status, out) = why("cache.default", &text, "text");
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("why_major", out);

    let (_, json) = why_json("cache.default", &text);
    let future = candidate(&json, "future-major", "sandloom-fixture-faulty");
    assert_eq!(kinds(future), ["contract_major"]);
    let reason = &future["reasons"][0];
    assert_eq!(reason["code"], "SANDLOOM-B022");
    assert_eq!(reason["driver_contract"], "2.0.0");
    assert_eq!(reason["linked_contract"], "1.0.0");
    assert_eq!(reason["defined_by"], "sandloom-kernel");
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B022");
}

#[test]
fn a_feature_a_module_requires_and_the_driver_does_not_declare() {
    let text = "[cache.sessions]\ndriver = \"fixture\"\n";
    let (status, out) = why("cache.sessions", text, "text");
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("why_missing_feature", out);

    let (_, json) = why_json("cache.sessions", text);
    assert_eq!(
        json["required_by"][0]["module"],
        "sandloom-integration-tests"
    );
    assert_eq!(
        json["required_by"][0]["features"],
        serde_json::json!(["ttl"])
    );
    let good = candidate(&json, "fixture", "sandloom-fixture-good");
    assert_eq!(kinds(good), ["duplicate_provider", "missing_feature"]);
    let missing = &good["reasons"][1];
    assert_eq!(missing["code"], "SANDLOOM-B022");
    assert_eq!(missing["feature"], "ttl");
    assert_eq!(missing["module"], "sandloom-integration-tests");
    // The fixture supports `ttl` with `ttl = true`: changing options would do.
    assert_eq!(missing["with_other_options"], true);
    // The built-in `memory` declares `ttl` and would serve; it is not selected by name only.
    let memory = candidate(&json, "memory", "sandloom-embedded");
    assert_eq!(kinds(memory), ["other_name"]);
    assert!(
        json["satisfying"]
            .as_array()
            .unwrap()
            .contains(&Value::from("memory")),
        "{json:#}"
    );
}

#[test]
fn an_experimental_capability_in_production_without_the_accepted_risk() {
    let text = format!(
        "environment = \"production\"\n[fulltext.default]\ndriver = \"memory\"\n{SESSIONS}"
    );
    let (status, out) = why("fulltext.default", &text, "text");
    assert_eq!(status, Status::Problems);
    insta::assert_snapshot!("why_experimental", out);

    let (_, json) = why_json("fulltext.default", &text);
    assert_eq!(json["environment"], "production");
    assert_eq!(json["stability"], "experimental");
    let memory = candidate(&json, "memory", "sandloom-example-fulltext-memory");
    assert_eq!(kinds(memory), ["experimental_in_production"]);
    assert_eq!(memory["reasons"][0]["code"], "SANDLOOM-B023");
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B023");

    // Accepting the risk selects it.
    let accepted = text.replace(
        "environment = \"production\"\n",
        "environment = \"production\"\naccepted_risks = [\"experimental_capability\"]\n",
    );
    let (status, json) = why_json("fulltext.default", &accepted);
    assert_eq!(status, Status::Ok, "{json:#}");
    assert_eq!(json["selected"], "memory");

    // `lock` is stable: in production it needs no accepted risk.
    let lock =
        format!("environment = \"production\"\n[lock.default]\ndriver = \"fixture\"\n{SESSIONS}");
    let (status, json) = why_json("lock.default", &lock);
    assert_eq!(status, Status::Ok, "{json:#}");
    assert_eq!(
        (&json["stability"], &json["selected"]),
        (&Value::from("stable"), &Value::from("fixture"))
    );
}

#[test]
fn an_unconfigured_required_instance_lists_the_drivers_that_would_satisfy_it() {
    let (status, json) = why_json("cache.sessions", "");
    assert_eq!(status, Status::Problems);
    assert_eq!(json["configured"], Value::Null);
    let satisfying: Vec<&str> = json["satisfying"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    // Every linked cache driver that supports `ttl` and has the right contract and no rival.
    assert!(satisfying.contains(&"memory"), "{satisfying:?}");
    assert!(
        !satisfying.contains(&"fixture"),
        "two providers: {satisfying:?}"
    );
    assert!(
        !satisfying.contains(&"future-major"),
        "another major: {satisfying:?}"
    );
    assert_eq!(json["problems"][0]["code"], "SANDLOOM-B020");
}
