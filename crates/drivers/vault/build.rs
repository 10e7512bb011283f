//! Server tests run only where `SANDLOOM_TEST_VAULT_URL` is set (`sandloom-server-tests`).

fn main() {
    sandloom_server_tests::server_tests("vault");
}
