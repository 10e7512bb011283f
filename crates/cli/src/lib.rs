//! # sandloom-cli — the `infra` command line
//!
//! The embeddable `infra` command line: one call gives an application's own binary an `infra`
//! subcommand that knows exactly the drivers linked into it. Applications reach it as
//! `sandloom::cli` (the `cli` feature of the `sandloom` crate); it is this crate, re-exported, so
//! either path names the same items. It reads the kernel through its documented public API only:
//! [`Kernel::check`] and [`Kernel::start`], the condition report of `sandloom_kernel::conditions`,
//! the codes of `sandloom_kernel::codes`, and the linked drivers and capabilities of
//! `sandloom_kernel::registry`.
//!
//! | subcommand | what it does |
//! |---|---|
//! | `infra check` | the dry run ([`Kernel::check`]): every problem with its code, location and action |
//! | `infra check --read-secrets` | the dry run, reading every secret reference from its store ([`Kernel::check_reading_secrets`]) |
//! | `infra drivers` | every linked driver: capability, name, package, contract, stability, features, options |
//! | `infra explain CODE` | the long explanation of a code (`B020`, `SANDLOOM-B020`), like `rustc --explain` |
//! | `infra schema` | a JSON Schema (draft 2020-12) of `INFRA` for the linked drivers, for editors |
//! | `infra why CAPABILITY.INSTANCE` | the condition report: candidates, the selected driver, why not the others |
//! | `infra health` | starts the infrastructure, prints each instance's health, stops |
//! | `infra diff OLD NEW` | what a reload from the file OLD to the file NEW would do: instances kept, replaced (with the reasons), added and removed |
//!
//! Every subcommand takes `--format text|json` (JSON carries `"format_version": 1` and
//! `"command"` at the top) and `--infra FILE`. `INFRA` is read as the application reads it:
//! `--infra FILE` stands for `SANDLOOM_INFRA=FILE`; without it, the file `SANDLOOM_INFRA` names,
//! else the embedded defaults; then the `SANDLOOM__…` overrides of the environment
//! ([`InfraConfig::from_env`]). `drivers`, `explain` and `schema` do not read `INFRA`.
//! `diff` reads its two files as `--infra FILE` is read, the overrides applied to both, as a
//! reload applies them to the new file; `--infra` with `diff` is bad input.
//!
//! `infra diff`'s JSON: `"ok"` (both files without problems), `"changed"` (`null` when not
//! ok), `"old"` and `"new"` (`{"origin", "ok", "problems": […]}`, problems as `check`'s),
//! `"instances"` (`[{"capability", "instance", "change": "kept" | "replaced" | "added" |
//! "removed", "reasons": […]}]`, in start order) and `"settings"` (changed settings of the
//! whole process, as text).
//!
//! ## Exit status (stable)
//!
//! | status | meaning |
//! |---|---|
//! | 0 | ok: `check` found no problem, `diff` compared two files without problems (whether or not anything changes: `"changed"` in its JSON says), `health` is ready (or degraded: it still serves), `why`'s instance has no problem (a driver is selected for it, or, unconfigured, one could serve it) |
//! | 1 | the infrastructure has problems: `check` found some (a file that is not TOML or not UTF-8 included: that is `INFRA` being checked), `diff`'s OLD or NEW has some (a reload would be refused; the problems are printed instead of the plan), `health` is not ready or could not start, `why`'s instance has problems (`check` reports some about it, or no linked driver serves it or could: `selected: none`) |
//! | 2 | bad input: an unknown subcommand or option (clap's usage error), `--infra` with `diff`, an unknown code, a malformed `CAPABILITY.INSTANCE`, an unknown capability or an instance name `check` refuses (SANDLOOM-B010), an `--infra` file (or `SANDLOOM_INFRA`, or `diff`'s OLD or NEW) that does not exist or cannot be opened |
//!
//! Results go to standard output; bad-input errors, in text, to standard error. Nothing panics
//! on any input.
//!
//! ## Embedding
//!
//! Dispatch to [`run`] when the first argument is `infra`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     let linked = sandloom_kernel::link_drivers!(/* sandloom_embedded, my_driver_crate */);
//!     if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
//!         return sandloom_cli::run(linked);
//!     }
//!     // ... the application itself ...
//!     std::process::ExitCode::SUCCESS
//! }
//! ```
//!
//! ### In an async application
//!
//! The command line is safe in any program. [`run`], [`run_from`], [`execute`] and
//! [`InfraCommand::execute`] block; called inside a Tokio runtime (under `#[tokio::main]`, of
//! either flavor), `infra health` runs on a thread of its own with its own runtime, and the
//! caller's thread waits for it. An async `main` had better `.await` [`run_async`] or
//! [`InfraCommand::execute_async`], which run `health` on the caller's runtime and block
//! nothing:
//!
//! ```no_run
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     let linked = sandloom_kernel::link_drivers!(/* sandloom_embedded, my_driver_crate */);
//!     if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
//!         return sandloom_cli::run_async(linked).await;
//!     }
//!     // ... the application itself ...
//!     std::process::ExitCode::SUCCESS
//! }
//! ```
//!
//! | caller | call |
//! |---|---|
//! | a plain `fn main` | [`run`], or [`InfraCommand::execute`] with its own parser |
//! | an `async fn main` (`#[tokio::main]`) | [`run_async`], or [`InfraCommand::execute_async`] |
//! | tests, or output shown elsewhere | [`execute`] (writers of its own) |
//!
//! ### With the application's own parser
//!
//! An application with its own `clap` parser embeds [`InfraCommand`] as a subcommand:
//!
//! ```
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! enum App {
//!     /// Serve requests.
//!     Serve,
//!     /// Inspect the infrastructure.
//!     Infra(sandloom_cli::InfraCommand),
//! }
//!
//! let linked = sandloom_kernel::link_drivers!();
//! let App::Infra(command) = App::parse_from(["app", "infra", "explain", "b023"]) else {
//!     unreachable!()
//! };
//! let mut out = Vec::new();
//! let status = command.execute(linked, &mut out, &mut std::io::sink());
//! assert_eq!(status, sandloom_cli::Status::Ok);
//! assert!(String::from_utf8(out).unwrap().starts_with("SANDLOOM-B023"));
//! ```

mod check;
mod diff;
mod drivers;
mod explain;
mod health;
mod json;
mod schema;
mod why;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use sandloom_kernel::{InfraConfig, LinkedDrivers, StartupError};
// `json.rs` names these as `crate::…`: imported here once, so that file reads as it did in the
// root crate (and merges with edits made to it there); drop what it stops naming.
use sandloom_kernel::{Location, Problem};

#[cfg(doc)]
use sandloom_kernel::Kernel;

/// The version of the JSON output's shape: `"format_version"` at the top of every JSON answer.
/// It changes only when a field is removed or changes meaning; fields may be added.
///
/// ```
/// assert_eq!(sandloom_cli::FORMAT_VERSION, 1);
/// ```
pub const FORMAT_VERSION: u32 = 1;

/// How a command ended; its [`code`](Status::code) is the process's exit status.
///
/// ```
/// use sandloom_cli::Status;
/// assert_eq!([Status::Ok, Status::Problems, Status::BadInput].map(Status::code), [0, 1, 2]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: nothing to report.
    Ok,
    /// 1: the infrastructure has problems (check found some; not ready; the instance has some).
    Problems,
    /// 2: bad input (usage, an unknown code or capability, a file that cannot be opened).
    BadInput,
}

