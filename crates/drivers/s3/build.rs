//! Turns on `cfg(sandloom_test_s3)` when `SANDLOOM_TEST_S3_ENDPOINT` is set, so the tests that
//! need a real S3 server run then and are reported as ignored otherwise.

fn main() {
    println!("cargo::rerun-if-env-changed=SANDLOOM_TEST_S3_ENDPOINT");
    println!("cargo::rustc-check-cfg=cfg(sandloom_test_s3)");
    if std::env::var_os("SANDLOOM_TEST_S3_ENDPOINT").is_some() {
        println!("cargo::rustc-cfg=sandloom_test_s3");
    }
}
