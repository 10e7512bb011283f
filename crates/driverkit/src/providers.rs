//! One provider trait per built-in capability: the operation trait, plus [`Driver`], plus a
//! required contract version.

macro_rules! provider_module {
    (
        $(#[$doc:meta])*
        $module:ident, $ops:ident, $provider:ident, $version:literal
    ) => {
        $(#[$doc])*
        pub mod $module {
            pub use sandloom_sdk_infra::$module::*;

            use crate::{Driver, Version};

            #[doc = concat!(
                "A driver of the `", stringify!($module), "` capability: [`", stringify!($ops),
                "`] plus [`Driver`] plus the contract version it was written against.\n\n",
                "`CONTRACT_VERSION` has no default: a provider without one does not compile. ",
                "The current contract is ", $version, "; a driver targeting another major is ",
                "refused at startup with SANDLOOM-B022.\n\n",
                "```\n",
                "use sandloom_driverkit::{", stringify!($module), "::", stringify!($provider), ", Version};\n",
                "fn contract<P: ", stringify!($provider), ">() -> Version { P::CONTRACT_VERSION }\n",
                "```"
            )]
            pub trait $provider: $ops + Driver {
                /// The contract version this driver implements.
                const CONTRACT_VERSION: Version;
            }
        }
    };
}

provider_module!(
    /// The `cache` contract for driver authors.
    cache, Cache, CacheProvider, "1.0.0"
);
provider_module!(
    /// The `notifier` contract for driver authors.
    notifier, Notifier, NotifierProvider, "1.0.0"
);
provider_module!(
    /// The `objectstore` contract for driver authors.
    objectstore, ObjectStore, ObjectStoreProvider, "1.0.0"
);
provider_module!(
    /// The `taskqueue` contract for driver authors.
    taskqueue, TaskQueue, TaskQueueProvider, "1.0.0"
);
provider_module!(
    /// The experimental `lock` contract for driver authors.
    lock, Lock, LockProvider, "0.1.0"
);
