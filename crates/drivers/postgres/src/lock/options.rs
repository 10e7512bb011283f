//! The options of `lock.postgres`, their defaults and their validation.

use std::time::Duration;

use sandloom_driverkit::{DriverError, Secret, SecretUrl};
use serde::Deserialize;

use crate::address::Target;
use crate::options::check_identifier;

/// Longest table name: the driver appends `_schema` and PostgreSQL cuts identifiers at 63 bytes.
const MAX_TABLE_LEN: usize = 50;
/// Longest `namespace`: it is stored in every row.
const MAX_NAMESPACE_LEN: usize = 200;
/// Upper bound of the time options: a day.
const MAX_MS: u64 = 24 * 3600 * 1000;

/// Options of `lock.postgres`.
///
/// ```toml
/// [lock.default]
/// driver = "postgres"
/// url = "postgres://app@db:5432/app" # default postgres://postgres@127.0.0.1:5432/postgres
/// password = "…"                 # or in the URL; better: SANDLOOM__LOCK__DEFAULT__PASSWORD
/// schema = "locks"               # default: the connection's search_path (usually `public`)
/// table = "sandloom_locks"       # default sandloom_locks
/// namespace = "billing"          # default "default": applications sharing a table stay apart
/// pool_size = 8                  # default 8
/// connect_timeout_ms = 5000      # default 5 000
/// operation_timeout_ms = 10000   # default 10 000
/// ```
///
/// `Debug` never shows the password, whether it is in `url` or in `password`:
///
/// ```
/// use sandloom_driver_postgres::PostgresLockOptions;
///
/// let options = PostgresLockOptions {
///     url: "postgres://app:hunter2@db:5432/app".into(),
///     password: Some("hunter2".into()),
///     ..Default::default()
/// };
/// let shown = format!("{options:?}");
/// assert!(shown.contains("postgres://***@db:5432/app"));
/// assert!(!shown.contains("hunter2"));
/// assert_eq!(PostgresLockOptions::default().table, "sandloom_locks");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PostgresLockOptions {
    /// The server: a URL (`postgres://user[:password]@host[:port]/database[?param=value]`) or a
    /// libpq key/value string. TLS is not supported (`sslmode` `disable` or `prefer`).
    pub url: SecretUrl,
    /// The password, when it is not in `url`; overrides one that is. Never shown.
    pub password: Option<Secret<String>>,
    /// The schema of the table, created when missing; `None` uses the connection's
    /// `search_path`. A lowercase identifier.
    pub schema: Option<String>,
    /// The lease table (created or migrated by `start`). A lowercase identifier of at most 50
    /// characters; its release notifications go to the channel of the same name.
    pub table: String,
    /// Partitions the table: instances with different namespaces never see each other's
    /// locks. Not empty.
    pub namespace: String,
    /// Connections in the pool (each `acquire_wait` that has to wait opens one more, for
    /// `LISTEN`). 1 to 1000.
    pub pool_size: usize,
    /// Budget for opening one connection, in milliseconds; also bounds `start`'s first
    /// connection. 1 to 86 400 000.
    pub connect_timeout_ms: u64,
    /// Budget for one operation's statement (and for waiting on a free connection), in
    /// milliseconds. 1 to 86 400 000.
    pub operation_timeout_ms: u64,
}

impl Default for PostgresLockOptions {
    fn default() -> Self {
        Self {
            url: "postgres://postgres@127.0.0.1:5432/postgres".into(),
            password: None,
            schema: None,
            table: "sandloom_locks".to_owned(),
            namespace: "default".to_owned(),
            pool_size: 8,
            connect_timeout_ms: 5_000,
            operation_timeout_ms: 10_000,
        }
    }
}

impl PostgresLockOptions {
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
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("operation_timeout_ms", self.operation_timeout_ms),
        ] {
            if value == 0 || value > MAX_MS {
                return Err(DriverError::new(format!(
                    "`{name}` must be between 1 and {MAX_MS} (a day), not {value}"
                )));
            }
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

    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    pub(crate) fn operation_timeout(&self) -> Duration {
        Duration::from_millis(self.operation_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_bad_values_are_refused_naming_the_option() {
        assert!(PostgresLockOptions::default().check().is_ok());
        let base = PostgresLockOptions::default;
        for (options, option) in [
            (
                PostgresLockOptions {
                    table: "Locks".into(),
                    ..base()
                },
                "`table`",
            ),
            (
                PostgresLockOptions {
                    namespace: String::new(),
                    ..base()
                },
                "`namespace`",
            ),
            (
                PostgresLockOptions {
                    pool_size: 0,
                    ..base()
                },
                "`pool_size`",
            ),
            (
                PostgresLockOptions {
                    operation_timeout_ms: 0,
                    ..base()
                },
                "`operation_timeout_ms`",
            ),
        ] {
            let message = match options.check() {
                Ok(_) => panic!("accepted {options:?}"),
                Err(err) => err.to_string(),
            };
            assert!(message.contains(option), "{message:?} lacks {option}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        use serde::de::value::{Error, MapDeserializer};
        let entries = [("url", "postgres://x"), ("max_attempts", "5")];
        let deserializer = MapDeserializer::<_, Error>::new(entries.into_iter());
        let err = PostgresLockOptions::deserialize(deserializer).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `max_attempts`"),
            "{err}"
        );
    }
}
