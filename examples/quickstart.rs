//! Quickstart: an application that links drivers, reads `INFRA`, starts the infrastructure and
//! runs a module that uses four public capabilities, then takes, fences and releases a lock
//! through `infra.lock()` (`examples/quickstart/lock.rs`).
//!
//! ```text
//! cargo run --example quickstart                                # embedded defaults
//! cargo run --example quickstart -- --infra examples/infra.toml # named instances
//! cargo run --example quickstart -- --infra examples/infra.backends.toml # real servers
//! SANDLOOM_INFRA=examples/infra.toml cargo run --example quickstart
//! cargo run --example quickstart -- --check                      # dry run: starts nothing
//! RUST_LOG=sandloom=debug cargo run --example quickstart         # one span line per operation
//! cargo run --example quickstart -- --metrics                    # Prometheus text at the end
//! cargo run --example quickstart -- infra check --infra examples/infra.toml  # the command line
//! cargo run --example quickstart -- infra drivers | explain B020 | schema | why cache.default | health
//! ```
//!
//! `infra …` is `sandloom::cli`: the same binary, so it knows exactly the drivers linked here.
//!
//! On a startup error it prints every problem with its code and exits with status 1; the dry
//! run prints what it found the same way, or the report of what would start.

#[path = "quickstart/lock.rs"]
mod lock;

use std::process::ExitCode;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use sandloom::{InfraConfig, Kernel, LinkedDrivers, StartupError};
use sandloom_example_orders::OrderDesk;
use tracing_subscriber::fmt::format::FmtSpan;

/// Colour the log only on a terminal, and never when `NO_COLOR` is set (<https://no-color.org>):
/// in a file or a pipe the escape codes are noise. (tracing-subscriber honours `NO_COLOR` but
/// colours a file all the same.)
fn colour_logs() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    std::io::stderr().is_terminal() && !no_color
}

fn main() -> ExitCode {
    // The embedded command line: `quickstart infra check`, `… infra why cache.default`, …
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
        return sandloom::cli::run(linked());
    }

    // Applications, not libraries, install the global subscriber; `notifier.log` writes here.
    // With `RUST_LOG=sandloom=debug`, each operation's span is printed when it closes, with its
    // capability, instance, driver, operation, outcome and duration.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(std::io::stderr)
        .with_ansi(colour_logs())
        .init();

    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let dry_run = args.iter().any(|arg| arg == "--check");
    let prometheus = args
        .iter()
        .any(|arg| arg == "--metrics")
        .then(install_prometheus);
    args.retain(|arg| arg != "--check" && arg != "--metrics");
    let config = match load_config(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    if dry_run {
        // Resolves and validates everything, constructs and starts nothing: no runtime needed.
        return match Kernel::new(config, linked()).check() {
            Ok(report) => {
                println!("Sandloom check (a dry run; nothing was started): no problems found.");
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("{err}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let status = runtime.block_on(run(config));
    if let Some(prometheus) = prometheus {
        // What a Prometheus scrape of this process would read.
        print!("{}", prometheus.render());
    }
    status
}

/// Install the Prometheus recorder, before anything starts: metrics recorded earlier are lost.
fn install_prometheus() -> PrometheusHandle {
    PrometheusBuilder::new()
        .install_recorder()
        .expect("no other metrics recorder is installed in this process")
}

fn load_config(args: &[std::ffi::OsString]) -> Result<InfraConfig, String> {
    let from_file = match args {
        [] => None,
        [flag, path] if flag == "--infra" => Some(std::path::PathBuf::from(path)),
        [flag] if flag == "--infra" => {
            return Err("--infra needs a file: --infra examples/infra.toml".into());
        }
        _ => {
            return Err(
                "usage: quickstart [--infra FILE] [--check] [--metrics]   (or set SANDLOOM_INFRA=FILE)"
                    .into(),
            );
        }
    };
    let config = match from_file {
        Some(path) => InfraConfig::from_file(path).and_then(InfraConfig::with_env_overrides),
        None => InfraConfig::from_env(),
    };
    config.map_err(|err: StartupError| err.to_string())
}

/// Every driver crate the application uses is named here; a crate no code names is not linked.
fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_example_driver_console,
        // An experimental third-party capability (`fulltext`): `infra check` in production
        // shows SANDLOOM-B023 with it (README).
        sandloom_example_fulltext_memory,
        sandloom_driver_redis,
        sandloom_driver_postgres,
        sandloom_driver_amqp,
        sandloom_driver_s3,
        sandloom_driver_webhook,
        sandloom_driver_smtp,
        sandloom_driver_vault
    )
}

async fn run(config: InfraConfig) -> ExitCode {
    let running = match Kernel::new(config, linked()).start().await {
        Ok(running) => running,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", running.report());

    let outcome = use_the_module(running.infra()).await;
    let stopped = running.shutdown().await;
    match (outcome, stopped) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(message), _) => {
            eprintln!("the order desk failed: {message}");
            ExitCode::FAILURE
        }
        (Ok(()), Err(err)) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}

async fn use_the_module(infra: &sandloom::sdk::Infra) -> Result<(), String> {
    let desk = OrderDesk::new(infra).map_err(|err| err.to_string())?;
    for (customer, item) in [
        ("ada@example.com", "loom"),
        ("grace@example.com", "shuttle"),
    ] {
        let key = desk
            .place_order(customer, item)
            .await
            .map_err(|e| e.to_string())?;
        println!("placed order {key} for {customer}");
    }
    let sent = desk.send_confirmations().await.map_err(|e| e.to_string())?;
    println!("sent {sent} confirmations");
    let orders = desk.orders().await.map_err(|e| e.to_string())?;
    println!("{} orders on record: {}", orders.len(), orders.join(", "));
    lock::write_the_report(infra, &mut lock::Report::default()).await?;
    Ok(())
}
