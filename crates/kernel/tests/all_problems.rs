//! One report of every problem: a table `INFRA` cannot read (SANDLOOM-B010) hides nothing of
//! the other tables, and the problems come ordered by where they are configured.

use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{CAPABILITIES, CapabilitySpec, Stability};
use sandloom_kernel::semver::Version;
use sandloom_kernel::{InfraConfig, Kernel, Problem, StartupError};
use sandloom_sdk_infra::{CACHE, Requirement};

/// An experimental capability a package defines (every built-in one with an operation trait is
/// stable): in production without the accepted risk, it is SANDLOOM-B023.
#[distributed_slice(CAPABILITIES)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static PREVIEW: CapabilitySpec = CapabilitySpec {
    name: "preview",
    stability: Stability::Experimental,
    contract_version: Version::new(0, 1, 0),
    required_operations: &["peek"],
    features: &[],
    package: "acme-preview-contracts",
};

const TEXT: &str = "environment = \"production\"
start_timeout_ms = 0
[preview.default]
driver = \"memory\"
[cache.default]
driver = \"memory\"
capacity = 18446744073709551616
[notifier.default]
driver = \"log\"
";

const REQUIREMENTS: &[Requirement] = &[
    // Left out by its problem: not reported again as missing.
    Requirement::new(&CACHE, "default", &[], "billing"),
    // Not configured at all: a problem with no place in INFRA, after the others.
    Requirement::new(&CACHE, "sessions", &[], "billing"),
];

fn kernel() -> Kernel {
    let config = InfraConfig::from_toml_str(TEXT, "infra.toml")
        .unwrap()
        .with_overrides([(
            "SANDLOOM__TASKQUEUE__DEFAULT__DRIVER".to_owned(),
            "memory".to_owned(),
        )])
        .unwrap();
    Kernel::new(config, sandloom_kernel::link_drivers!()).require(REQUIREMENTS)
}

/// Each problem's code and where it is (`-` for none).
fn summary(err: &StartupError) -> Vec<(&'static str, String)> {
    err.problems()
        .iter()
        .map(|problem| {
            let at = match problem {
                Problem::Config { location, .. }
                | Problem::NoDriver { location, .. }
                | Problem::Experimental { location, .. } => location.to_string(),
                _ => "-".to_owned(),
            };
            (problem.code(), at)
        })
        .collect()
}

fn expected() -> Vec<(&'static str, String)> {
    [
        ("SANDLOOM-B010", "infra.toml:2:1"),
        ("SANDLOOM-B023", "infra.toml:3:2"),
        ("SANDLOOM-B020", "infra.toml:4:1"),
        ("SANDLOOM-B010", "infra.toml:7:12"),
        ("SANDLOOM-B020", "infra.toml:9:1"),
        (
            "SANDLOOM-B020",
            "environment variable SANDLOOM__TASKQUEUE__DEFAULT__DRIVER",
        ),
        ("SANDLOOM-B020", "-"),
    ]
    .map(|(code, at)| (code, at.to_owned()))
    .to_vec()
}

#[test]
fn check_reports_every_problem_of_every_table_ordered_by_location() {
    let err = kernel().check().unwrap_err();
    assert_eq!(summary(&err), expected(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("module `billing` requires `cache.sessions`"),
        "{text}"
    );
    assert!(
        !text.contains("requires `cache.default`"),
        "a table left out by its own problem is not reported missing: {text}"
    );
}

#[test]
fn a_dry_run_says_what_it_found_not_that_startup_was_refused() {
    let text = kernel().check().unwrap_err().to_string();
    assert!(
        text.starts_with("Sandloom check (a dry run; nothing was started): 7 problems found."),
        "{text}"
    );
    assert!(!text.contains("refused"), "{text}");
}

#[tokio::test]
async fn start_reports_the_same_problems_in_the_same_order() {
    let err = kernel().start().await.unwrap_err();
    assert_eq!(summary(&err), expected(), "{err}");
    assert!(
        err.to_string()
            .starts_with("Sandloom refused to start: 7 problems found."),
        "{err}"
    );
}
