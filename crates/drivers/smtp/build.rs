//! Sets `cfg(sandloom_test_smtp)` when `SANDLOOM_TEST_SMTP_URL` is set, so the tests that need
//! a real SMTP server run only where one is known to answer and are reported as ignored (with
//! how to run them) elsewhere.

fn main() {
    println!("cargo::rerun-if-env-changed=SANDLOOM_TEST_SMTP_URL");
    println!("cargo::rustc-check-cfg=cfg(sandloom_test_smtp)");
    if std::env::var_os("SANDLOOM_TEST_SMTP_URL").is_some() {
        println!("cargo::rustc-cfg=sandloom_test_smtp");
    }
}
