//! The one way every Sandloom backend driver crate's `build.rs` reads its `SANDLOOM_TEST_*`
//! variable, so the variable and cfg names cannot drift apart from one crate to the next. A
//! crate of its own (a build-dependency) rather than a shared file: a file outside a package is
//! not packaged with it (sandloom-lint E002).
//!
//! ```no_run
//! // The whole `fn main` of a driver crate's build.rs:
//! sandloom_server_tests::server_tests("redis");
//! ```
//!
//! and in its tests:
//!
//! ```text
//! #[cfg_attr(not(sandloom_test_redis), ignore = "needs SANDLOOM_TEST_REDIS_URL")]
//! ```

/// The variable that names a server for `backend`'s tests: `SANDLOOM_TEST_<BACKEND>_URL`.
///
/// ```
/// assert_eq!(sandloom_server_tests::variable("s3"), "SANDLOOM_TEST_S3_URL");
/// ```
pub fn variable(backend: &str) -> String {
    format!("SANDLOOM_TEST_{}_URL", backend.to_ascii_uppercase())
}

/// The cfg that [`server_tests`] turns on: `sandloom_test_<backend>`.
///
/// ```
/// assert_eq!(sandloom_server_tests::cfg("redis"), "sandloom_test_redis");
/// ```
pub fn cfg(backend: &str) -> String {
    format!("sandloom_test_{backend}")
}

/// From a build script: turn on `cfg(sandloom_test_<backend>)` when
/// `SANDLOOM_TEST_<BACKEND>_URL` is set (as `eval "$(scripts/test-services up)"` sets it), so
/// the tests and benchmarks that need a real server run there; elsewhere they are reported as
/// ignored, saying how to run them. Rebuilds when the variable changes.
///
/// ```no_run
/// sandloom_server_tests::server_tests("postgres"); // in build.rs
/// ```
pub fn server_tests(backend: &str) {
    let variable = variable(backend);
    let cfg = cfg(backend);
    println!("cargo::rerun-if-env-changed={variable}");
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    if std::env::var_os(&variable).is_some() {
        println!("cargo::rustc-cfg={cfg}");
    }
}
