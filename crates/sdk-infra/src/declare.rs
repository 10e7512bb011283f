//! Not public API: the one reader of a capability's declaration.
//!
//! A capability is declared once: its name, stability, contract version, features and the
//! signature of each operation (`async fn name(&self, arg: Type, …) -> Result;`, optionally
//! preceded by `#[feature = "f"]` — the whole operation is optional — or by one or more
//! `#[feature = "f", when = condition, operation = "what"]` — a required operation whose use with
//! some arguments is optional, such as `enqueue` with a delay — and, first of all, optionally by
//! `#[waits = "what a cut means"]`: the operation waits for something to happen (a long poll), so
//! a drain may cut it while it waits). Everything else is generated
//! from that one text by the macro each reader names as its callback: the operation trait here,
//! the kernel's spec, driverkit's provider trait, marker and gate, and a third-party
//! capability's whole contract (`define_capability!`).
//!
//! Why a callback rather than a shared type: the readers are macros in three crates, and this
//! crate may depend on none of them; handing the parsed declaration to a macro the reader names
//! keeps the dependencies pointing down (sdk-infra ← kernel ← driverkit).
//!
//! [`__parse_operations!`](crate::__parse_operations) reads the grammar once and calls the
//! callback with one normalized form:
//!
//! ```text
//! callback! { [context…] {
//!     name: "cache", stability: Stable, version: (1, 0, 0), features: ["ttl", …],
//!     required: ["get", …],                       // as `stringify!` expressions
//!     trait: [#[attributes]…] pub Cache [Send + Sync],
//!     operations: [{
//!         docs: [#[doc = "…"]…], method: get, args: [key: &str], ret: InfraResult<…>,
//!         default: ;,                              // or the body that answers Unsupported
//!         checks: [("ttl", condition, "what")…],   // refuse when undeclared and condition holds
//!         gate: direct,                            // or `checked`
//!         waits: ["what a cut means"],             // or `[]`: never cut while it waits
//!     }…],
//! } }
//! ```

