//! The workspace's integration tests, in `tests/`: the kernel with the built-in, backend,
//! example and fixture drivers linked, through the application door (`sandloom`), and the
//! `infra` command line (`sandloom::cli`). This library is empty; the package exists so that
//! these tests' dev-dependencies (every fixture driver, the snapshot and schema tools) are not
//! the root package's, which `cargo run --example quickstart` would otherwise compile.
//!
//! ```text
//! cargo test -p sandloom-integration-tests
//! ```
