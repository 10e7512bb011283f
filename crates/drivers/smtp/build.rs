//! Server tests run only where `SANDLOOM_TEST_SMTP_URL` is set: see `../server_tests.rs`.

include!("../server_tests.rs");

fn main() {
    server_tests("smtp");
}
