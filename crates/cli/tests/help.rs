//! `infra --help` is help for people, not the rustdoc of `InfraCommand`.

use clap::{CommandFactory, Parser};

const ABOUT: &str =
    "Inspect the infrastructure: check, drivers, explain, schema, why, health, diff";

fn assert_is_help(help: &str) {
    assert!(help.starts_with(ABOUT), "{help}");
    // The rustdoc's example (a code fence and the derive it shows) stays in the rustdoc.
    assert!(!help.contains("```"), "{help}");
    assert!(!help.contains("#[derive(Parser)]"), "{help}");
    assert!(!help.contains("module docs"), "{help}");
}

#[test]
fn infra_help_is_the_about_not_the_rustdoc() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = sandloom_cli::execute(
        sandloom_kernel::link_drivers!(),
        ["app", "infra", "--help"],
        &mut out,
        &mut err,
    );
    assert_eq!(status, sandloom_cli::Status::Ok);
    assert_is_help(&String::from_utf8(out).unwrap());
}

#[test]
fn an_embedding_application_shows_the_same_help() {
    #[derive(Parser)]
    struct App {
        #[command(subcommand)]
        command: Command,
    }
    #[derive(clap::Subcommand)]
    enum Command {
        Infra(sandloom_cli::InfraCommand),
    }
    let mut app = App::command();
    let help = app
        .find_subcommand_mut("infra")
        .unwrap()
        .render_long_help()
        .to_string();
    assert_is_help(&help);
}
