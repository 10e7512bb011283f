//! A capability defined by a package of its own, end to end: the contract crate
//! (`examples/fulltext/contracts`, which defines `fulltext` with `define_capability!` and its
//! kit with `define_kit!`), a driver for it (`examples/fulltext/driver-memory`,
//! `fulltext.memory`), a module that uses it (`examples/fulltext/module-notes`) and this
//! application, which links the driver and selects it in `INFRA`.
//!
//! ```text
//! cargo run --example fulltext
//! ```

use std::process::ExitCode;

use sandloom::{InfraConfig, Kernel};
use sandloom_example_notes::Notes;

const INFRA: &str = r#"
# `fulltext` is experimental: outside `production` it needs no accepted risk.
[fulltext.default]
driver = "memory"
prefix = true
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let linked = sandloom::link_drivers!(sandloom_example_fulltext_memory);
    let config = match InfraConfig::from_toml_str(INFRA, "examples/fulltext.rs") {
        Ok(config) => config,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    let running = match Kernel::new(config, linked).start().await {
        Ok(running) => running,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", running.report());

    let outcome = async {
        let notes = Notes::new(running.infra()).map_err(|e| e.to_string())?;
        notes
            .add("n1", "Call the plumber about the kitchen sink")
            .await
            .map_err(|e| e.to_string())?;
        notes
            .add("n2", "Kitchen: buy oat milk")
            .await
            .map_err(|e| e.to_string())?;
        notes
            .add("n3", "Plan the garden")
            .await
            .map_err(|e| e.to_string())?;
        for query in ["kitchen", "kitchen sink", "pla"] {
            let found = notes.find(query).await.map_err(|e| e.to_string())?;
            println!("find({query:?}) = {found:?}");
        }
        Ok::<(), String>(())
    }
    .await;

    let stopped = running.shutdown().await;
    match (outcome, stopped) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(err), _) => {
            eprintln!("the notes module failed: {err}");
            ExitCode::FAILURE
        }
        (_, Err(err)) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
