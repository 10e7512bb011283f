//! Turns on the `sandloom_test_amqp` cfg when `SANDLOOM_TEST_AMQP_URL` is set, so the tests that
//! need a RabbitMQ run; without it they are reported as ignored, saying how to run them.

fn main() {
    println!("cargo::rerun-if-env-changed=SANDLOOM_TEST_AMQP_URL");
    println!("cargo::rustc-check-cfg=cfg(sandloom_test_amqp)");
    if std::env::var_os("SANDLOOM_TEST_AMQP_URL").is_some() {
        println!("cargo::rustc-cfg=sandloom_test_amqp");
    }
}
