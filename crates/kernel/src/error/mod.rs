//! The errors the kernel returns: a refused startup and an unclean shutdown, each listing every
//! coded problem it found ([`problem`]), whose causes, where one code covers several, are
//! reasons ([`reason`]). The codes themselves are in [`crate::codes`].
//!
//! Nothing here reads `config`: problems carry a [`Location`](crate::Location), which has its
//! own home, and `config` orders problems by the `INFRA` they concern.

mod attempts;
mod problem;
mod reason;

use std::fmt;

pub use attempts::StartAttempts;
pub use problem::Problem;
pub use reason::{ConflictKind, UnusableReason};

/// Startup refused (or a dry-run check failed, or `INFRA` could not be read): every problem
/// found, in a stable order.
///
/// Problems come ordered by where they are configured (file, line, column; then override
/// variables), and those with no place in `INFRA` after them, in a stable order.
///
/// ```
/// use sandloom_kernel::{InfraConfig, StartupError};
/// let err: StartupError = InfraConfig::from_toml_str("[cache", "infra.toml").unwrap_err();
/// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
/// println!("{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupError {
    found: Problems<Phase>,
}

/// Shutdown finished, but some drivers did not stop cleanly (SANDLOOM-B030). Every other driver
/// was still stopped.
///
/// ```
/// # async fn example(running: sandloom_kernel::Running) {
/// if let Err(err) = running.shutdown().await {
///     assert!(err.codes().iter().all(|code| *code == "SANDLOOM-B030"));
///     eprintln!("{err}"); // "Sandloom did not shut down cleanly: 1 problem found. …"
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownError {
    found: Problems<Shutdown>,
}

/// What both errors are: the problems found, and what found them, which heads the report.
///
/// One private type rather than two copies, so that the two errors cannot drift apart in how
/// they list, count or print problems; only their headings differ.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Problems<H> {
    problems: Vec<Problem>,
    heading: H,
}

/// The first line of a report of problems.
trait Heading {
    /// The heading, given `found` ("1 problem found", "3 problems found").
    fn heading(&self, found: &str) -> String;
}

/// What found the problems of a [`StartupError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `Kernel::start` (or anything an application does on the way to it).
    Start,
    /// `Kernel::check`, a dry run: nothing was refused, nothing started.
    Check,
    /// Reading `INFRA` failed as a whole (an unreadable file, not UTF-8, not TOML).
    Read,
}

impl Heading for Phase {
    fn heading(&self, found: &str) -> String {
        match self {
            Self::Start => format!("Sandloom refused to start: {found}."),
            Self::Check => format!("Sandloom check (a dry run; nothing was started): {found}."),
            Self::Read => format!("Sandloom cannot read INFRA: {found}."),
        }
    }
}

/// What found the problems of a [`ShutdownError`]: shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shutdown;

impl Heading for Shutdown {
    fn heading(&self, found: &str) -> String {
        format!("Sandloom did not shut down cleanly: {found}.")
    }
}

impl<H> Problems<H> {
    fn codes(&self) -> Vec<&'static str> {
        self.problems.iter().map(Problem::code).collect()
    }
}

impl<H: Heading> fmt::Display for Problems<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        let found = format!("{count} problem{} found", if count == 1 { "" } else { "s" });
        writeln!(f, "{}", self.heading.heading(&found))?;
        for (index, problem) in self.problems.iter().enumerate() {
            write!(
                f,
                "\n{}. [{}]\n    Description: {}\n    Action: {}\n",
                index + 1,
                problem.code(),
                problem.description(),
                problem.action()
            )?;
        }
        Ok(())
    }
}

impl StartupError {
    /// An error of these problems (for tests of code that reports startup errors).
    ///
    /// ```
    /// use sandloom_kernel::{Problem, StartupError};
    ///
    /// let err = StartupError::new(vec![Problem::NoRuntime]);
    /// assert!(err.to_string().starts_with("Sandloom refused to start: 1 problem found."));
    /// ```
    pub fn new(problems: Vec<Problem>) -> Self {
        Self::found_by(Phase::Start, problems)
    }

    /// The problems a dry run found.
    pub(crate) fn check(problems: Vec<Problem>) -> Self {
        Self::found_by(Phase::Check, problems)
    }

    /// `INFRA` could not be read at all.
    pub(crate) fn read(problems: Vec<Problem>) -> Self {
        Self::found_by(Phase::Read, problems)
    }

    fn found_by(heading: Phase, problems: Vec<Problem>) -> Self {
        Self {
            found: Problems { problems, heading },
        }
    }

    /// Every problem.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("stop_timeout_ms = \"soon\"", "infra.toml").unwrap();
    /// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap_err();
    /// for problem in err.problems() {
    ///     eprintln!("{}: {}\n  -> {}", problem.code(), problem.description(), problem.action());
    /// }
    /// assert_eq!(err.problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.found.problems
    }

    /// The code of every problem, in order.
    ///
    /// ```
    /// use sandloom_kernel::{Problem, StartupError};
    /// assert_eq!(StartupError::new(vec![Problem::NoRuntime]).codes(), ["SANDLOOM-B001"]);
    /// ```
    pub fn codes(&self) -> Vec<&'static str> {
        self.found.codes()
    }
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.found.fmt(f)
    }
}

impl std::error::Error for StartupError {}

impl ShutdownError {
    /// An error of these problems (for tests of code that reports shutdown errors).
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem, ShutdownError};
    ///
    /// let problem = Problem::config(Location::Code, "example", "none");
    /// let err = ShutdownError::new(vec![problem]);
    /// assert!(err.to_string().starts_with("Sandloom did not shut down cleanly: 1 problem found."));
    /// ```
    pub fn new(problems: Vec<Problem>) -> Self {
        Self {
            found: Problems {
                problems,
                heading: Shutdown,
            },
        }
    }

    /// Every problem.
    ///
    /// ```
    /// use sandloom_kernel::{Problem, ShutdownError};
    ///
    /// fn failed_instances(err: &ShutdownError) -> Vec<String> {
    ///     err.problems()
    ///         .iter()
    ///         .filter_map(|problem| match problem {
    ///             Problem::StopFailed { capability, instance, .. } => Some(format!("{capability}.{instance}")),
    ///             _ => None,
    ///         })
    ///         .collect()
    /// }
    /// assert!(failed_instances(&ShutdownError::new(Vec::new())).is_empty());
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.found.problems
    }

    /// The code of every problem, in order.
    ///
    /// ```
    /// use sandloom_kernel::{Location, Problem, ShutdownError};
    /// let err = ShutdownError::new(vec![Problem::config(Location::Code, "example", "none")]);
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// ```
    pub fn codes(&self) -> Vec<&'static str> {
        self.found.codes()
    }
}

impl fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.found.fmt(f)
    }
}

impl std::error::Error for ShutdownError {}
