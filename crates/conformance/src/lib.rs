//! # sandloom-conformance — the conformance kits
//!
//! One named test per obligation of a public contract, runnable by any driver crate from its own
//! tests with one macro call; and [`define_kit!`], with which a package that defines a
//! capability writes the kit of its contract.
//!
//! Depend on it for your tests only:
//!
//! ```toml
//! [dev-dependencies]
//! sandloom-conformance = "0.1"
//! ```
//!
//! and run the kit of your capability in `tests/conformance.rs`; `cargo test` then lists one
//! test per obligation (`cache_conformance::set_overwrites`, …):
//!
//! ```
//! // tests/conformance.rs of a driver crate:
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{Cache, CacheOps, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct ForgetfulCache;
//! # impl CacheOps for ForgetfulCache {
//! #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
//! #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
//! #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
//! # }
//! # impl Driver for ForgetfulCache {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
//! # }
//! # impl CacheProvider for ForgetfulCache {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//! # pub type MyCache = ForgetfulCache;
//!
//! sandloom_conformance::cache_conformance!(MyCache, |_request| NoOptions {});
//! # fn main() {}
//! ```
//!
//! Attributes written before the driver type go on every obligation's test. A driver for a
//! server runs its kit only where the server is known to answer, and says how to run it
//! elsewhere, rather than passing without having run (the cfg set by the crate's build script
//! when, say, `SANDLOOM_TEST_REDIS_URL` is set):
//!
//! ```
//! # use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{CacheOps, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # pub struct ForgetfulCache;
//! # impl CacheOps for ForgetfulCache {
//! #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
//! #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> { Ok(()) }
//! #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
//! # }
//! # impl Driver for ForgetfulCache {
//! #     type Options = sandloom_driverkit::NoOptions;
//! #     fn supported_features() -> &'static [&'static str] { &[] }
//! #     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(ForgetfulCache) }
//! # }
//! # impl CacheProvider for ForgetfulCache {
//! #     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
//! # }
//! # pub type ServerCache = ForgetfulCache;
//! sandloom_conformance::cache_conformance!(
//!     #[cfg_attr(not(server_available), ignore = "set SANDLOOM_TEST_REDIS_URL to run")]
//!     against_server: ServerCache,
//!     |_request| NoOptions {}
//! );
//! # fn main() {}
//! ```
//!
//! Each kit builds a fresh instance per obligation from the options the closure returns (the
//! [`KitRequest`] says what the kit needs: a scratch directory, a short visibility timeout),
//! computes its features with `features_for` exactly as the kernel does, starts it, runs the
//! obligation on a fresh multi-threaded Tokio runtime under a time limit, and stops it.
//! Kits are driven by the declared features both ways: a declared feature is exercised; an
//! undeclared optional operation must answer [`ErrorKind::Unsupported`](sandloom_driverkit::sdk::ErrorKind).
//! A panic or a hang of the driver is a failed obligation, never a crashed test binary.
//!
//! ## Secrets, with no declaration
//!
//! Every kit's `secrets_never_show` finds the driver's secrets itself: the test macro reads the
//! options' JSON Schema (when the options type derives `schemars::JsonSchema`, as for
//! `infra schema`), and the kit plants a value of its own in every `writeOnly` option (each
//! `Secret` and `SecretUrl`, nested ones and map values included; an address gets the value
//! as its password, at port 1 of `127.0.0.1`), builds an instance from those options, and fails
//! if one shows in a `Debug` or an error. Options with no `writeOnly` option add nothing.
//! [`Kit::secrets`] declares what the kit cannot plant in a working shape (a password inside a
//! URL the kit cannot guess), checked on the closure's instances too. A kit made by hand
//! (`CacheConformance::new`, not the macro) plants nothing: it never sees the concrete type.

pub mod cache;
pub mod lock;
pub mod notifier;
pub mod objectstore;
pub mod secrets;
pub mod taskqueue;

mod harness;

pub use harness::{Check, Failure, Instance, Kit, KitRequest, Obligation, Shared, Tolerance};

/// Not public API: what the test macros expand to.
#[doc(hidden)]
pub mod __private {
    pub use crate::harness::{DebugProbe, Described, NotShown, Shown};
    pub use sandloom_driverkit::__private::{DescribedOptions, SchemaProbe, UndescribedOptions};
    pub use sandloom_driverkit::Driver;
}

// Not public API: what the test macros tell the kit of the driver type `$driver`, found where
// it is concrete (see `Kit::__described`).
#[doc(hidden)]
#[macro_export]
macro_rules! __describe {
    ($driver:ty) => {{
        // The borrows are the probes: they let a missing impl fall back to the autoref.
        #[allow(unused_imports, clippy::needless_borrow)]
        {
            use $crate::__private::{
                DescribedOptions as _, NotShown as _, Shown as _, UndescribedOptions as _,
            };
            $crate::__private::Described::<$driver> {
                schema: (&$crate::__private::SchemaProbe::<
                    <$driver as $crate::__private::Driver>::Options,
                >(::core::marker::PhantomData))
                    .options_schema(),
                debug_driver: (&$crate::__private::DebugProbe::<$driver>(
                    ::core::marker::PhantomData,
                ))
                    .shown(),
                debug_options: (&$crate::__private::DebugProbe::<
                    <$driver as $crate::__private::Driver>::Options,
                >(::core::marker::PhantomData))
                    .shown(),
            }
        }
    }};
}

/// `Err(format!(..))` unless `cond`. Obligations read as a list of checks.
macro_rules! ensure {
    ($cond:expr, $($message:tt)+) => {
        if !$cond {
            return Err(format!($($message)+));
        }
    };
}
pub(crate) use ensure;

/// Unwrap an operation's result, or fail the obligation naming the operation and the error.
macro_rules! call {
    ($what:expr, $future:expr) => {
        match $future.await {
            Ok(value) => value,
            Err(error) => return Err(format!("{} failed: {error}", $what)),
        }
    };
}
pub(crate) use call;

/// Check that an optional operation whose feature the instance did not declare answered
/// `Unsupported`: the half of "driven by the declared features both ways" that every kit needs.
///
/// # Errors
/// What the operation answered instead, for the obligation's failure.
///
/// ```
/// use sandloom_conformance::expect_unsupported;
/// use sandloom_driverkit::sdk::{InfraError, InfraResult};
///
/// let refused: InfraResult<()> = Err(InfraError::unsupported("cache", "set_with_ttl", "ttl"));
/// assert!(expect_unsupported("set_with_ttl", &refused).is_ok());
/// let served: InfraResult<()> = Ok(());
/// assert!(expect_unsupported("set_with_ttl", &served).unwrap_err().contains("succeeded"));
/// ```
pub fn expect_unsupported<T: std::fmt::Debug>(
    operation: &str,
    result: &sandloom_sdk_infra::InfraResult<T>,
) -> Result<(), String> {
    match result {
        Err(error) if error.kind() == sandloom_sdk_infra::ErrorKind::Unsupported => Ok(()),
        Err(error) => Err(format!(
            "`{operation}` of an undeclared feature must answer Unsupported, it answered {:?}: {error}",
            error.kind()
        )),
        Ok(value) => Err(format!(
            "`{operation}` of an undeclared feature must answer Unsupported, it succeeded with {value:?}"
        )),
    }
}

/// Check that `result` is an error of `kind`.
///
/// # Errors
/// What the operation answered instead, for the obligation's failure.
///
/// ```
/// use sandloom_conformance::expect_kind;
/// use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
///
/// let refused: InfraResult<()> = Err(InfraError::invalid_input("cache", "empty key"));
/// assert!(expect_kind("get(\"\")", ErrorKind::InvalidInput, &refused).is_ok());
/// assert!(expect_kind("get(\"\")", ErrorKind::NotFound, &refused).is_err());
/// ```
pub fn expect_kind<T: std::fmt::Debug>(
    what: &str,
    kind: sandloom_sdk_infra::ErrorKind,
    result: &sandloom_sdk_infra::InfraResult<T>,
) -> Result<(), String> {
    match result {
        Err(error) if error.kind() == kind => Ok(()),
        Err(error) => Err(format!(
            "{what} must answer {kind}, it answered {}: {error}",
            error.kind()
        )),
        Ok(value) => Err(format!(
            "{what} must answer {kind}, it succeeded with {value:?}"
        )),
    }
}

/// Define a conformance kit: its obligations, each written once as an `async fn`, and the macro
/// driver crates call to get one `#[test]` per obligation. The built-in kits are defined with it
/// too.
///
/// In the package that defines a capability (with `sandloom-conformance` as a dependency), in a
/// module of its own:
///
/// - each obligation is an `async fn name<T: Provider>(i: &Instance<T>, s: &Settings) ->
///   Result<(), String>`: it checks the driver [`Instance::driver`], consults
///   [`Instance::declares`] to exercise a declared feature or to check that an undeclared one
///   answers `Unsupported`, and says what went wrong;
/// - `define_kit!` lists them once, and generates `OBLIGATIONS` (their names, in order),
///   `obligations::<T>()` (the [`Obligation`]s for [`Kit::build`]) and the test macro;
/// - `kit` names, starting with `crate::`, a function or an associated function that makes the
///   kit from the driver author's options closure.
///
/// ```
/// pub mod fulltext {
///     use sandloom_driverkit::sdk::InfraResult;
///
///     sandloom_driverkit::define_capability! {
///         /// Full-text search.
///         pub capability FulltextCapability {
///             name: "fulltext",
///             stability: Experimental,
///             contract_version: (0, 1, 0),
///             features: [],
///             key: FULLTEXT,
///             provider: FulltextProvider,
///             ops: FulltextOps,
///             gate: FulltextGate,
///         }
///         /// What modules call.
///         pub trait Fulltext {
///             /// Index `text` under `id`.
///             async fn index(&self, id: &str, text: &str) -> InfraResult<()>;
///             /// The ids of the documents containing `word`.
///             async fn query(&self, word: &str) -> InfraResult<Vec<String>>;
///         }
///     }
///
///     pub mod kit {
///         use sandloom_conformance::{Instance, Kit, KitRequest};
///         use sandloom_driverkit::Driver;
///         use super::{FulltextCapability, FulltextProvider};
///
///         /// The kit, for the driver's options closure.
///         pub fn fulltext_kit<T: FulltextProvider>(
///             options: impl Fn(&KitRequest) -> <T as Driver>::Options + Send + Sync + 'static,
///         ) -> Kit<T, ()> {
///             Kit::build::<FulltextCapability>(obligations::<T>(), options, ())
///         }
///
///         async fn an_indexed_word_is_found<T: FulltextProvider>(
///             i: &Instance<T>,
///             _: &(),
///         ) -> Result<(), String> {
///             let search = i.served::<FulltextCapability>(); // as modules get it
///             search.index("a", "hello world").await.map_err(|e| format!("index failed: {e}"))?;
///             let found = search.query("world").await.map_err(|e| format!("query failed: {e}"))?;
///             if found != ["a"] {
///                 return Err(format!("`query(\"world\")` answered {found:?}, not [\"a\"]"));
///             }
///             Ok(())
///         }
///
///         sandloom_conformance::define_kit! {
///             /// One `#[test]` per obligation of the `fulltext` kit.
///             macro fulltext_conformance;
///             kit crate::fulltext::kit::fulltext_kit;
///             provider FulltextProvider;
///             settings ();
///             obligations [an_indexed_word_is_found];
///         }
///     }
/// }
///
/// # fn main() {
/// assert_eq!(fulltext::kit::OBLIGATIONS, ["an_indexed_word_is_found"]);
/// # }
/// ```
///
/// A driver crate then runs it from its tests, with the same forms as the built-in kits'
/// macros (attributes first, an optional module name, builder methods after the closure):
/// `my_contracts::fulltext_conformance!(MyEngine, |request| MyOptions::for_tests(request));`.
/// `examples/fulltext/` in the Sandloom repository is a complete contract crate, with its kit's
/// self-test against broken drivers, and a driver crate that runs the kit.
#[macro_export]
macro_rules! define_kit {
    (
        $(#[$doc:meta])*
        macro $test_macro:ident;
        kit $krate:ident $(:: $path:ident)+;
        provider $provider:path;
        settings $settings:ty;
        $(#[$obligations_doc:meta])*
        obligations [$($obligation:ident),* $(,)?] $(;)?
    ) => {
        /// Every obligation of the kit, in the order it runs them.
        $(#[$obligations_doc])*
        pub const OBLIGATIONS: &[&str] = &[$(::core::stringify!($obligation)),*];

        /// The kit's obligations, each named after its function.
        #[must_use]
        pub fn obligations<T: $provider>()
            -> ::std::vec::Vec<$crate::Obligation<T, $settings>>
        {
            ::std::vec![$(
                $crate::Obligation::new(
                    ::core::stringify!($obligation),
                    |i, s| ::std::boxed::Box::pin($obligation(i, s)),
                )
            ),*]
        }

        $crate::__kit_test_macro! {
            ($) $(#[$doc])* $test_macro, $krate, [$($path)::+], [$($obligation),*]
        }
    };
}

// Not public API: the test macro of a kit. `$d` is a `$`, so the generated macro can have
// metavariables of its own; `$d $krate` is `$crate` of the crate that defined the kit.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_test_macro {
    (($d:tt) $(#[$doc:meta])* $test_macro:ident, $krate:ident, [$($path:ident)::+],
        [$($obligation:ident),*]) => {
        $(#[$doc])*
        #[macro_export]
        macro_rules! $test_macro {
            ($d(#[$d attribute:meta])* $d module:ident : $d driver:ty, $d options:expr
                $d(, $d(. $d method:ident ( $d($d argument:expr),* $d(,)? ))+ )? $d(,)?) => {
                #[allow(non_snake_case, clippy::pedantic)]
                mod $d module {
                    #[allow(unused_imports)]
                    use super::*;

                    $crate::__conformance_tests!(
                        $test_macro,
                        [$d(#[$d attribute])*],
                        {
                            let kit: $crate::Kit<$d driver, _> =
                                $d $krate::$($path)::+($d options);
                            kit.__described($crate::__describe!($d driver))
                        } $d($d(. $d method ( $d($d argument),* ))+)?,
                        [$($obligation),*]
                    );
                }
            };
            ($d(#[$d attribute:meta])* $d driver:ty, $d options:expr
                $d(, $d(. $d method:ident ( $d($d argument:expr),* $d(,)? ))+ )? $d(,)?) => {
                $crate::__conformance_tests!(
                    $test_macro,
                    [$d(#[$d attribute])*],
                    {
                        let kit: $crate::Kit<$d driver, _> =
                            $d $krate::$($path)::+($d options);
                        kit.__described($crate::__describe!($d driver))
                    } $d($d(. $d method ( $d($d argument),* ))+)?,
                    [$($obligation),*]
                );
            };
        }
    };
}

// Not public API: expands a kit into one `#[test]` per obligation.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($module:ident, $attributes:tt, $kit:expr, [$($obligation:ident),* $(,)?]) => {
        #[allow(non_snake_case, clippy::pedantic)]
        mod $module {
            #[allow(unused_imports)]
            use super::*;

            $(
                $crate::__conformance_test!($attributes, $obligation, $kit);
            )*

            #[test]
            fn every_obligation_of_the_kit_has_a_test() {
                $kit.assert_names(&[$(::core::stringify!($obligation)),*]);
            }
        }
    };
}

// Not public API: one obligation's `#[test]`, with the attributes the kit's caller gave.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_test {
    ([$(#[$attribute:meta])*], $obligation:ident, $kit:expr) => {
        #[test]
        $(#[$attribute])*
        fn $obligation() {
            $kit.assert(::core::stringify!($obligation));
        }
    };
}
