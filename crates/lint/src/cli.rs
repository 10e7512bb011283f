//! The command line: `sandloom-lint [--manifest-path PATH] [--format text|json]`.

use std::io::Write;
use std::path::PathBuf;

/// The usage text, printed by `--help` and after a usage error.
pub const USAGE: &str = "\
usage: sandloom-lint [--manifest-path PATH] [--format text|json]

Checks a Sandloom workspace: module containment (C004), layering (L001), driver options
(O001, O002) and escape hatches (E001, E002); invalid roles are R001.

  --manifest-path PATH   the workspace's Cargo.toml (default: found from the current directory)
  --format text|json     output format (default: text)
  -h, --help             print this help
  -V, --version          print the version

exit status: 0 clean, 1 violations found, 2 the lint could not run";

/// How to print the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For people.
    Text,
    /// For tools.
    Json,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Lint a workspace.
    Lint {
        /// `--manifest-path`.
        manifest_path: Option<PathBuf>,
        /// `--format`.
        format: Format,
    },
    /// `--help`.
    Help,
    /// `--version`.
    Version,
}

/// Parse the arguments (without the program name).
///
/// ```
/// use sandloom_lint::cli::{parse, Command, Format};
/// let command = parse(["--format=json".to_owned()]).unwrap();
/// assert_eq!(command, Command::Lint { manifest_path: None, format: Format::Json });
/// ```
///
/// # Errors
///
/// A message for an unknown argument, a missing value or an unknown format.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut manifest_path = None;
    let mut format = Format::Text;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--manifest-path" => manifest_path = Some(PathBuf::from(value("--manifest-path")?)),
            "--format" => {
                format = match value("--format")?.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    other => return Err(format!("unknown format `{other}`: use text or json")),
                };
            }
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    Ok(Command::Lint {
        manifest_path,
        format,
    })
}

/// Run the command line and return the exit status: 0 clean, 1 violations, 2 could not run.
pub fn run(
    args: impl IntoIterator<Item = String>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let (manifest_path, format) = match parse(args) {
        Ok(Command::Lint {
            manifest_path,
            format,
        }) => (manifest_path, format),
        Ok(Command::Help) => {
            let _ = writeln!(stdout, "{USAGE}");
            return 0;
        }
        Ok(Command::Version) => {
            let _ = writeln!(stdout, "sandloom-lint {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(message) => {
            let _ = writeln!(stderr, "sandloom-lint: {message}\n\n{USAGE}");
            return 2;
        }
    };
    match crate::lint(manifest_path.as_deref()) {
        Ok(report) => {
            let text = match format {
                Format::Text => report.to_text(),
                Format::Json => report.to_json(),
            };
            let _ = writeln!(stdout, "{}", text.trim_end());
            u8::from(!report.is_clean())
        }
        Err(error) => {
            let _ = writeln!(stderr, "sandloom-lint: error: {error}");
            if format == Format::Json {
                let json = serde_json::json!({
                    "tool": "sandloom-lint",
                    "error": error.to_string(),
                });
                let _ = writeln!(stdout, "{json}");
            }
            2
        }
    }
}
