//! The built-in capability specs.

use linkme::distributed_slice;
use semver::Version;

use crate::registry::{CAPABILITIES, CapabilitySpec, Stability};

/// The kernel's package, which defines the built-in capabilities (`CapabilitySpec::package`).
pub(crate) const KERNEL_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// The capabilities the kernel defines without an operation trait yet ("defined, not public"):
/// no driver can serve them, and one selected is refused with SANDLOOM-B022. Each becomes public
/// with its operation trait, first driver and kit.
pub(crate) const WITHOUT_OPERATION_TRAIT: &[&str] = &[GRAPH_STORE_NAME, WORKFLOW_NAME, SEARCH_NAME];
const GRAPH_STORE_NAME: &str = "graph_store";
const WORKFLOW_NAME: &str = "workflow";
const SEARCH_NAME: &str = "search";

macro_rules! builtin_spec {
    ($static:ident, $name:expr, $stability:ident, ($major:literal, $minor:literal), $required:expr, $features:expr) => {
        #[distributed_slice(CAPABILITIES)]
        #[allow(unsafe_code)] // linkme places the element with #[link_section]
        static $static: CapabilitySpec = CapabilitySpec {
            name: $name,
            stability: Stability::$stability,
            contract_version: Version::new($major, $minor, 0),
            required_operations: $required,
            features: $features,
            package: KERNEL_PACKAGE,
        };
    };
}

// The spec of a capability declared in sdk-infra, read from its one declaration (the callback
// of `sandloom_sdk_infra::__parse_operations!`): version, operations and features are never
// written again here.
macro_rules! declared_spec {
    ([$static:ident] {
        name: $name:literal, stability: $stability:ident,
        version: ($major:literal, $minor:literal, $patch:literal),
        features: [$($feature:literal),*], required: [$($required:expr),*],
        $($rest:tt)*
    }) => {
        #[distributed_slice(CAPABILITIES)]
        #[allow(unsafe_code)] // linkme places the element with #[link_section]
        static $static: CapabilitySpec = CapabilitySpec {
            name: $name,
            stability: Stability::$stability,
            contract_version: Version::new($major, $minor, $patch),
            required_operations: &[$($required),*],
            features: &[$($feature),*],
            package: KERNEL_PACKAGE,
        };
    };
}
pub(crate) use declared_spec;

sandloom_sdk_infra::__cache_contract!([crate::specs::declared_spec][CACHE]);
sandloom_sdk_infra::__notifier_contract!([crate::specs::declared_spec][NOTIFIER]);
sandloom_sdk_infra::__objectstore_contract!([crate::specs::declared_spec][OBJECT_STORE]);
sandloom_sdk_infra::__taskqueue_contract!([crate::specs::declared_spec][TASK_QUEUE]);
sandloom_sdk_infra::__lock_contract!([crate::specs::declared_spec][LOCK]);
sandloom_sdk_infra::__secrets_contract!([crate::specs::declared_spec][SECRETS]);
// Defined, not public: no operation trait yet (`WITHOUT_OPERATION_TRAIT`).
builtin_spec!(
    GRAPH_STORE,
    GRAPH_STORE_NAME,
    Experimental,
    (0, 1),
    &["add_node", "add_edge", "neighbours"],
    &[]
);
builtin_spec!(
    WORKFLOW,
    WORKFLOW_NAME,
    Experimental,
    (0, 1),
    &["start", "signal", "status"],
    &[]
);
builtin_spec!(
    SEARCH,
    SEARCH_NAME,
    Experimental,
    (0, 1),
    &["index", "remove", "query"],
    &[]
);
