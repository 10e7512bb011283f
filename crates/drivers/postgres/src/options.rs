//! The options of `taskqueue.postgres`, their defaults and their validation.

use std::time::Duration;

use sandloom_driverkit::{DriverError, Secret, SecretUrl};
use serde::Deserialize;

use crate::address::Target;

/// Longest table name: the driver appends `_schema`, `_ready_idx`, … and PostgreSQL cuts
/// identifiers at 63 bytes.
const MAX_TABLE_LEN: usize = 50;
/// Longest `namespace`: it is stored in every row.
const MAX_NAMESPACE_LEN: usize = 200;
/// Upper bound of every time option: a day, far beyond any sensible lease or poll.
const MAX_MS: u64 = 24 * 3600 * 1000;
/// Upper bound of `dedupe_window_ms`: 30 days.
const MAX_DEDUPE_WINDOW_MS: u64 = 30 * MAX_MS;

/// Options of `taskqueue.postgres`.
///
/// ```toml
/// [taskqueue.default]
/// driver = "postgres"
/// url = "postgres://app@db:5432/app" # default postgres://postgres@127.0.0.1:5432/postgres
/// password = "…"                 # or in the URL; better: SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD
/// schema = "jobs"                # default: the connection's search_path (usually `public`)
/// table = "sandloom_tasks"       # default sandloom_tasks
/// namespace = "billing"          # default "default": applications sharing a table stay apart
/// visibility_timeout_ms = 30000  # default 30 000
/// max_attempts = 5               # default 5
/// pool_size = 16                 # default 16
/// connect_timeout_ms = 5000      # default 5 000
/// operation_timeout_ms = 10000   # default 10 000
/// poll_interval_ms = 200         # default 200
/// dedupe_window_ms = 86400000    # default 86 400 000 (24 hours)
/// ```
///
/// `Debug` never shows the password, whether it is in `url` or in `password`:
///
/// ```
/// use sandloom_driver_postgres::PostgresTaskQueueOptions;
///
/// let options = PostgresTaskQueueOptions {
///     url: "postgres://app:hunter2@db:5432/app".into(),
///     password: Some("hunter2".into()),
///     ..Default::default()
/// };
/// let shown = format!("{options:?}");
/// assert!(shown.contains("postgres://***@db:5432/app"));
/// assert!(shown.contains("password: Some(<redacted>)"));
/// assert!(!shown.contains("hunter2"));
/// assert_eq!(PostgresTaskQueueOptions::default().table, "sandloom_tasks");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PostgresTaskQueueOptions {
    /// The server: a URL (`postgres://user[:password]@host[:port]/database[?param=value]`) or a
    /// libpq key/value string (`host=… user=… dbname=…`). TLS is not supported (`sslmode` must
    /// be `disable` or `prefer`, which then connects without TLS).
    pub url: SecretUrl,
    /// The password, when it is not in `url`; overrides one that is. Never shown.
    pub password: Option<Secret<String>>,
    /// The schema of the table, created when missing; `None` uses the connection's
    /// `search_path` (usually `public`). A lowercase identifier.
    pub schema: Option<String>,
    /// The table holding every task of every queue (created or migrated by `start`). A
    /// lowercase identifier of at most 50 characters.
    pub table: String,
    /// Partitions the table: instances with different namespaces never see each other's
    /// queues, so several applications (or test runs) can share one table. Not empty.
    pub namespace: String,
    /// How long a reserved task stays invisible to other consumers before it is delivered
    /// again, in milliseconds. 1 to 86 400 000.
    pub visibility_timeout_ms: u64,
    /// How many deliveries a task gets: after the last one is nacked or times out, the task is
    /// dead-lettered. At least 1.
    pub max_attempts: u32,
    /// Connections in the pool. 1 to 1000.
    pub pool_size: usize,
    /// Budget for opening one connection (TCP and PostgreSQL handshake), in milliseconds; also
    /// bounds `start`'s first connection. 1 to 86 400 000.
    pub connect_timeout_ms: u64,
    /// Budget for one operation's statement (and for waiting on a free connection), in
    /// milliseconds; past it the operation answers `Timeout`. 1 to 86 400 000.
    pub operation_timeout_ms: u64,
    /// How often a waiting `reserve` looks for a task enqueued by another process, in
    /// milliseconds (a task enqueued or nacked through this instance wakes one waiter of its
    /// queue at once). 1 to 86 400 000.
    pub poll_interval_ms: u64,
    /// How long the idempotency key of an acked task is remembered (feature `dedupe`), in
    /// milliseconds: until then an enqueue with the key returns the acked task's id and creates
    /// nothing; afterwards it creates a new task. The acked task stays in the table, without its
    /// payload, for that long. 0 forgets the key as soon as the task is acked; keys of tasks
    /// still in the queue, dead letters included, are always remembered. 0 to 2 592 000 000
    /// (30 days).
    pub dedupe_window_ms: u64,
}

impl Default for PostgresTaskQueueOptions {
    fn default() -> Self {
        Self {
            url: "postgres://postgres@127.0.0.1:5432/postgres".into(),
            password: None,
            schema: None,
            table: "sandloom_tasks".to_owned(),
            namespace: "default".to_owned(),
            visibility_timeout_ms: 30_000,
            max_attempts: 5,
            pool_size: 16,
            connect_timeout_ms: 5_000,
            operation_timeout_ms: 10_000,
            poll_interval_ms: 200,
            dedupe_window_ms: MAX_MS,
        }
    }
}

