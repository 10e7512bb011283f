//! Names the runtime defines. `define_capability!` refuses them at compile time; these are the
//! kernel's answers for what reaches it some other way: a hand-made spec that reuses a reserved
//! name (B021, telling the other package to rename, since depending on "only one" is impossible
//! when one of them is the runtime), and an `INFRA` table for a capability that has no operation
//! trait yet (B020, saying no driver can serve it rather than naming crates to add).

use sandloom_kernel::__private::linkme::distributed_slice;
use sandloom_kernel::registry::{CAPABILITIES, CapabilitySpec, Stability};
use sandloom_kernel::semver::Version;
use sandloom_kernel::{InfraConfig, Kernel, codes, link_drivers};

#[distributed_slice(CAPABILITIES)]
#[allow(unsafe_code)] // linkme places the element with #[link_section]
static IMPOSTOR_SEARCH: CapabilitySpec = CapabilitySpec {
    name: "search",
    stability: Stability::Experimental,
    contract_version: Version::new(0, 1, 0),
    required_operations: &["query"],
    features: &[],
    package: "acme-search-contracts",
};

fn problems_of(toml: &str) -> Vec<(String, String, String)> {
    let config = InfraConfig::from_toml_str(toml, "infra.toml").unwrap();
    let err = Kernel::new(config, link_drivers!()).check().unwrap_err();
    err.problems()
        .iter()
        .map(|p| (p.code().to_owned(), p.to_string(), p.action()))
        .collect()
}

#[test]
fn a_package_that_reuses_a_reserved_name_is_told_to_rename_it() {
    let problems = problems_of("[search.default]\ndriver = \"elastic\"\n");
    let (code, text, action) = problems
        .iter()
        .find(|(code, ..)| code == codes::CONFLICT)
        .unwrap_or_else(|| panic!("no B021 in {problems:#?}"));
    assert_eq!(code, codes::CONFLICT);
    assert!(text.contains("acme-search-contracts"), "{text}");
    assert!(
        action.contains("`search` is a name the Sandloom runtime defines and reserves"),
        "{action}"
    );
    assert!(
        action.contains("rename the capability that `acme-search-contracts` defines"),
        "{action}"
    );
    assert!(!action.contains("depend on only one"), "{action}");
}

#[test]
fn a_capability_without_an_operation_trait_says_no_driver_can_serve_it() {
    let problems = problems_of("[workflow.default]\ndriver = \"temporal\"\n");
    let (_, text, action) = problems
        .iter()
        .find(|(code, text, _)| code == codes::NO_DRIVER && text.contains("workflow.temporal"))
        .unwrap_or_else(|| panic!("no B020 for workflow.temporal in {problems:#?}"));
    assert_eq!(
        action,
        "`workflow` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it and INFRA cannot use it; remove `[workflow.default]` from INFRA (it becomes usable when a Sandloom release publishes its operation trait and conformance kit)"
    );
    // No crate can help, so none is named as one that may.
    assert!(!text.contains("may provide it"), "{text}");
}
