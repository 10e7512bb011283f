//! The built-in capability specs.

use linkme::distributed_slice;
use sandloom_sdk_infra::{cache, lock, notifier, objectstore, taskqueue};
use semver::Version;

use crate::registry::{CAPABILITIES, CapabilitySpec, Stability};

/// The kernel's package, which defines the built-in capabilities (`CapabilitySpec::package`).
pub(crate) const KERNEL_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// The capabilities the kernel defines without an operation trait yet ("defined, not public"):
/// no driver can serve them, and one selected is refused with SANDLOOM-B022. Each becomes public
/// with its operation trait, first driver and kit.
pub(crate) const WITHOUT_OPERATION_TRAIT: &[&str] =
    &[GRAPH_STORE_NAME, WORKFLOW_NAME, SEARCH_NAME, SECRETS_NAME];
const GRAPH_STORE_NAME: &str = "graph_store";
const WORKFLOW_NAME: &str = "workflow";
const SEARCH_NAME: &str = "search";
const SECRETS_NAME: &str = "secrets";

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

builtin_spec!(
    CACHE,
    cache::NAME,
    Stable,
    (1, 0),
    cache::REQUIRED_OPERATIONS,
    cache::FEATURES
);
builtin_spec!(
    NOTIFIER,
    notifier::NAME,
    Stable,
    (1, 0),
    notifier::REQUIRED_OPERATIONS,
    notifier::FEATURES
);
builtin_spec!(
    OBJECT_STORE,
    objectstore::NAME,
    Stable,
    (1, 0),
    objectstore::REQUIRED_OPERATIONS,
    objectstore::FEATURES
);
builtin_spec!(
    TASK_QUEUE,
    taskqueue::NAME,
    Stable,
    (1, 0),
    taskqueue::REQUIRED_OPERATIONS,
    taskqueue::FEATURES
);
builtin_spec!(
    LOCK,
    lock::NAME,
    Experimental,
    (0, 1),
    lock::REQUIRED_OPERATIONS,
    lock::FEATURES
);
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
builtin_spec!(SECRETS, SECRETS_NAME, Experimental, (0, 1), &["get"], &[]);
