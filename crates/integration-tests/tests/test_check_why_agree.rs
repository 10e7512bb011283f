//! `check` and `why` agree, instance by instance, on every `INFRA` of the repository: the
//! `examples/*.toml` files, the fuzz corpus, every INFRA text written inline in the
//! integration tests, and a few cases written here (an unreadable `accepted_risks` among them).
//!
//! They agree when, for each instance, `why` selects a driver exactly when `check` reports no
//! problem about the instance, and the codes of the reasons `why` gives against the drivers of
//! the configured name are the codes `check` reports about the instance.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sandloom::conditions::{ConditionReport, WhyNot};
use sandloom::sdk::{CACHE, cache, requires};
use sandloom::{InfraConfig, Kernel, LinkedDrivers, Problem};

// An instance a module requires, as an application's modules declare them: the requirement
// rules (B020 for a missing instance, B022 for a missing feature) are judged too.
requires!(CACHE, "sessions", features = [cache::TTL]);

fn linked() -> LinkedDrivers {
    // Every driver crate of the integration tests but the impostor (which claims the
    // built-in names, so that every instance of `cache.memory` would be a conflict): two
    // providers of `cache.fixture`, the faulty drivers, `lock.fixture`, an experimental
    // third-party capability (`fulltext`) and its driver, and the example console notifier.
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_fixture_good,
        sandloom_fixture_rival,
        sandloom_fixture_faulty,
        sandloom_example_driver_console,
        sandloom_example_fulltext_contracts,
        sandloom_example_fulltext_memory
    )
}

/// Cases written here, each for a rule whose two judgements could drift.
const INLINE: &[(&str, &str)] = &[
    (
        // `accepted_risks` is not a list, so it cannot be read (SANDLOOM-B010): whether the
        // risk is accepted is unknown, and no SANDLOOM-B023 is added on top.
        "unreadable accepted_risks",
        "environment = \"production\"\naccepted_risks = \"experimental_capability\"\n[fulltext.default]\ndriver = \"memory\"\n",
    ),
    (
        "experimental in production",
        "environment = \"production\"\n[fulltext.default]\ndriver = \"memory\"\n",
    ),
    (
        "experimental accepted",
        "environment = \"production\"\naccepted_risks = [\"experimental_capability\"]\n[fulltext.default]\ndriver = \"memory\"\n",
    ),
    (
        "lock, stable, in production",
        "environment = \"production\"\n[lock.default]\ndriver = \"fixture\"\n",
    ),
    (
        "faulty drivers",
        "[cache.a]\ndriver = \"features-panic\"\n[cache.b]\ndriver = \"lenient-options\"\n[cache.c]\ndriver = \"undeclared-feature\"\n[cache.d]\ndriver = \"future-major\"\n[cache.e]\ndriver = \"build-panic\"\n[cache.f]\ndriver = \"fixture\"\n[cache.g]\ndriver = \"nope\"\n",
    ),
    (
        "requirements",
        "[cache.sessions]\ndriver = \"memory\"\n[cache.other]\ndriver = \"memory\"\nttl = 5\n",
    ),
    (
        "required instance missing",
        "[cache.default]\ndriver = \"memory\"\n",
    ),
    (
        "required instance, driver without the feature",
        "[cache.sessions]\ndriver = \"fixture\"\n",
    ),
    (
        "left out instance",
        "[cache.sessions]\ndriver = 3\n[notifier.default]\ndriver = \"console\"\n",
    ),
    (
        "unknown capability and a third-party one",
        "[cach.default]\ndriver = \"memory\"\n[fulltext.default]\ndriver = \"memory\"\n",
    ),
];

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect();
    found.sort();
    found
}

/// The string literals of a Rust source that look like INFRA (they select a driver), with
/// their escapes undone: plain `"…"` literals and raw `r#"…"#` ones. Literals with `format!`
/// holes parse as something else or not at all; those that do not parse are left out.
fn infra_literals(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = source.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"r#\"") {
            let start = at + 3;
            let Some(len) = source[start..].find("\"#") else {
                break;
            };
            found.push(source[start..start + len].to_owned());
            at = start + len + 2;
        } else if bytes[at] == b'"' && (at == 0 || bytes[at - 1] != b'\'') {
            let mut text = String::new();
            let mut chars = source[at + 1..].char_indices();
            let mut end = source.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        end = at + 1 + i + 1;
                        break;
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => text.push('\n'),
                        Some((_, 't')) => text.push('\t'),
                        Some((_, '\n')) => {
                            // A line continuation: the next line's leading spaces go too.
                            while let Some((_, c)) = chars.clone().next() {
                                if c == ' ' {
                                    chars.next();
                                } else {
                                    break;
                                }
                            }
                        }
                        Some((_, other)) => text.push(other),
                        None => {}
                    },
                    other => text.push(other),
                }
            }
            found.push(text);
            at = end;
        } else {
            at += 1;
        }
    }
    found.retain(|text| text.contains("driver") && text.contains('['));
    found
}