impl Status {
    /// The exit status: 0, 1 or 2.
    ///
    /// ```
    /// assert_eq!(sandloom_cli::Status::BadInput.code(), 2);
    /// ```
    pub fn code(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::Problems => 1,
            Self::BadInput => 2,
        }
    }
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> Self {
        ExitCode::from(status.code())
    }
}

/// The output format.
///
/// ```
/// assert_eq!(sandloom_cli::Format::default(), sandloom_cli::Format::Text);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// For tools: one JSON document with `"format_version": 1`.
    Json,
}

/// The `infra` subcommand, for applications with their own `clap` parser (see the
/// [module docs](self)); [`run`] parses it from the process's arguments.
///
/// ```
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct App {
///     #[command(subcommand)]
///     command: Command,
/// }
/// #[derive(clap::Subcommand)]
/// enum Command {
///     Infra(sandloom_cli::InfraCommand),
/// }
/// let app = App::parse_from(["app", "infra", "schema", "--format", "json"]);
/// let Command::Infra(infra) = app.command;
/// assert_eq!(infra.format, sandloom_cli::Format::Json);
/// ```
#[derive(Debug, Clone, Args)]
// Without `long_about`, clap would print this rustdoc, example and fences included, as `--help`.
#[command(
    about = "Inspect the infrastructure: check, drivers, explain, schema, why, health, diff",
    long_about = None
)]
pub struct InfraCommand {
    /// The INFRA file (else the file `SANDLOOM_INFRA` names, else the embedded defaults);
    /// `SANDLOOM__…` overrides apply either way.
    #[arg(long, global = true, value_name = "FILE")]
    pub infra: Option<PathBuf>,
    /// Output for people (text) or tools (json).
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// What to do.
    #[command(subcommand)]
    pub action: InfraAction,
}

