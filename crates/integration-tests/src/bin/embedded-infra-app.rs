//! An application that embeds the `infra` command line under `#[tokio::main]`, as a user's
//! would: `tests/test_embedded_app_process.rs` runs it as a process and checks what it prints
//! and its exit status, so nothing in between (a test harness, a captured writer) can hide a
//! panic or a wrong status.
//!
//! ```text
//! APP_RUNTIME=multi_thread|current_thread APP_ENTRY=blocking|async \
//!     embedded-infra-app infra health --infra infra.toml
//! ```
//!
//! `APP_RUNTIME` picks the runtime's flavor (default `multi_thread`), `APP_ENTRY` the command
//! line's entry point: the blocking `sandloom::cli::run`, or `run_async(…).await` (default).

use std::process::ExitCode;

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_embedded)
}

fn main() -> ExitCode {
    match std::env::var("APP_RUNTIME").as_deref() {
        Ok("current_thread") => current_thread_main(),
        _ => multi_thread_main(),
    }
}

#[tokio::main]
async fn multi_thread_main() -> ExitCode {
    application().await
}

#[tokio::main(flavor = "current_thread")]
async fn current_thread_main() -> ExitCode {
    application().await
}

/// The application's `main`, inside its runtime.
async fn application() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
        return match std::env::var("APP_ENTRY").as_deref() {
            // Blocking, from inside the runtime: what issue 23 found panicking.
            Ok("blocking") => sandloom::cli::run(linked()),
            _ => sandloom::cli::run_async(linked()).await,
        };
    }
    eprintln!("usage: embedded-infra-app infra <COMMAND>; the application serves nothing else");
    ExitCode::from(2)
}