/// Every INFRA of the repository, named.
fn fixtures() -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = Vec::new();
    for dir in ["examples", "fuzz/corpus/infra_parse"] {
        for path in files(&root().join(dir), "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            all.push((path.display().to_string(), text));
        }
    }
    // This file's own cases are in `INLINE`.
    for path in files(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests"),
        "rs",
    )
    .into_iter()
    .filter(|path| !path.ends_with(file!().rsplit('/').next().unwrap()))
    {
        let source = std::fs::read_to_string(&path).unwrap();
        for (n, text) in infra_literals(&source).into_iter().enumerate() {
            all.push((format!("{} literal {n}", path.display()), text));
        }
    }
    all.extend(
        INLINE
            .iter()
            .map(|&(name, text)| (name.to_owned(), text.to_owned())),
    );
    all
}

/// Whether `problem` is about `capability.instance` of `config`.
fn about(problem: &Problem, config: &InfraConfig, capability: &str, instance: &str) -> bool {
    let configured = config.instance(capability, instance);
    let driver = configured.map(|i| i.driver.as_str());
    match problem {
        // The capability of the instance's table is unknown, say.
        Problem::Config { location, .. } => configured
            .is_some_and(|i| &i.location == location || &i.capability_location == location),
        Problem::NoDriver {
            capability: c,
            instance: i,
            ..
        }
        | Problem::NoInstance {
            capability: c,
            instance: i,
            ..
        }
        | Problem::Unusable {
            capability: c,
            instance: i,
            ..
        }
        | Problem::Experimental {
            capability: c,
            instance: i,
            ..
        } => c == capability && i == instance,
        Problem::Conflict {
            capability: c,
            name,
            ..
        } => c == capability && Some(name.as_str()) == driver,
        _ => false,
    }
}

/// Where `check` and `why` disagree about one instance of `config`, if they do.
fn disagreement(config: &InfraConfig, capability: &str, instance: &str) -> Option<String> {
    let checked = Kernel::new(config.clone(), linked()).check();
    let problems: &[Problem] = checked.as_ref().err().map_or(&[], |err| err.problems());
    let driver = config
        .instance(capability, instance)
        .map(|i| i.driver.as_str());
    let about_it: Vec<&Problem> = problems
        .iter()
        .filter(|p| about(p, config, capability, instance))
        .collect();
    let check_codes: BTreeSet<&str> = about_it.iter().map(|p| p.code()).collect();

    let report = ConditionReport::evaluate(config, &linked(), capability, instance);
    let of_name: Vec<_> = report
        .candidates
        .iter()
        .filter(|c| Some(c.driver) == driver)
        .collect();
    let why_codes: BTreeSet<&str> = of_name
        .iter()
        .flat_map(|c| c.reasons.iter())
        .filter(|r| !matches!(r, WhyNot::OtherName { .. }))
        .filter_map(WhyNot::code)
        .collect();
    let selected = report.selected().is_some();

    let codes_differ = if of_name.len() > 1 {
        // Several packages register the name: that conflict is all `check` reports about it
        // (it does not tell which package's refusals matter), and every one is refused for it.
        !check_codes.contains("SANDLOOM-B021")
            || !of_name
                .iter()
                .all(|c| c.reasons.iter().any(|r| r.code() == Some("SANDLOOM-B021")))
    } else {
        driver.is_some() && !why_codes.is_subset(&check_codes)
    };
    let selection_differs = driver.is_some() && selected != about_it.is_empty();
    (codes_differ || selection_differs).then(|| {
        format!(
            "`{capability}.{instance}`: check reports {check_codes:?} about it ({} problem(s) in all), why gives reasons {why_codes:?} and {}\n--- why ---\n{report}",
            problems.len(),
            if selected { "selects a driver" } else { "selects none" },
        )
    })
}

#[test]
fn check_and_why_agree_on_every_infra_of_the_repository() {
    let fixtures = fixtures();
    // The corpus is found, not listed: a search that found nothing would pass vacuously.
    assert!(
        fixtures.len() > 40,
        "only {} INFRA fixtures found",
        fixtures.len()
    );
    let mut disagreements = Vec::new();
    let mut instances = 0;
    for (name, text) in &fixtures {
        let Ok(config) = InfraConfig::from_toml_str(text, "infra.toml") else {
            continue; // not INFRA at all: neither command gets as far as an instance
        };
        let mut targets: BTreeSet<(String, String)> = config
            .instances()
            .map(|i| (i.capability.clone(), i.instance.clone()))
            .collect();
        targets.insert(("cache".to_owned(), "sessions".to_owned()));
        for (capability, instance) in &targets {
            instances += 1;
            if let Some(found) = disagreement(&config, capability, instance) {
                disagreements.push(format!("{name}: {found}"));
            }
        }
    }
    assert!(instances > 60, "only {instances} instances judged");
    assert!(
        disagreements.is_empty(),
        "check and why disagree:\n\n{}",
        disagreements.join("\n\n")
    );
}

#[test]
fn the_unreadable_accepted_risks_case_is_judged() {
    // The case the agreement test exists for: it must be among the fixtures, and parse.
    let (_, text) = INLINE
        .iter()
        .find(|(name, _)| *name == "unreadable accepted_risks")
        .unwrap();
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    assert!(config.instance("fulltext", "default").is_some());
    let err = Kernel::new(config, linked()).check().unwrap_err();
    // B010 for `accepted_risks`, B020 for the `cache.sessions` this test's module requires.
    assert_eq!(err.codes(), ["SANDLOOM-B010", "SANDLOOM-B020"], "{err}");
}
