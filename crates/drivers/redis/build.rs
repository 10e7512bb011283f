//! Server tests run only where `SANDLOOM_TEST_REDIS_URL` is set (`sandloom-server-tests`); the
//! fence campaign also needs `SANDLOOM_TEST_POSTGRES_URL`: its protected resource is a
//! Postgres row.

fn main() {
    sandloom_server_tests::server_tests("redis");
    sandloom_server_tests::server_tests("postgres");
}
