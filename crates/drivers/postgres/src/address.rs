//! The server to connect to: the parsed connection settings and the address to name in
//! messages, with the password replaced by `***`.

use std::fmt::Write as _;

use sandloom_driverkit::DriverError;
use tokio_postgres::config::{Host, SslMode};

/// Parsed `url` (+ `password`), and how to name it to people.
#[derive(Clone)]
pub(crate) struct Target {
    config: tokio_postgres::Config,
    redacted: String,
}

impl Target {
    /// Parse without I/O. The parser's own message is not passed on: for a malformed
    /// key/value string it may quote a character of the password.
    pub(crate) fn parse(url: &str, password: Option<&str>) -> Result<Self, DriverError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|_| {
            DriverError::new(
                "`url` is not a PostgreSQL connection string: expected postgres://user[:password]@host[:port]/database[?param=value] or `host=… user=… dbname=…`",
            )
        })?;
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(DriverError::new(
                "`url` names no host: expected postgres://user@host[:port]/database",
            ));
        }
        if config.get_user().is_none() {
            return Err(DriverError::new(
                "`url` names no user: expected postgres://user@host[:port]/database",
            ));
        }
        if !matches!(config.get_ssl_mode(), SslMode::Disable | SslMode::Prefer) {
            return Err(DriverError::new(
                "`url` asks for TLS (sslmode=require), which taskqueue.postgres does not support: use sslmode=disable or prefer",
            ));
        }
        if let Some(password) = password {
            config.password(password);
        }
        if config.get_application_name().is_none() {
            config.application_name("sandloom-taskqueue");
        }
        let redacted = redact(&config);
        Ok(Self { config, redacted })
    }

    /// `postgres://***@host:port/database`: safe to show (user-info is redacted whole).
    pub(crate) fn redacted(&self) -> &str {
        &self.redacted
    }

    /// The connection settings, with the connect timeout applied.
    pub(crate) fn config(&self, connect_timeout: std::time::Duration) -> tokio_postgres::Config {
        let mut config = self.config.clone();
        config.connect_timeout(connect_timeout);
        config
    }
}

fn redact(config: &tokio_postgres::Config) -> String {
    // The user name is redacted with the password, as `SecretUrl` (and so the redis driver)
    // redacts all user-info: a user name can be a credential too (a per-tenant or generated one).
    let mut shown = String::from("postgres://");
    if config.get_user().is_some() || config.get_password().is_some() {
        shown.push_str("***@");
    }
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|host| match host {
            Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            Host::Unix(path) => path.display().to_string(),
        })
        .chain(config.get_hostaddrs().iter().map(ToString::to_string))
        .collect();
    let ports = config.get_ports();
    for (n, host) in hosts.iter().enumerate() {
        if n > 0 {
            shown.push(',');
        }
        // One port applies to every host; otherwise they pair up, as libpq reads them.
        let port = ports.get(n).or(ports.first()).copied().unwrap_or(5432);
        let _ = write!(shown, "{host}:{port}");
    }
    if let Some(database) = config.get_dbname() {
        shown.push('/');
        shown.push_str(database);
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_wherever_they_come_from() {
        for (url, password) in [
            ("postgres://app:hunter2@db:6543/jobs", None),
            ("postgres://app@db:6543/jobs", Some("hunter2")),
            ("postgres://app@db:6543/jobs?password=hunter2", None),
            (
                "host=db port=6543 user=app password=hunter2 dbname=jobs",
                None,
            ),
        ] {
            let target = Target::parse(url, password).unwrap();
            assert_eq!(target.redacted(), "postgres://***@db:6543/jobs", "{url}");
        }
    }

    #[test]
    fn user_names_are_redacted_too() {
        // Issue 25: a generated or per-tenant user name is a credential; the redis driver and
        // `SecretUrl` hide all user-info, and so does this driver.
        for url in [
            "postgres://s3cr3t-USER-456:pw@db:5432/app",
            "postgres://s3cr3t-USER-456@db:5432/app",
        ] {
            let target = Target::parse(url, None).unwrap();
            assert_eq!(target.redacted(), "postgres://***@db:5432/app", "{url}");
        }
    }

    #[test]
    fn malformed_urls_are_refused_without_echoing_them() {
        for url in [
            "host='unterminated password=hunter2",
            "postgres://app:hunter2@db:notaport/x",
            "",
            "postgres://u@db/x?sslmode=require",
        ] {
            let Err(err) = Target::parse(url, None) else {
                panic!("accepted {url:?}");
            };
            assert!(err.message().contains("`url`"), "{err}");
            assert!(!err.message().contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn hosts_and_ports_pair_up() {
        let target = Target::parse("postgres://u@a:1,b:2/d", None).unwrap();
        assert_eq!(target.redacted(), "postgres://***@a:1,b:2/d");
        let target = Target::parse("postgres://u@a/d", None).unwrap();
        assert_eq!(target.redacted(), "postgres://***@a:5432/d");
    }
}
