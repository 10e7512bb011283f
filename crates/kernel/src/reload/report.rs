//! What a reload did, instance by instance, and the error of a refused one.

use std::fmt;

use crate::error::Problem;

/// What a reload did to one instance.
///
/// ```
/// use sandloom_kernel::reload::Outcome;
/// assert_eq!(Outcome::Kept.as_str(), "kept");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Configured the same: untouched.
    Kept,
    /// A new instance, built and health-checked beside the old one, serves every handle; the
    /// old one was drained and stopped.
    Replaced {
        /// What differed (keys, never values).
        reasons: Vec<String>,
    },
    /// Configured again after a reload removed it: a new instance serves its handles.
    Added,
    /// No longer configured: drained and stopped. Its handles stay valid and answer `Stopped`.
    Removed,
    /// The change was refused; the instance keeps serving as before (or, when the whole reload
    /// was refused for another instance's problem, its change was not applied).
    Refused {
        /// The codes of the problems, empty when another instance's problem refused the reload.
        codes: Vec<&'static str>,
        /// What was wrong, one line per problem.
        problems: Vec<String>,
    },
}

impl Outcome {
    /// A word for logs and JSON: `kept`, `replaced`, `added`, `removed` or `refused`.
    ///
    /// ```
    /// use sandloom_kernel::reload::Outcome;
    /// assert_eq!(Outcome::Removed.as_str(), "removed");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Kept => "kept",
            Self::Replaced { .. } => "replaced",
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Refused { .. } => "refused",
        }
    }
}

/// One instance in a [`ReloadReport`].
///
/// ```
/// use sandloom_kernel::reload::{InstanceReload, Outcome};
/// let line = InstanceReload { capability: "cache".into(), instance: "default".into(), driver: "memory".into(), outcome: Outcome::Kept, version: 1 };
/// assert_eq!(line.to_string(), "cache.default (memory): kept, configuration version 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceReload {
    /// The capability (`cache`).
    pub capability: String,
    /// The instance (`default`).
    pub instance: String,
    /// The driver serving it after the reload (the old one when refused or removed).
    pub driver: String,
    /// What happened.
    pub outcome: Outcome,
    /// The configuration version it runs after the reload: 1 at startup, one more at each
    /// replacement.
    pub version: u64,
}

impl fmt::Display for InstanceReload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{} ({}): {}, configuration version {}",
            self.capability,
            self.instance,
            self.driver,
            self.outcome.as_str(),
            self.version
        )?;
        match &self.outcome {
            Outcome::Replaced { reasons } => write!(f, " ({})", reasons.join("; ")),
            Outcome::Refused { problems, .. } if !problems.is_empty() => {
                write!(f, " ({})", problems.join("; "))
            }
            _ => Ok(()),
        }
    }
}

/// What a reload did: every instance of the old and the new configuration.
///
/// ```
/// use sandloom_kernel::reload::ReloadReport;
/// let report = ReloadReport::default();
/// assert!(!report.applied);
/// assert_eq!(report.to_string(), "reload refused: 0 instances\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Whether the new configuration now runs (`false`: nothing changed).
    pub applied: bool,
    /// Per instance, sorted by capability and instance.
    pub instances: Vec<InstanceReload>,
    /// Operations still in flight on old instances when their drain ran out of
    /// `stop_timeout_ms` (they were stopped under them; logged at WARN).
    pub left_in_flight: usize,
}

impl ReloadReport {
    /// The line of `capability.instance`, if either configuration has it.
    ///
    /// ```
    /// use sandloom_kernel::reload::ReloadReport;
    /// assert!(ReloadReport::default().instance("cache", "default").is_none());
    /// ```
    pub fn instance(&self, capability: &str, instance: &str) -> Option<&InstanceReload> {
        self.instances
            .iter()
            .find(|line| line.capability == capability && line.instance == instance)
    }
}

impl fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.instances.len();
        writeln!(
            f,
            "reload {}: {count} instance{}",
            if self.applied { "applied" } else { "refused" },
            if count == 1 { "" } else { "s" }
        )?;
        for line in &self.instances {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

/// A refused reload: every problem found, coded and located, and the report of what was kept.
/// Nothing changed: every instance keeps serving as before.
///
/// ```
/// use sandloom_kernel::reload::ReloadError;
/// use sandloom_kernel::{Location, Problem};
///
/// let err = ReloadError::new(vec![Problem::config(Location::Code, "why", "what to do")]);
/// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
/// assert!(err.to_string().starts_with("Sandloom refused the reload: 1 problem found. Every instance keeps serving as before."));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadError {
    problems: Vec<Problem>,
    report: ReloadReport,
}

impl ReloadError {
    /// A refusal for these problems, with an empty report.
    ///
    /// ```
    /// use sandloom_kernel::reload::ReloadError;
    /// assert!(ReloadError::new(Vec::new()).problems().is_empty());
    /// ```
    pub fn new(problems: Vec<Problem>) -> Self {
        Self {
            problems,
            report: ReloadReport::default(),
        }
    }

    pub(crate) fn with_report(problems: Vec<Problem>, report: ReloadReport) -> Self {
        Self { problems, report }
    }

    /// Every problem.
    ///
    /// ```
    /// use sandloom_kernel::reload::ReloadError;
    /// use sandloom_kernel::Problem;
    /// assert_eq!(ReloadError::new(vec![Problem::NoRuntime]).problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The code of every problem, in order.
    ///
    /// ```
    /// use sandloom_kernel::reload::ReloadError;
    /// use sandloom_kernel::Problem;
    /// assert_eq!(ReloadError::new(vec![Problem::NoRuntime]).codes(), ["SANDLOOM-B001"]);
    /// ```
    pub fn codes(&self) -> Vec<&'static str> {
        self.problems.iter().map(Problem::code).collect()
    }

    /// What the reload would have done, each changed instance marked refused.
    ///
    /// ```
    /// use sandloom_kernel::reload::ReloadError;
    /// assert!(!ReloadError::new(Vec::new()).report().applied);
    /// ```
    pub fn report(&self) -> &ReloadReport {
        &self.report
    }
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        writeln!(
            f,
            "Sandloom refused the reload: {count} problem{} found. Every instance keeps serving as before.",
            if count == 1 { "" } else { "s" }
        )?;
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

impl std::error::Error for ReloadError {}
