// The one way every driver crate's `build.rs` reads its `SANDLOOM_TEST_*` variable: included
// (`include!("../server_tests.rs")`) rather than copied, so the variable and cfg names cannot
// drift apart from one crate to the next.

/// Turn on `cfg(sandloom_test_<backend>)` when `SANDLOOM_TEST_<BACKEND>_URL` is set (as
/// `eval "$(scripts/test-services up)"` sets it), so the tests and benchmarks that need a real
/// server run there; elsewhere they are reported as ignored, saying how to run them.
fn server_tests(backend: &str) {
    let variable = format!("SANDLOOM_TEST_{}_URL", backend.to_ascii_uppercase());
    let cfg = format!("sandloom_test_{backend}");
    println!("cargo::rerun-if-env-changed={variable}");
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    if std::env::var_os(&variable).is_some() {
        println!("cargo::rustc-cfg={cfg}");
    }
}
