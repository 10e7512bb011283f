//! What started: a value for programs, a table for people, events for `tracing`.

use std::fmt;

use semver::Version;

use crate::config::Environment;
use crate::registry::Stability;

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
            tracing::info!(
                target: "sandloom",
                capability = %line.capability,
                instance = %line.instance,
                driver = %line.driver,
                package = line.package,
                contract_version = %line.contract_version,
                features = ?line.features,
                stability = %line.stability,
                start_attempts = line.start_attempts,
                "capability instance ready"
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
