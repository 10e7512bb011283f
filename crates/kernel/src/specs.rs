//! The built-in capability specs.

use linkme::distributed_slice;
use sandloom_sdk_infra::{cache, lock, notifier, objectstore, taskqueue};
use semver::Version;

use crate::registry::{CAPABILITIES, CapabilitySpec, Stability};

const PACKAGE: &str = env!("CARGO_PKG_NAME");

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
            package: PACKAGE,
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
// Defined, not public: no operation trait yet. Each becomes public with its first driver and kit.
builtin_spec!(
    GRAPH_STORE,
    "graph_store",
    Experimental,
    (0, 1),
    &["add_node", "add_edge", "neighbours"],
    &[]
);
builtin_spec!(
    WORKFLOW,
    "workflow",
    Experimental,
    (0, 1),
    &["start", "signal", "status"],
    &[]
);
builtin_spec!(
    SEARCH,
    "search",
    Experimental,
    (0, 1),
    &["index", "remove", "query"],
    &[]
);
builtin_spec!(SECRETS, "secrets", Experimental, (0, 1), &["get"], &[]);
