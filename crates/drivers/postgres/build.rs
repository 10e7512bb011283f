//! Server tests and benchmarks run only when `SANDLOOM_TEST_POSTGRES_URL` names a server
//! (`eval "$(scripts/test-services up)"`); without it they are ignored and say how to run them.

fn main() {
    println!("cargo::rerun-if-env-changed=SANDLOOM_TEST_POSTGRES_URL");
    println!("cargo::rustc-check-cfg=cfg(sandloom_test_postgres)");
    if std::env::var_os("SANDLOOM_TEST_POSTGRES_URL").is_some() {
        println!("cargo::rustc-cfg=sandloom_test_postgres");
    }
}