impl PostgresTaskQueueOptions {
    /// Check every option; the error names the option and the rule it breaks.
    pub(crate) fn check(&self) -> Result<Target, DriverError> {
        check_identifier("table", &self.table, MAX_TABLE_LEN)?;
        if let Some(schema) = &self.schema {
            check_identifier("schema", schema, 63)?;
        }
        if self.namespace.is_empty()
            || self.namespace.len() > MAX_NAMESPACE_LEN
            || self.namespace.contains('\0')
        {
            return Err(DriverError::new(format!(
                "`namespace` must be 1 to {MAX_NAMESPACE_LEN} bytes without NUL characters"
            )));
        }
        for (name, value) in [
            ("visibility_timeout_ms", self.visibility_timeout_ms),
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("operation_timeout_ms", self.operation_timeout_ms),
            ("poll_interval_ms", self.poll_interval_ms),
        ] {
            if value == 0 || value > MAX_MS {
                return Err(DriverError::new(format!(
                    "`{name}` must be between 1 and {MAX_MS} (a day), not {value}"
                )));
            }
        }
        if self.dedupe_window_ms > MAX_DEDUPE_WINDOW_MS {
            return Err(DriverError::new(format!(
                "`dedupe_window_ms` must be between 0 and {MAX_DEDUPE_WINDOW_MS} (30 days), not {}",
                self.dedupe_window_ms
            )));
        }
        if self.max_attempts == 0 || i32::try_from(self.max_attempts).is_err() {
            return Err(DriverError::new(format!(
                "`max_attempts` must be between 1 and {}, not {}",
                i32::MAX,
                self.max_attempts
            )));
        }
        if self.pool_size == 0 || self.pool_size > 1000 {
            return Err(DriverError::new(format!(
                "`pool_size` must be between 1 and 1000, not {}",
                self.pool_size
            )));
        }
        Target::parse(
            self.url.expose(),
            self.password
                .as_ref()
                .map(|password| password.expose().as_str()),
        )
    }

    pub(crate) fn visibility_timeout(&self) -> Duration {
        Duration::from_millis(self.visibility_timeout_ms)
    }

    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    pub(crate) fn operation_timeout(&self) -> Duration {
        Duration::from_millis(self.operation_timeout_ms)
    }

    pub(crate) fn poll_interval(&self) -> Duration {
        Duration::from_millis(self.poll_interval_ms)
    }

    pub(crate) fn dedupe_window(&self) -> Duration {
        Duration::from_millis(self.dedupe_window_ms)
    }
}

/// A lowercase SQL identifier: it is put into statements quoted, but refusing everything else
/// keeps names predictable in `psql` and impossible to use for injection.
pub(crate) fn check_identifier(option: &str, value: &str, max: usize) -> Result<(), DriverError> {
    let mut chars = value.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && value.len() <= max;
    if valid {
        Ok(())
    } else {
        Err(DriverError::new(format!(
            "`{option}` must be a lowercase identifier (a-z, 0-9, _, not starting with a digit) of at most {max} characters, not {value:?}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(options: &PostgresTaskQueueOptions) -> String {
        match options.check() {
            Ok(_) => panic!("accepted {options:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn defaults_are_valid() {
        let target = PostgresTaskQueueOptions::default().check().unwrap();
        assert_eq!(target.redacted(), "postgres://***@127.0.0.1:5432/postgres");
    }

    #[test]
    fn bad_values_are_refused_naming_the_option() {
        let base = PostgresTaskQueueOptions::default;
        for (options, option) in [
            (
                PostgresTaskQueueOptions {
                    table: "Tasks".into(),
                    ..base()
                },
                "`table`",
            ),
            (
                PostgresTaskQueueOptions {
                    table: "t; drop".into(),
                    ..base()
                },
                "`table`",
            ),
            (
                PostgresTaskQueueOptions {
                    table: "1t".into(),
                    ..base()
                },
                "`table`",
            ),
            (
                PostgresTaskQueueOptions {
                    table: "t".repeat(51),
                    ..base()
                },
                "`table`",
            ),
            (
                PostgresTaskQueueOptions {
                    schema: Some(String::new()),
                    ..base()
                },
                "`schema`",
            ),
            (
                PostgresTaskQueueOptions {
                    namespace: String::new(),
                    ..base()
                },
                "`namespace`",
            ),
            (
                PostgresTaskQueueOptions {
                    visibility_timeout_ms: 0,
                    ..base()
                },
                "`visibility_timeout_ms`",
            ),
            (
                PostgresTaskQueueOptions {
                    poll_interval_ms: MAX_MS + 1,
                    ..base()
                },
                "`poll_interval_ms`",
            ),
            (
                PostgresTaskQueueOptions {
                    dedupe_window_ms: MAX_DEDUPE_WINDOW_MS + 1,
                    ..base()
                },
                "`dedupe_window_ms`",
            ),
            (
                PostgresTaskQueueOptions {
                    max_attempts: 0,
                    ..base()
                },
                "`max_attempts`",
            ),
            (
                PostgresTaskQueueOptions {
                    max_attempts: u32::MAX,
                    ..base()
                },
                "`max_attempts`",
            ),
            (
                PostgresTaskQueueOptions {
                    pool_size: 0,
                    ..base()
                },
                "`pool_size`",
            ),
            (
                PostgresTaskQueueOptions {
                    url: "mysql://x".into(),
                    ..base()
                },
                "`url`",
            ),
        ] {
            let message = refused(&options);
            assert!(message.contains(option), "{message}");
        }
    }

    #[test]
    fn a_schema_and_long_table_names_up_to_the_limit_are_accepted() {
        let options = PostgresTaskQueueOptions {
            schema: Some("jobs_2".into()),
            table: "t".repeat(50),
            ..Default::default()
        };
        assert!(options.check().is_ok());
    }
}