/// The subcommands of `infra`.
///
/// ```
/// use sandloom_cli::InfraAction;
/// let action = InfraAction::Why { target: "cache.default".into() };
/// assert!(matches!(action, InfraAction::Why { .. }));
/// ```
#[derive(Debug, Clone, Subcommand)]
#[non_exhaustive]
pub enum InfraAction {
    /// The dry run: resolve and validate everything, start nothing; every problem with its code,
    /// location and action. Exit 1 when there is any problem.
    Check {
        /// Also start the `secrets` stores INFRA refers to and read each referenced secret,
        /// proving it exists and its option accepts it (no value is printed); then stop them.
        /// Without it, references are checked without reading: syntax, store, option.
        #[arg(long)]
        read_secrets: bool,
    },
    /// Every linked driver: capability, name, package, contract version, stability, features and
    /// options.
    Drivers,
    /// The long explanation of a code: when it happens, an example, how to fix it.
    Explain {
        /// The code: `SANDLOOM-B020` or `B020`, in any case.
        code: String,
    },
    /// A JSON Schema (draft 2020-12) of INFRA for the linked drivers, for editors.
    Schema,
    /// Which linked drivers could serve an instance, which is selected, and why not the others.
    Why {
        /// The instance, as `CAPABILITY.INSTANCE` (`cache.default`).
        #[arg(value_name = "CAPABILITY.INSTANCE")]
        target: String,
    },
    /// Start the infrastructure, print each instance's health, stop. Exit 1 when not ready.
    Health,
    /// What a reload from OLD to NEW would do: instances kept, replaced (and why), added and
    /// removed. Both files are checked first; exit 1 when either has problems.
    Diff {
        /// The INFRA file running now.
        old: PathBuf,
        /// The INFRA file to reload to.
        new: PathBuf,
    },
}

/// The parser [`run`] and [`run_from`] use: `PROGRAM infra …`.
#[derive(Debug, Parser)]
#[command(disable_help_subcommand = true)]
enum Program {
    Infra(InfraCommand),
}

