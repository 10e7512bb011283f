//! Conformance kits: one named test per obligation of a public contract, runnable by any driver
//! crate from its own tests with one macro call.
//!
//! Turn the feature on for your tests only:
//!
//! ```toml
//! [dev-dependencies]
//! sandloom-driverkit = { version = "0.1", features = ["conformance"] }
//! ```
//!
//! and run the kit of your capability in `tests/conformance.rs`; `cargo test` then lists one
//! test per obligation (`cache_conformance::set_overwrites`, …):
//!
//! ```
//! // tests/conformance.rs of a driver crate:
//! use sandloom_driverkit::NoOptions;
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{Cache, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # /// Stores nothing: a stand-in for a driver under test.
//! # pub struct ForgetfulCache;
//! # #[async_trait]
//! # impl Cache for ForgetfulCache {
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
//! sandloom_driverkit::cache_conformance!(MyCache, |_request| NoOptions {});
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
//! # use sandloom_driverkit::{async_trait, Driver, DriverError, Version};
//! # use sandloom_driverkit::cache::{Cache, CacheProvider};
//! # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
//! # pub struct ForgetfulCache;
//! # #[async_trait]
//! # impl Cache for ForgetfulCache {
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
//! sandloom_driverkit::cache_conformance!(
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
//! undeclared optional operation must answer [`ErrorKind::Unsupported`](crate::sdk::ErrorKind).
//! A panic or a hang of the driver is a failed obligation, never a crashed test binary.

pub mod cache;
pub mod lock;
pub mod notifier;
pub mod objectstore;
pub mod taskqueue;

mod harness;
mod proxy;

pub use harness::{Failure, KitRequest};
pub use proxy::TcpProxy;

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

/// Check that an optional operation whose feature is not declared answers `Unsupported`.
pub(crate) fn expect_unsupported<T: std::fmt::Debug>(
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
pub(crate) fn expect_kind<T: std::fmt::Debug>(
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