// The grammar, once. Munches one operation at a time into the normalized form above.
#[doc(hidden)]
#[macro_export]
macro_rules! __parse_operations {
    // A trait without bounds gets `Send + Sync`, which every operation trait needs (it is held as
    // `Arc<dyn Trait>` across tasks); a declaration that writes them keeps its own spans, so a
    // non-`Send` driver's error points at the declaration.
    (
        callback: $callback:tt, context: $context:tt,
        name: $name:literal,
        stability: $stability:ident,
        version: $version:tt,
        features: [$($feature:literal),* $(,)?],
        trait: { $(#[$attr:meta])* $vis:vis trait $ops:ident { $($methods:tt)* } } $(,)?
    ) => {
        $crate::__parse_operations! {
            @munch $callback $context
            [$name, $stability, $version, [$($feature),*], [$(#[$attr])*] $vis $ops
                [::core::marker::Send + ::core::marker::Sync]]
            [] []
            $($methods)*
        }
    };
    (
        callback: [$($callback:tt)*], context: [$($context:tt)*],
        name: $name:literal,
        stability: $stability:ident,
        version: ($major:literal, $minor:literal, $patch:literal),
        features: [$($feature:literal),* $(,)?],
        trait: {
            $(#[$attr:meta])* $vis:vis trait $ops:ident: $bound:ident $(+ $bounds:ident)* {
                $($methods:tt)*
            }
        } $(,)?
    ) => {
        $crate::__parse_operations! {
            @munch [$($callback)*] [$($context)*]
            [$name, $stability, ($major, $minor, $patch), [$($feature),*], [$(#[$attr])*] $vis $ops [$bound $(+ $bounds)*]]
            [] []
            $($methods)*
        }
    };
    (@munch $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]) => {
        $crate::__parse_operations!(@emit $callback $context $header [$($operations)*] [$($required,)*]);
    };
    // An optional operation: the trait's default answers `Unsupported`.
    (@munch $callback:tt $context:tt [$name:literal, $($header:tt)*] [$($operations:tt)*] [$($required:expr,)*]
        $(#[doc = $doc:literal])*
        $(#[waits = $cut:literal])?
        #[feature = $feature:literal]
        async fn $method:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @munch $callback $context [$name, $($header)*] [$($operations)* {
            docs: [
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = ::core::concat!(
                    "Optional: feature `", $feature, "`. Without it, the answer is `Unsupported`."
                )]
                $(
                    #[doc = ""]
                    #[doc = ::core::concat!(
                        "Waits, and a drain cuts the wait: a call still waiting when its instance ",
                        "begins to drain (at shutdown) answers `Stopped` at once. ", $cut
                    )]
                )?
            ],
            method: $method,
            args: [$($arg: $ty),*],
            ret: $ret,
            default: {
                let _ = ($($arg,)*);
                ::core::result::Result::Err($crate::InfraError::unsupported(
                    $name,
                    ::core::stringify!($method),
                    $feature,
                ))
            },
            checks: [($feature, true, ::core::stringify!($method))],
            gate: checked,
            waits: [$($cut)?],
        }] [$($required,)*] $($rest)* }
    };
    // A required operation, optional with some arguments.
    (@munch $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]
        $(#[doc = $doc:literal])*
        $(#[waits = $cut:literal])?
        $(#[feature = $feature:literal, when = $when:expr, operation = $what:literal])+
        async fn $method:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @munch $callback $context $header [$($operations)* {
            docs: [
                $(#[doc = $doc])*
                #[doc = ""]
                $(#[doc = ::core::concat!(
                    "Required; ", $what, " is optional: feature `", $feature, "`."
                )])+
                $(
                    #[doc = ""]
                    #[doc = ::core::concat!(
                        "Waits, and a drain cuts the wait: a call still waiting when its instance ",
                        "begins to drain (at shutdown) answers `Stopped` at once. ", $cut
                    )]
                )?
            ],
            method: $method,
            args: [$($arg: $ty),*],
            ret: $ret,
            default: ;,
            checks: [$(($feature, $when, $what))+],
            gate: checked,
            waits: [$($cut)?],
        }] [$($required,)* ::core::stringify!($method),] $($rest)* }
    };
    // A required operation.
    (@munch $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]
        $(#[doc = $doc:literal])*
        $(#[waits = $cut:literal])?
        async fn $method:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @munch $callback $context $header [$($operations)* {
            docs: [$(#[doc = $doc])* $(
                    #[doc = ""]
                    #[doc = ::core::concat!(
                        "Waits, and a drain cuts the wait: a call still waiting when its instance ",
                        "begins to drain (at shutdown) answers `Stopped` at once. ", $cut
                    )]
                )?],
            method: $method,
            args: [$($arg: $ty),*],
            ret: $ret,
            default: ;,
            checks: [],
            gate: direct,
            waits: [$($cut)?],
        }] [$($required,)* ::core::stringify!($method),] $($rest)* }
    };
    (@emit [$($callback:tt)*] [$($context:tt)*]
        [$name:literal, $stability:ident, $version:tt, $features:tt, $attrs:tt $vis:vis $ops:ident $bounds:tt]
        [$($operations:tt)*] [$($required:expr,)*]
    ) => {
        $($callback)*! { [$($context)*] {
            name: $name,
            stability: $stability,
            version: $version,
            features: $features,
            required: [$($required),*],
            trait: $attrs $vis $ops $bounds,
            operations: [$($operations)*],
        } }
    };
}

// The operation trait of a declaration: every operation `async`, dyn-compatible through
// `async_trait`, optional ones answering `Unsupported` unless the driver overrides them.
#[doc(hidden)]
#[macro_export]
macro_rules! __operation_trait {
    ([$($context:tt)*] {
        name: $name:literal, stability: $stability:ident, version: $version:tt,
        features: $features:tt, required: $required:tt,
        trait: [$(#[$attr:meta])*] $vis:vis $ops:ident [$($bounds:tt)*],
        operations: [$({
            docs: [$(#[$doc:meta])*],
            method: $method:ident,
            args: [$($arg:ident : $ty:ty),*],
            ret: $ret:ty,
            default: $default:tt,
            checks: $checks:tt,
            gate: $gate:ident,
            waits: $waits:tt,
        })*],
    }) => {
        $(#[$attr])*
        #[$crate::async_trait]
        $vis trait $ops: $($bounds)* {
            $(
                $(#[$doc])*
                async fn $method(&self $(, $arg: $ty)*) -> $ret $default
            )*
        }
    };
}

// A built-in capability's `FEATURES` and `REQUIRED_OPERATIONS`, as modules read them.
#[doc(hidden)]
#[macro_export]
macro_rules! __capability_constants {
    ([$($context:tt)*] {
        name: $name:literal, stability: $stability:ident, version: $version:tt,
        features: [$($feature:literal),*], required: [$($required:expr),*],
        $($rest:tt)*
    }) => {
        #[doc = ::core::concat!(
            "Every optional feature a `", $name, "` driver may declare, in the contract's order."
        )]
        pub const FEATURES: &[&str] = &[$($feature),*];
        /// Every required operation: never a feature.
        pub const REQUIRED_OPERATIONS: &[&str] = &[$($required),*];
    };
}
