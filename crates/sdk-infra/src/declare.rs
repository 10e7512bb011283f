//! Not public API: the one reader of a capability's declaration.
//!
//! A capability is declared once: its name, stability, contract version, features and the
//! signature of each operation (`async fn name(&self, arg: Type, …) -> Result;`, optionally
//! preceded by `#[feature = "f"]` — the whole operation is optional — or by one or more
//! `#[feature = "f", when = condition, operation = "what"]` — a required operation whose use with
//! some arguments is optional, such as `enqueue` with a delay — and, first of all, optionally by
//! `#[waits = "what a cut means"]`: the operation waits for something to happen (a long poll), so
//! a drain may cut it while it waits, and a reload runs it again on the new instance). An
//! operation whose arguments are bound to the instance that served an earlier call (a cursor
//! it issued) adds `rebind = path`: `#[waits = "…", rebind = path]`. Run again on *another*
//! instance, it is not rerun with those arguments, which would name a position in another
//! history (an error if that history is shorter, a silent wrong answer if it is longer); the
//! route calls `path(&dyn Trait, args…)` instead, on the handle modules hold, which answers on
//! the instance now served. Why the declaration and not the route decides: only the contract
//! knows which arguments are bound and what a valid answer without them is (for `secrets`
//! `changes`, [`rebind_changes`](crate::secrets::rebind_changes): every name, and a cursor of
//! the new instance). Everything else is generated
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
//!         waits: ["what a cut means"],             // or `[]`: never cut while it waits;
//!                                                  // `["…", path]` with `rebind = path`
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
        ops: $native:ident,
        future_bytes: $bytes:expr,
        trait: { $(#[$attr:meta])* $vis:vis trait $ops:ident { $($methods:tt)* } } $(,)?
    ) => {
        $crate::__parse_operations! {
            @munch $callback $context
            [$name, $stability, $version, [$($feature),*], [$(#[$attr])*] $vis $ops
                [::core::marker::Send + ::core::marker::Sync], $native, {$bytes}]
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
        ops: $native:ident,
        future_bytes: $bytes:expr,
        trait: {
            $(#[$attr:meta])* $vis:vis trait $ops:ident: $bound:ident $(+ $bounds:ident)* {
                $($methods:tt)*
            }
        } $(,)?
    ) => {
        $crate::__parse_operations! {
            @munch [$($callback)*] [$($context)*]
            [$name, $stability, ($major, $minor, $patch), [$($feature),*], [$(#[$attr])*] $vis $ops [$bound $(+ $bounds)*], $native, {$bytes}]
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
        $(#[waits = $cut:literal $(, rebind = $rebind:path)?])?
        #[feature = $feature:literal]
        async fn $method:ident(&self $(, $($raw:tt)*)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @op $callback $context [$name, $($header)*] [$($operations)*]
            [$($required,)*] {
                ::core::result::Result::Err($crate::InfraError::unsupported(
                    $name,
                    ::core::stringify!($method),
                    $feature,
                ))
            } [$($($raw)*)?] (&self $(, $($raw)*)?) {
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
        } {
            ret: $ret,
        } {
            checks: [($feature, true, ::core::stringify!($method))],
            gate: checked,
            waits: [$($cut $(, $rebind)?)?],
        } $($rest)* }
    };
    // A required operation, optional with some arguments.
    (@munch $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]
        $(#[doc = $doc:literal])*
        $(#[waits = $cut:literal $(, rebind = $rebind:path)?])?
        $(#[feature = $feature:literal, when = $when:expr, operation = $what:literal])+
        async fn $method:ident(&self $(, $($raw:tt)*)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @op $callback $context $header [$($operations)*]
            [$($required,)* ::core::stringify!($method),] ; [$($($raw)*)?] (&self $(, $($raw)*)?) {
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
        } {
            ret: $ret,
        } {
            checks: [$(($feature, $when, $what))+],
            gate: checked,
            waits: [$($cut $(, $rebind)?)?],
        } $($rest)* }
    };
    // A required operation.
    (@munch $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]
        $(#[doc = $doc:literal])*
        $(#[waits = $cut:literal $(, rebind = $rebind:path)?])?
        async fn $method:ident(&self $(, $($raw:tt)*)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @op $callback $context $header [$($operations)*]
            [$($required,)* ::core::stringify!($method),] ; [$($($raw)*)?] (&self $(, $($raw)*)?) {
            docs: [$(#[doc = $doc])* $(
                    #[doc = ""]
                    #[doc = ::core::concat!(
                        "Waits, and a drain cuts the wait: a call still waiting when its instance ",
                        "begins to drain (at shutdown) answers `Stopped` at once. ", $cut
                    )]
                )?],
            method: $method,
        } {
            ret: $ret,
        } {
            checks: [],
            gate: direct,
            waits: [$($cut $(, $rebind)?)?],
        } $($rest)* }
    };
    // One operation's arguments, read twice: as `name: Type` pairs, and as the tokens they were
    // written with (`raw`), which the dyn trait's readers rewrite (`__with_op_lifetime!`: every
    // elided reference gets the method's lifetime).
    // `$default` is the trait's default body (`{ … }`: an optional operation's `Unsupported`) or
    // `;` (required: no default).
    (@op $callback:tt $context:tt $header:tt [$($operations:tt)*] [$($required:expr,)*]
        $default:tt $raw:tt
        (&self $(, $arg:ident : $ty:ty)* $(,)?)
        { docs: $docs:tt, method: $method:ident, } { ret: $ret:ty, } { $($after:tt)* }
        $($rest:tt)*
    ) => {
        $crate::__parse_operations! { @munch $callback $context $header [$($operations)* {
            docs: $docs,
            method: $method,
            args: [$($arg: $ty),*],
            raw: $raw,
            ret: $ret,
            default: $default,
            $($after)*
        }] [$($required,)*] $($rest)* }
    };
    (@emit [$($callback:tt)*] [$($context:tt)*]
        [$name:literal, $stability:ident, $version:tt, $features:tt, $attrs:tt $vis:vis $ops:ident $bounds:tt,
            $native:ident, $bytes:tt]
        [$($operations:tt)*] [$($required:expr,)*]
    ) => {
        $($callback)*! { [$($context)*] {
            name: $name,
            stability: $stability,
            version: $version,
            features: $features,
            required: [$($required),*],
            trait: $attrs $vis $ops $bounds,
            native: $native,
            bytes: $bytes,
            operations: [$($operations)*],
        } }
    };
}

// `raw`, an operation's argument list as written (`key: &str, entries: &[(&str, Bytes)]`), with
// the lifetime `$lt` on every elided reference (`key: &'a str, entries: &'a [(&'a str, Bytes)]`),
// handed to `callback! { context… lt: $lt, args_a: [rewritten] }`. What the dyn traits' methods
// need: their future borrows `self` and every reference argument for `'a`. `macro_rules` cannot
// look inside a `$ty:ty`, so the tokens are read one by one: `&` gets `$lt` unless a lifetime
// follows, `&&` is two `&`, and `(…)` and `[…]` groups are entered with an explicit stack (a
// frame keeps what was written before the group and what follows it). `<` and `>` need no care:
// a comma between them is copied like any token. Invoked once per operation, in item position,
// so the recursion is as deep as one argument list, never the whole declaration.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_op_lifetime {
    ($lt:lifetime [$($raw:tt)*] => [$($callback:tt)*] { $($context:tt)* }) => {
        $crate::__with_op_lifetime! { @rw $lt [] [] [$($raw)*] => [$($callback)*] { $($context)* } }
    };
    (@rw $lt:lifetime [] [$($out:tt)*] [] => [$($callback:tt)*] { $($context:tt)* }) => {
        $($callback)*! { $($context)* lt: $lt, args_a: [$($out)*], }
    };
    (@rw $lt:lifetime [(paren [$($saved:tt)*] [$($after:tt)*]) $($stack:tt)*] [$($out:tt)*] [] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt [$($stack)*] [$($saved)* ($($out)*)] [$($after)*] => $($k)* }
    };
    (@rw $lt:lifetime [(bracket [$($saved:tt)*] [$($after:tt)*]) $($stack:tt)*] [$($out:tt)*] [] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt [$($stack)*] [$($saved)* [$($out)*]] [$($after)*] => $($k)* }
    };
    (@rw $lt:lifetime $stack:tt [$($out:tt)*] [& $l:lifetime $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt $stack [$($out)* & $l] [$($rest)*] => $($k)* }
    };
    (@rw $lt:lifetime $stack:tt [$($out:tt)*] [&& $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt $stack [$($out)*] [& & $($rest)*] => $($k)* }
    };
    (@rw $lt:lifetime $stack:tt [$($out:tt)*] [& $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt $stack [$($out)* & $lt] [$($rest)*] => $($k)* }
    };
    (@rw $lt:lifetime [$($stack:tt)*] [$($out:tt)*] [($($group:tt)*) $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! {
            @rw $lt [(paren [$($out)*] [$($rest)*]) $($stack)*] [] [$($group)*] => $($k)*
        }
    };
    (@rw $lt:lifetime [$($stack:tt)*] [$($out:tt)*] [[$($group:tt)*] $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! {
            @rw $lt [(bracket [$($out)*] [$($rest)*]) $($stack)*] [] [$($group)*] => $($k)*
        }
    };
    (@rw $lt:lifetime $stack:tt [$($out:tt)*] [$token:tt $($rest:tt)*] => $($k:tt)*) => {
        $crate::__with_op_lifetime! { @rw $lt $stack [$($out)* $token] [$($rest)*] => $($k)* }
    };
}

// The operation traits of a declaration:
// - the dyn trait modules call (`Cache`): each method returns an `OpFuture` of the capability's
//   buffer, borrowing `self` and every reference argument for `'a`; optional operations answer
//   `Unsupported` unless overridden;
// - its native twin (`CacheOps`), the same methods as `fn … -> impl Future + Send`, which a
//   driver implements with plain `async fn` (no `async_trait`), with the same defaults;
// - a blanket impl giving every implementor of the twin the dyn trait (its future inline when it
//   fits, else boxed), so a module's test fake is plain `async fn` too.
#[doc(hidden)]
#[macro_export]
macro_rules! __operation_trait {
    ([$($context:tt)*] {
        name: $name:literal, stability: $stability:ident, version: $version:tt,
        features: $features:tt, required: $required:tt,
        trait: [$(#[$attr:meta])*] $vis:vis $ops:ident [$($bounds:tt)*],
        native: $native:ident,
        bytes: $bytes:tt,
        operations: [$({
            docs: [$(#[$doc:meta])*],
            method: $method:ident,
            args: [$($arg:ident : $ty:ty),*],
            raw: $raw:tt,
            ret: $ret:ty,
            default: $default:tt,
            checks: $checks:tt,
            gate: $gate:ident,
            waits: $waits:tt,
        })*],
    }) => {
        $(#[$attr])*
        ///
        /// Called through `&dyn`: each method's future is held inline in an
        #[doc = ::core::concat!("[`OpFuture`](", ::core::stringify!($crate), "::OpFuture) of ",
            "the capability's buffer; a driver implements the native twin, [`",
            ::core::stringify!($native), "`], with plain `async fn`, and gets this trait from it.")]
        $vis trait $ops: $($bounds)* {
            $(
                $crate::__with_op_lifetime! { 'a $raw => [$crate::__operation_trait] {
                    @dyn [$(#[$doc])*] $method, $ret, $bytes, $default,
                } }
            )*
        }

        #[doc = ::core::concat!(
            "What a driver of [`", ::core::stringify!($ops), "`] implements, with plain `async fn`: ",
            "the same operations, with the same defaults, as native `async` methods (static ",
            "dispatch). Every implementor gets [`", ::core::stringify!($ops), "`], which modules ",
            "call through `&dyn`, from a blanket impl."
        )]
        $vis trait $native: $($bounds)* {
            $(
                $crate::__operation_trait! {
                    @native [$(#[$doc])*] $method, [$($arg: $ty),*], $ret, $default,
                }
            )*
        }

        impl<T: $native> $ops for T {
            $(
                $crate::__with_op_lifetime! { 'a $raw => [$crate::__operation_trait] {
                    @blanket $native, $method, $ret, $bytes,
                } }
            )*
        }
    };
    (@dyn [$(#[$doc:meta])*] $method:ident, $ret:ty, $bytes:tt, ;,
        lt: $lt:lifetime, args_a: [$($arg:ident : $ty:ty),* $(,)?],
    ) => {
        $(#[$doc])*
        fn $method<$lt>(&$lt self $(, $arg: $ty)*) -> $crate::OpFuture<$lt, $ret, $bytes>;
    };
    (@dyn [$(#[$doc:meta])*] $method:ident, $ret:ty, $bytes:tt, $default:block,
        lt: $lt:lifetime, args_a: [$($arg:ident : $ty:ty),* $(,)?],
    ) => {
        $(#[$doc])*
        fn $method<$lt>(&$lt self $(, $arg: $ty)*) -> $crate::OpFuture<$lt, $ret, $bytes> {
            $crate::OpFuture::new(async move {
                let _ = ($($arg,)*);
                $default
            })
        }
    };
    (@native [$(#[$doc:meta])*] $method:ident, [$($arg:ident : $ty:ty),*], $ret:ty, ;,) => {
        $(#[$doc])*
        fn $method(&self $(, $arg: $ty)*)
            -> impl ::core::future::Future<Output = $ret> + ::core::marker::Send;
    };
    (@native [$(#[$doc:meta])*] $method:ident, [$($arg:ident : $ty:ty),*], $ret:ty, $default:block,) => {
        $(#[$doc])*
        fn $method(&self $(, $arg: $ty)*)
            -> impl ::core::future::Future<Output = $ret> + ::core::marker::Send {
            async move {
                let _ = ($($arg,)*);
                $default
            }
        }
    };
    (@blanket $native:ident, $method:ident, $ret:ty, $bytes:tt,
        lt: $lt:lifetime, args_a: [$($arg:ident : $ty:ty),* $(,)?],
    ) => {
        #[inline]
        fn $method<$lt>(&$lt self $(, $arg: $ty)*) -> $crate::OpFuture<$lt, $ret, $bytes> {
            $crate::OpFuture::new(<Self as $native>::$method(self $(, $arg)*))
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
