//! What started: a value for programs, a table for people, events for `tracing`.

use std::fmt;
use std::sync::Arc;

use semver::Version;

use crate::config::Environment;
use crate::registry::{DriverEntry, Stability};

/// One started (or, for `check`, resolved) instance.
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel, ReportLine};
///
/// fn describe(line: &ReportLine) -> String {
///     let (capability, instance, driver) = (&line.capability, &line.instance, &line.driver);
///     format!("{capability}.{instance}: {driver} from {} ({})", line.package, line.stability)
/// }
///
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let report = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap();
/// // Nothing is configured here; with `[cache.default]` and `sandloom_embedded` linked, this
/// // prints "cache.default: memory from sandloom-embedded (stable)".
/// for line in &report.lines {
///     println!("{}", describe(line));
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReportLine {
    /// The capability.
    pub capability: String,
    /// The instance.
    pub instance: String,
    /// The driver name.
    pub driver: String,
    /// The driver's package.
    pub package: &'static str,
    /// The contract version the driver implements.
    pub contract_version: Version,
    /// The features it declares for its options.
    pub features: Vec<&'static str>,
    /// The capability's stability.
    pub stability: Stability,
    /// How many times `start` was called before it succeeded: 1, or more when the backend was
    /// not ready yet and `start_wait_ms` let startup wait for it. 0 in a dry run
    /// ([`Kernel::check`](crate::Kernel::check)), which starts nothing.
    pub start_attempts: u32,
}

/// Every instance, sorted by capability then instance.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let kernel = sandloom_kernel::Kernel::new(
///     sandloom_kernel::InfraConfig::from_toml_str("", "empty").unwrap(),
///     sandloom_kernel::link_drivers!(),
/// );
/// let report = kernel.check().unwrap();
/// assert!(report.lines.is_empty());
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartupReport {
    /// The environment.
    pub environment: Environment,
    /// Where the configuration came from.
    pub origin: String,
    /// One line per instance.
    pub lines: Vec<ReportLine>,
}

impl StartupReport {
    /// Emit one `tracing` event per instance (target `sandloom`, level INFO). `start` already
    /// does this once; call it again to log the report elsewhere, such as after a reload.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let report = Kernel::new(config, sandloom_kernel::link_drivers!()).check().unwrap();
    /// report.trace(); // a no-op without a `tracing` subscriber
    /// assert!(report.to_string().starts_with("Sandloom infrastructure (development environment, from infra.toml):"));
    /// ```
    pub fn trace(&self) {
        for line in &self.lines {
            trace_line(
                (&line.capability, &line.instance, &line.driver),
                line.package,
                &line.contract_version,
                &line.features,
                line.stability,
                line.start_attempts,
            );
        }
    }
}

/// The event of one line: [`StartupReport::trace`]'s, and startup's from its [`Line`]s.
fn trace_line(
    (capability, instance, driver): (&str, &str, &str),
    package: &'static str,
    contract_version: &Version,
    features: &[&'static str],
    stability: Stability,
    start_attempts: u32,
) {
    tracing::info!(
        target: "sandloom",
        capability = %capability,
        instance = %instance,
        driver = %driver,
        package = package,
        contract_version = %contract_version,
        features = ?features,
        stability = %stability,
        start_attempts = start_attempts,
        "capability instance ready"
    );
}

/// A line of the report as startup keeps it: the linked entry and the instance's shared name,
/// with nothing copied. The [`ReportLine`] (three `String`s and a version) is made only when
/// someone asks for the report ([`ReportParts::report`]); making it at every start was a tenth of
/// startup's allocations (`BENCHMARKS.md`, issue 27).
pub(crate) struct Line {
    pub(crate) entry: &'static DriverEntry,
    pub(crate) stability: Stability,
    /// The instance's name, shared with its driver's records (`lifecycle::Attempted`).
    pub(crate) instance: Arc<str>,
    pub(crate) features: Vec<&'static str>,
    pub(crate) start_attempts: u32,
}

impl Line {
    fn report_line(&self) -> ReportLine {
        ReportLine {
            capability: self.entry.capability.to_owned(),
            instance: self.instance.to_string(),
            driver: self.entry.name.to_owned(),
            package: self.entry.package,
            contract_version: self.entry.contract_version.clone(),
            features: self.features.clone(),
            stability: self.stability,
            start_attempts: self.start_attempts,
        }
    }
}

/// The lines of a startup, in start order, and what the report says besides them.
pub(crate) struct ReportParts {
    pub(crate) environment: Environment,
    /// The configuration's, shared.
    pub(crate) origin: std::sync::Arc<str>,
    pub(crate) lines: Vec<Line>,
}

impl ReportParts {
    /// The report, made now.
    pub(crate) fn report(&self) -> StartupReport {
        StartupReport {
            environment: self.environment,
            origin: String::from(&*self.origin),
            lines: self.lines.iter().map(Line::report_line).collect(),
        }
    }

    /// What [`StartupReport::trace`] of [`report`](Self::report) emits, without making it.
    pub(crate) fn trace(&self) {
        for line in &self.lines {
            trace_line(
                (line.entry.capability, &line.instance, line.entry.name),
                line.entry.package,
                &line.entry.contract_version,
                &line.features,
                line.stability,
                line.start_attempts,
            );
        }
    }
}

impl fmt::Display for StartupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Sandloom infrastructure ({} environment, from {}):",
            self.environment, self.origin
        )?;
        let rows: Vec<[String; 5]> = self
            .lines
            .iter()
            .map(|line| {
                [
                    format!("{}.{}", line.capability, line.instance),
                    line.driver.clone(),
                    line.package.to_owned(),
                    line.contract_version.to_string(),
                    if line.features.is_empty() {
                        "-".to_owned()
                    } else {
                        line.features.join(",")
                    } + if line.stability == Stability::Experimental {
                        " (experimental)"
                    } else {
                        ""
                    },
                ]
            })
            .collect();
        let header = ["instance", "driver", "package", "contract", "features"].map(str::to_owned);
        let mut widths = header.clone().map(|h| h.len());
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.len());
            }
        }
        for row in std::iter::once(&header).chain(&rows) {
            write!(f, " ")?;
            for (cell, width) in row.iter().zip(widths) {
                write!(f, " {cell:<width$}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
