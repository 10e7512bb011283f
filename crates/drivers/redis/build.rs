//! Server tests and benchmarks run only where `SANDLOOM_TEST_REDIS_URL` names a Redis server:
//! elsewhere they are ignored with a message saying how to run them.

fn main() {
    println!("cargo::rerun-if-env-changed=SANDLOOM_TEST_REDIS_URL");
    println!("cargo::rustc-check-cfg=cfg(sandloom_test_redis)");
    if std::env::var_os("SANDLOOM_TEST_REDIS_URL").is_some() {
        println!("cargo::rustc-cfg=sandloom_test_redis");
    }
}