impl InfraCommand {
    /// Run the command with the drivers `linked` by the application, writing the result to
    /// `out` and bad-input errors to `err`. It blocks until done, and is safe inside a Tokio
    /// runtime too (`health` then runs on a thread of its own); an async caller had better
    /// `.await` [`execute_async`](Self::execute_async).
    ///
    /// ```
    /// use clap::Parser;
    ///
    /// #[derive(Parser)]
    /// struct Args {
    ///     #[command(flatten)]
    ///     infra: sandloom_cli::InfraCommand,
    /// }
    /// let args = Args::parse_from(["app", "explain", "nope"]);
    /// let mut err = Vec::new();
    /// let status = args.infra.execute(sandloom_kernel::link_drivers!(), &mut std::io::sink(), &mut err);
    /// assert_eq!(status.code(), 2);
    /// assert!(String::from_utf8(err).unwrap().contains("unknown code `nope`"));
    /// ```
    pub fn execute(
        &self,
        linked: LinkedDrivers,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Status {
        finish(self.execute_blocking(linked, out), err)
    }

    /// [`execute`](Self::execute) for async callers: `health` starts and stops the
    /// infrastructure on the caller's runtime, which must have timers enabled (`#[tokio::main]`
    /// does; without them the answer is SANDLOOM-B001, exit 1). The other subcommands do not
    /// wait on anything. The future is `Send`, so it may be spawned.
    ///
    /// ```
    /// use clap::Parser;
    ///
    /// #[derive(Parser)]
    /// enum App {
    ///     /// Inspect the infrastructure.
    ///     Infra(sandloom_cli::InfraCommand),
    /// }
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() {
    ///     let App::Infra(command) = App::parse_from(["app", "infra", "health"]);
    ///     let mut out = Vec::new();
    ///     let status = command
    ///         .execute_async(sandloom_kernel::link_drivers!(), &mut out, &mut std::io::sink())
    ///         .await;
    ///     // No driver crate is linked into this example, so the embedded defaults cannot start.
    ///     assert_eq!(status, sandloom_cli::Status::Problems);
    ///     assert!(String::from_utf8(out).unwrap().starts_with("not started:"));
    /// }
    /// # main();
    /// ```
    pub async fn execute_async(
        &self,
        linked: LinkedDrivers,
        out: &mut (dyn Write + Send),
        err: &mut (dyn Write + Send),
    ) -> Status {
        let result = match &self.action {
            InfraAction::Health => match self.config() {
                Ok(config) => {
                    let checked = health::check_async(config, linked).await;
                    health::report(&checked, self.format, out)
                }
                Err(failure) => Err(failure),
            },
            _ => self.execute_blocking(linked, out),
        };
        finish(result, err)
    }

    /// Every subcommand, `health` on a runtime of its own (see `health::check_blocking`).
    fn execute_blocking(
        &self,
        linked: LinkedDrivers,
        out: &mut dyn Write,
    ) -> Result<Status, Failure> {
        match &self.action {
            InfraAction::Check { read_secrets } => self
                .config()
                .and_then(|config| check::run(config, linked, *read_secrets, self.format, out)),
            InfraAction::Drivers => drivers::run(self.format, out),
            InfraAction::Explain { code } => explain::run(code, self.format, out),
            InfraAction::Schema => schema::run(self.format, out),
            InfraAction::Why { target } => self
                .config()
                .and_then(|config| why::run(&config, linked, target, self.format, out)),
            InfraAction::Health => self
                .config()
                .and_then(|config| health::check_blocking(config, linked))
                .and_then(|checked| health::report(&checked, self.format, out)),
            InfraAction::Diff { old, new } => {
                if self.infra.is_some() {
                    return Err(Failure::BadInput(
                        "`infra diff` compares the two files it is given: drop `--infra`".into(),
                    ));
                }
                diff::run((old, new), linked, self.format, out)
            }
        }
    }

    /// `INFRA` as the application reads it: `--infra FILE` in place of `SANDLOOM_INFRA`, then
    /// the overrides. A file that cannot be opened is bad input; one that is not UTF-8 or not
    /// TOML is a SANDLOOM-B010 of the configuration checked, reported as a problem.
    fn config(&self) -> Result<Loaded, Failure> {
        let named = match &self.infra {
            Some(path) => Some((path.clone(), "--infra")),
            None => std::env::var_os(sandloom_kernel::config::INFRA_FILE_VAR)
                .filter(|path| !path.is_empty())
                .map(|path| (PathBuf::from(path), sandloom_kernel::config::INFRA_FILE_VAR)),
        };
        match &named {
            Some((path, by)) => load(path, by),
            None => Ok(loaded(InfraConfig::from_env())),
        }
    }
}

/// The INFRA file at `path` (named by `named_by`, for the message when it cannot be opened), then
/// the overrides of the environment.
fn load(path: &Path, named_by: &str) -> Result<Loaded, Failure> {
    openable(path, named_by)?;
    Ok(loaded(
        InfraConfig::from_file(path).and_then(InfraConfig::with_env_overrides),
    ))
}

fn loaded(read: Result<InfraConfig, StartupError>) -> Loaded {
    match read {
        Ok(config) => Loaded::Config(config),
        Err(error) => Loaded::Unreadable(error),
    }
}

/// `INFRA`, or why it could not be read as a whole (not UTF-8, not TOML).
enum Loaded {
    Config(InfraConfig),
    Unreadable(StartupError),
}

/// Why a command did not produce its result.
enum Failure {
    /// Exit 2, with this message.
    BadInput(String),
    /// The command could not run here (no thread or async runtime to be had): exit 1, with
    /// this message.
    Runtime(String),
    /// Writing the result failed.
    Output(std::io::Error),
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Self::Output(error)
    }
}

/// The status of a result, its error (if any) written to `err`.
fn finish(result: Result<Status, Failure>, err: &mut dyn Write) -> Status {
    match result {
        Ok(status) => status,
        Err(Failure::BadInput(message)) => {
            let _ = writeln!(err, "error: {message}");
            Status::BadInput
        }
        Err(Failure::Runtime(message)) => {
            let _ = writeln!(err, "error: {message}");
            Status::Problems
        }
        Err(Failure::Output(error)) => {
            // Standard output closed (a pipe to `head`): nothing more can be said there.
            let _ = writeln!(err, "error: cannot write the output: {error}");
            Status::Problems
        }
    }
}

fn openable(path: &Path, named_by: &str) -> Result<(), Failure> {
    match std::fs::File::open(path) {
        Ok(_) if path.is_dir() => Err(Failure::BadInput(format!(
            "the INFRA file `{}` (named by {named_by}) is a directory",
            path.display()
        ))),
        Ok(_) => Ok(()),
        Err(error) => Err(Failure::BadInput(format!(
            "cannot open the INFRA file `{}` (named by {named_by}): {error}",
            path.display()
        ))),
    }
}

/// Run `PROGRAM infra …` from the process's arguments, with the drivers `linked` by the
/// application, printing to standard output and standard error. Returns the exit status
/// (see the [module docs](self)). It blocks; an async `main` had better `.await`
/// [`run_async`].
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     sandloom_cli::run(sandloom_kernel::link_drivers!(/* sandloom_embedded */))
/// }
/// ```
pub fn run(linked: LinkedDrivers) -> ExitCode {
    run_from(linked, std::env::args_os())
}

/// [`run`] with explicit arguments, the program's name first (`["app", "infra", "check"]`).
///
/// ```
/// let status = sandloom_cli::run_from(sandloom_kernel::link_drivers!(), ["app", "infra", "explain", "B001"]);
/// assert_eq!(status, std::process::ExitCode::SUCCESS);
/// ```
pub fn run_from<I, T>(linked: LinkedDrivers, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    execute(linked, args, &mut stdout.lock(), &mut stderr.lock()).into()
}

/// [`run_from`] writing to `out` and `err`, returning the [`Status`]: for tests, and for
/// applications that show the output elsewhere.
///
/// ```
/// use sandloom_cli::{execute, Status};
///
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// let status = execute(sandloom_kernel::link_drivers!(), ["app", "infra", "frobnicate"], &mut out, &mut err);
/// assert_eq!(status, Status::BadInput);
/// assert!(String::from_utf8(err).unwrap().contains("unrecognized subcommand 'frobnicate'"));
/// ```
pub fn execute<I, T>(
    linked: LinkedDrivers,
    args: I,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Status
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Program::try_parse_from(args) {
        Ok(Program::Infra(command)) => command.execute(linked, out, err),
        Err(error) => parse_error(&error, out, err),
    }
}

/// [`run`] for an async `main`: reads the process's arguments, prints to standard output and
/// standard error, and runs `health` on the caller's runtime (see
/// [`InfraCommand::execute_async`]). [`run`] works there too, but blocks the runtime's thread
/// while `health` runs.
///
/// ```no_run
/// #[tokio::main]
/// async fn main() -> std::process::ExitCode {
///     let linked = sandloom_kernel::link_drivers!(/* sandloom_embedded, my_driver_crate */);
///     if std::env::args_os().nth(1).is_some_and(|arg| arg == "infra") {
///         return sandloom_cli::run_async(linked).await;
///     }
///     // ... the application itself ...
///     std::process::ExitCode::SUCCESS
/// }
/// ```
pub async fn run_async(linked: LinkedDrivers) -> ExitCode {
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    match Program::try_parse_from(std::env::args_os()) {
        Ok(Program::Infra(command)) => command.execute_async(linked, &mut out, &mut err).await,
        Err(error) => parse_error(&error, &mut out, &mut err),
    }
    .into()
}

/// clap's answer to arguments it could not take: usage errors, and `--help`.
fn parse_error(error: &clap::Error, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    // `--help` and `--version` are answers, not errors.
    let status = if error.use_stderr() {
        Status::BadInput
    } else {
        Status::Ok
    };
    let text = error.render().to_string();
    let _ = if error.use_stderr() {
        write!(err, "{text}")
    } else {
        write!(out, "{text}")
    };
    status
}
