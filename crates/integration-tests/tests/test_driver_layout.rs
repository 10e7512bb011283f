//! Every driver crate in `crates/drivers` has the same shape, so the next one is found where the
//! last one was: `lib.rs` (crate docs, registration), `options.rs`, `provider.rs`, `errors.rs`,
//! `address.rs` where the driver has a connection target, test helpers in `tests/support/`, a
//! `build.rs` (if any) that reads its `SANDLOOM_TEST_*` variable through `sandloom-server-tests`, and a
//! `README.md` with the same sections in the same order.

use std::fs;
use std::path::Path;

/// Every driver crate, and whether it connects to a server named by its options (and so keeps
/// that handling in `address.rs`). A new driver crate must be added here, with that decision.
const DRIVERS: &[(&str, bool)] = &[
    ("amqp", true),
    ("postgres", true),
    ("redis", true),
    ("s3", true),
    ("smtp", true),
    ("vault", true),
    ("webhook", true),
];

/// The files every driver crate has in `src/`.
const SOURCES: &[&str] = &["lib.rs", "options.rs", "provider.rs", "errors.rs"];

/// The `##` sections of every driver README, in this order.
const README_SECTIONS: &[&str] = &[
    "Features",
    "Options",
    "Behaviour and guarantees",
    "Error mapping",
    "How to run its tests against a server",
];

/// What `build.rs` must include instead of reading the variables itself.
const SHARED_BUILD: &str = "sandloom_server_tests::server_tests(";

/// Everything wrong with the driver crate in `dir`, one line each.
fn problems_of(dir: &Path, has_address: bool) -> Vec<String> {
    let mut problems = Vec::new();
    for file in SOURCES {
        if !dir.join("src").join(file).is_file() {
            problems.push(format!("src/{file} is missing"));
        }
    }
    match (has_address, dir.join("src/address.rs").is_file()) {
        (true, false) => problems.push("src/address.rs is missing".to_owned()),
        (false, true) => problems.push(
            "src/address.rs exists but the driver is declared without a connection target"
                .to_owned(),
        ),
        _ => {}
    }
    if dir.join("tests").is_dir() {
        if !dir.join("tests/support").is_dir() {
            problems.push("tests/support/ is missing".to_owned());
        }
        for stray in ["tests/common", "tests/helpers", "tests/util"] {
            if dir.join(stray).exists() {
                problems.push(format!("{stray} should be tests/support"));
            }
        }
    }
    if let Ok(build) = fs::read_to_string(dir.join("build.rs"))
        && !build.contains(SHARED_BUILD)
    {
        problems.push(format!("build.rs does not use {SHARED_BUILD}"));
    }
    match fs::read_to_string(dir.join("README.md")) {
        Err(_) => problems.push("README.md is missing".to_owned()),
        Ok(readme) => problems.extend(readme_problems(&readme)),
    }
    problems
}

/// The sections of `readme` that are missing or out of order.
fn readme_problems(readme: &str) -> Vec<String> {
    let headings: Vec<&str> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(str::trim)
        .collect();
    let mut problems = Vec::new();
    let mut last = None;
    for section in README_SECTIONS {
        match headings.iter().position(|heading| heading == section) {
            None => problems.push(format!("README.md lacks the section `## {section}`")),
            Some(at) if last.is_some_and(|last| at < last) => {
                problems.push(format!("README.md has `## {section}` out of order"));
            }
            Some(at) => last = Some(at),
        }
    }
    problems
}

#[test]
fn every_driver_crate_has_the_common_layout() {
    let drivers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../drivers");
    let mut problems = Vec::new();
    let mut found: Vec<String> = fs::read_dir(&drivers)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let declared: Vec<&str> = DRIVERS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        found, declared,
        "the driver crates and the DRIVERS list of this test differ: declare each crate once, \
         with whether it has a connection target"
    );
    for (name, has_address) in DRIVERS {
        for problem in problems_of(&drivers.join(name), *has_address) {
            problems.push(format!("crates/drivers/{name}: {problem}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_finds_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("tests/common")).unwrap();
    for file in ["lib.rs", "options.rs", "errors.rs"] {
        fs::write(root.join("src").join(file), "").unwrap();
    }
    fs::write(root.join("build.rs"), "fn main() {}").unwrap();
    fs::write(
        root.join("README.md"),
        "# x\n## Features\n## Error mapping\n## Options\n",
    )
    .unwrap();
    let problems = problems_of(root, true).join("\n");
    for expected in [
        "src/provider.rs is missing",
        "src/address.rs is missing",
        "tests/support/ is missing",
        "tests/common should be tests/support",
        "build.rs does not use",
        "lacks the section `## Behaviour and guarantees`",
        "lacks the section `## How to run its tests against a server`",
        "`## Error mapping` out of order",
    ] {
        assert!(
            problems.contains(expected),
            "{expected:?} not in:\n{problems}"
        );
    }
    assert!(!problems.contains("src/lib.rs"), "{problems}");

    fs::remove_file(root.join("README.md")).unwrap();
    fs::write(root.join("src/address.rs"), "").unwrap();
    let problems = problems_of(root, false).join("\n");
    assert!(problems.contains("README.md is missing"), "{problems}");
    assert!(
        problems.contains("declared without a connection target"),
        "{problems}"
    );
}

/// The built-in drivers follow the same shape where it applies: a driver with options keeps them
/// in `<driver>/options.rs` and its implementation in `<driver>/provider.rs`, with `<driver>.rs`
/// holding the docs and re-exports. (No built-in driver has a backend, so no `errors.rs` or
/// `address.rs`.)
fn embedded_problems(src: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if path.join("options.rs").is_file() && !path.join("provider.rs").is_file() {
                problems.push(format!("src/{name}/provider.rs is missing"));
            }
            continue;
        }
        let Some(module) = name.strip_suffix(".rs") else {
            continue;
        };
        let text = fs::read_to_string(&path).unwrap();
        // An options type of its own (not `NoOptions`, nor a contract's `ListOptions` in use).
        let defines_options = text.lines().any(|line| {
            line.trim_start()
                .strip_prefix("pub struct ")
                .is_some_and(|rest| {
                    rest.split([' ', '{', '<'])
                        .next()
                        .unwrap()
                        .ends_with("Options")
                })
        });
        if defines_options {
            problems.push(format!(
                "src/{name} defines its options itself: move them to src/{module}/options.rs \
                 and the driver to src/{module}/provider.rs"
            ));
        }
    }
    problems.sort();
    problems
}

#[test]
fn every_built_in_driver_with_options_has_the_common_layout() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../embedded/src");
    let problems = embedded_problems(&src);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for module in [
        "cache_memory",
        "notifier_log",
        "notifier_memory",
        "objectstore_fs",
        "secrets_env",
        "secrets_file",
        "secrets_memory",
        "taskqueue_memory",
    ] {
        assert!(src.join(module).join("options.rs").is_file(), "{module}");
    }
}

#[test]
fn the_built_in_check_finds_options_outside_options_rs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::write(src.join("cache_new.rs"), "pub struct NewOptions {}\n").unwrap();
    fs::create_dir_all(src.join("queue_new")).unwrap();
    fs::write(src.join("queue_new/options.rs"), "").unwrap();
    assert_eq!(
        embedded_problems(src),
        [
            "src/cache_new.rs defines its options itself: move them to src/cache_new/options.rs \
             and the driver to src/cache_new/provider.rs",
            "src/queue_new/provider.rs is missing",
        ]
    );
}
