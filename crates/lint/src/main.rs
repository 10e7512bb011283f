//! `sandloom-lint`: see the crate documentation.

use std::process::ExitCode;

fn main() -> ExitCode {
    let status = sandloom_lint::cli::run(
        std::env::args().skip(1),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(status)
}
