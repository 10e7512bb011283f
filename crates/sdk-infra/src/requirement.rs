//! What a module needs, declared statically and checked by the kernel at startup.

use crate::capability::CapabilityRef;

/// "This module needs capability `capability`, instance `instance`, with these features."
///
/// The kernel checks every requirement linked into the binary (declared with
/// [`requires!`](crate::requires)) and every requirement an application passes explicitly before
/// it starts any driver. A requirement that passes at startup therefore cannot fail on first
/// use: the instance exists and its driver declared the features.
///
/// ```
/// use sandloom_sdk_infra::{cache, Requirement, CACHE};
///
/// const SESSIONS: Requirement = Requirement::new(&CACHE, "sessions", &[cache::TTL], "billing");
/// assert_eq!(SESSIONS.capability(), "cache");
/// assert_eq!(SESSIONS.features(), &["ttl"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    capability: &'static str,
    instance: &'static str,
    features: &'static [&'static str],
    module: &'static str,
}

impl Requirement {
    /// A requirement of `module` on `instance` of the capability keyed by `capability`.
    ///
    /// ```
    /// use sandloom_sdk_infra::{Requirement, TASK_QUEUE};
    /// let r = Requirement::new(&TASK_QUEUE, "default", &[], "mailer");
    /// assert_eq!(r.module(), "mailer");
    /// ```
    pub const fn new<P: ?Sized>(
        capability: &CapabilityRef<P>,
        instance: &'static str,
        features: &'static [&'static str],
        module: &'static str,
    ) -> Self {
        Self {
            capability: capability.name(),
            instance,
            features,
            module,
        }
    }

    /// The capability name.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Requirement, NOTIFIER};
    /// assert_eq!(Requirement::new(&NOTIFIER, "default", &[], "m").capability(), "notifier");
    /// ```
    pub const fn capability(&self) -> &'static str {
        self.capability
    }

    /// The instance name.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Requirement, NOTIFIER};
    /// assert_eq!(Requirement::new(&NOTIFIER, "ops", &[], "m").instance(), "ops");
    /// ```
    pub const fn instance(&self) -> &'static str {
        self.instance
    }

    /// The features the instance's driver must declare.
    ///
    /// ```
    /// # use sandloom_sdk_infra::{cache, Requirement, CACHE};
    /// let r = Requirement::new(&CACHE, "default", &[cache::INCREMENT], "m");
    /// assert_eq!(r.features(), &["increment"]);
    /// ```
    pub const fn features(&self) -> &'static [&'static str] {
        self.features
    }

    /// The package that declared the requirement (for error messages).
    ///
    /// ```
    /// # use sandloom_sdk_infra::{Requirement, CACHE};
    /// assert_eq!(Requirement::new(&CACHE, "default", &[], "shop").module(), "shop");
    /// ```
    pub const fn module(&self) -> &'static str {
        self.module
    }
}

/// Declare, once per module, what the module needs from `INFRA`. The kernel checks it at
/// startup, for every module linked into the binary, without the application listing modules.
///
/// Forms: `requires!(CACHE)` (the `default` instance), `requires!(CACHE, "sessions")`, and
/// either with `, features = [..]`.
///
/// ```
/// use sandloom_sdk_infra::{cache, requires, CACHE, TASK_QUEUE};
///
/// requires!(CACHE, "sessions", features = [cache::TTL]);
/// requires!(TASK_QUEUE);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! requires {
    ($capability:path $(,)?) => {
        $crate::requires!($capability, $crate::DEFAULT_INSTANCE, features = []);
    };
    ($capability:path, features = [$($feature:expr),* $(,)?] $(,)?) => {
        $crate::requires!($capability, $crate::DEFAULT_INSTANCE, features = [$($feature),*]);
    };
    ($capability:path, $instance:expr $(,)?) => {
        $crate::requires!($capability, $instance, features = []);
    };
    ($capability:path, $instance:expr, features = [$($feature:expr),* $(,)?] $(,)?) => {
        const _: () = {
            // The kernel's rule for `INFRA`'s instance names (`check_instance_name`).
            if let ::core::result::Result::Err(error) = $crate::check_instance_name($instance) {
                ::core::panic!("{}", error.requires_message());
            }

            #[$crate::__private::distributed_slice($crate::__private::REQUIREMENTS)]
            #[linkme(crate = $crate::__private::linkme)]
            #[allow(unsafe_code)] // linkme places the element with #[link_section]
            static REQUIREMENT: $crate::Requirement = $crate::Requirement::new(
                &$capability,
                $instance,
                &[$($feature),*],
                ::core::env!("CARGO_PKG_NAME"),
            );
        };
    };
}
