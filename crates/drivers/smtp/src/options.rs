//! Options of `notifier.smtp` and their validation.

use std::fmt;
use std::time::Duration;

use lettre::message::Mailbox;
use sandloom_driverkit::{DriverError, Secret};

use crate::address::{check_host, server_name};
use serde::Deserialize;

/// Longest timeout accepted, so a typo such as an extra zero is caught at startup.
const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// Most SMTP sessions one instance may hold; mail servers limit sessions per client anyway.
const MAX_CONNECTIONS: u32 = 1000;

/// How the connection to the SMTP server is secured. Written in `INFRA` as `"starttls"`,
/// `"tls"` or `"plain"`.
///
/// ```
/// use sandloom_driver_smtp::Security;
///
/// assert_eq!(Security::default(), Security::Starttls);
/// assert_eq!(Security::Starttls.default_port(), 587);
/// assert_eq!(Security::Tls.default_port(), 465);
/// assert_eq!(Security::Plain.default_port(), 25);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    /// Connect in plain text, then upgrade with `STARTTLS` before anything else is sent; a
    /// server that does not offer `STARTTLS` is refused (never a silent fallback to plain
    /// text). The default; port 587 by default.
    #[default]
    Starttls,
    /// TLS from the first byte (implicit TLS, "SMTPS"); port 465 by default.
    Tls,
    /// No encryption at all; port 25 by default. Only for a relay on the same machine or a
    /// trusted network, and for tests: mail crosses the network readable by anyone on the
    /// path. Never chosen by default, and refused together with `username`/`password`.
    Plain,
}

impl Security {
    /// The port used when `port` is not set: 587 for `starttls`, 465 for `tls`, 25 for `plain`.
    ///
    /// ```
    /// assert_eq!(sandloom_driver_smtp::Security::Tls.default_port(), 465);
    /// ```
    pub fn default_port(self) -> u16 {
        match self {
            Self::Starttls => 587,
            Self::Tls => 465,
            Self::Plain => 25,
        }
    }

    /// The name written in `INFRA`.
    ///
    /// ```
    /// assert_eq!(sandloom_driver_smtp::Security::Starttls.as_str(), "starttls");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starttls => "starttls",
            Self::Tls => "tls",
            Self::Plain => "plain",
        }
    }
}

impl fmt::Display for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options of `notifier.smtp`. `host` and `from` are required; everything else has a default.
///
/// ```toml
/// [notifier.default]
/// driver = "smtp"
/// host = "smtp.example.com"
/// # port = 587                       # default by `security`: 587 starttls, 465 tls, 25 plain
/// # security = "starttls"            # "starttls" (default) | "tls" | "plain"
/// username = "orders@example.com"
/// # password: set SANDLOOM__NOTIFIER__DEFAULT__PASSWORD rather than writing it here
/// from = "Orders <orders@example.com>"
/// # reply_to = "Support <support@example.com>"
/// # default_subject = "Notification"   # default: none (no Subject header)
/// # connect_timeout_ms = 5000
/// # send_timeout_ms = 30000
/// # max_connections = 10
/// # idle_timeout_ms = 60000
/// # hello_name = "app-1.example.com"   # default: this machine's host name
/// # metadata_headers = true
/// # metadata_header_prefix = "X-Sandloom-"
/// # accept_invalid_certs = false       # never in production
/// ```
///
/// Build them in code with [`SmtpOptions::new`] and struct update syntax:
///
/// ```
/// use sandloom_driver_smtp::{Security, SmtpOptions};
///
/// let options = SmtpOptions {
///     security: Security::Tls,
///     username: Some("orders@example.com".into()),
///     password: Some("hunter2".into()),
///     ..SmtpOptions::new("smtp.example.com", "Orders <orders@example.com>")
/// };
/// assert_eq!(options.effective_port(), 465);
/// assert!(options.validate().is_ok());
/// assert!(!format!("{options:?}").contains("hunter2"));
/// ```
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmtpOptions {
    /// Host name or IP address of the SMTP server (`smtp.example.com`, `127.0.0.1`, `::1`),
    /// without scheme, port or user-info. With `tls`/`starttls` it is also the name the
    /// server's certificate must carry.
    pub host: String,
    /// TCP port; by default the one of `security` (587, 465 or 25).
    #[serde(default)]
    pub port: Option<u16>,
    /// How the connection is secured: `starttls` (default), `tls` or `plain`.
    #[serde(default)]
    pub security: Security,
    /// User name for SMTP AUTH (PLAIN or LOGIN, whichever the server offers). Set together
    /// with `password`; without both, no authentication is attempted.
    #[serde(default)]
    pub username: Option<String>,
    /// Password for SMTP AUTH. A secret: never shown in `Debug`, errors or logs. Prefer
    /// setting it through the environment (`SANDLOOM__NOTIFIER__<INSTANCE>__PASSWORD`).
    #[serde(default)]
    pub password: Option<Secret<String>>,
    /// The sender of every message, as a mailbox: `orders@example.com` or
    /// `Orders <orders@example.com>`. Also the envelope sender (`MAIL FROM`), and its domain
    /// is the right-hand side of generated Message-IDs.
    pub from: String,
    /// A `Reply-To` mailbox for every message; none by default.
    #[serde(default)]
    pub reply_to: Option<String>,
    /// Subject of messages that have none; by default such messages carry no `Subject` header
    /// (allowed by RFC 5322; mail clients show "no subject"). One line.
    #[serde(default)]
    pub default_subject: Option<String>,
    /// Budget in milliseconds for opening and checking a session (TCP connect, greeting,
    /// EHLO, TLS, AUTH): bounds `start` and `health`, and each connect during a send.
    /// Default 5000, well inside the kernel's start timeout.
    #[serde(default = "default_connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Budget in milliseconds for one message, from the call to the server's final answer,
    /// including waiting for a free session. Default 30000. A message that runs out of time
    /// answers `Timeout`; it may still have been delivered.
    #[serde(default = "default_send_timeout_ms")]
    pub send_timeout_ms: u64,
    /// Most SMTP sessions open at once; further sends wait for a free one. Idle sessions
    /// are kept for reuse, up to this many. Default 10.
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// How long in milliseconds an idle session is kept for reuse before it is closed.
    /// Default 60000.
    #[serde(default = "default_idle_timeout_ms")]
    pub idle_timeout_ms: u64,
    /// The name this client gives in `EHLO`; by default this machine's host name. Some
    /// servers want a fully qualified domain name that resolves to the client.
    #[serde(default)]
    pub hello_name: Option<String>,
    /// Whether a message's metadata is sent as header fields (default `true`): each pair
    /// `key = value` becomes the header `<metadata_header_prefix><key>: <value>`. Keys must
    /// then be header-name characters (printable ASCII, no `:`), values one line; anything
    /// else is refused with `InvalidInput`. With `false`, metadata is ignored.
    #[serde(default = "default_true")]
    pub metadata_headers: bool,
    /// What goes before each metadata key to make its header name (default `X-Sandloom-`,
    /// so `severity` becomes `X-Sandloom-severity`). Must start with `X-`, so metadata can
    /// never set a standard header such as `Bcc`.
    #[serde(default = "default_metadata_header_prefix")]
    pub metadata_header_prefix: String,
    /// Accept any TLS certificate, whoever issued it and whatever name it carries (default
    /// `false`). **Dangerous**: it turns off the check that you talk to the real server, so
    /// anyone on the network path can read the mail and the password. Only for tests against
    /// a server with a self-signed certificate; refused with `security = "plain"`.
    #[serde(default)]
    pub accept_invalid_certs: bool,
}

fn default_connect_timeout_ms() -> u64 {
    5_000
}

fn default_send_timeout_ms() -> u64 {
    30_000
}

fn default_max_connections() -> u32 {
    10
}

fn default_idle_timeout_ms() -> u64 {
    60_000
}

fn default_true() -> bool {
    true
}

fn default_metadata_header_prefix() -> String {
    "X-Sandloom-".to_owned()
}

/// The options once checked: parsed mailboxes and durations.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub(crate) port: u16,
    pub(crate) from: Mailbox,
    pub(crate) reply_to: Option<Mailbox>,
    pub(crate) connect_timeout: Duration,
    pub(crate) send_timeout: Duration,
    pub(crate) idle_timeout: Duration,
}

impl SmtpOptions {
    /// Options for `host` sending as `from`, every other option at its default
    /// (`starttls` on port 587, no authentication).
    ///
    /// ```
    /// use sandloom_driver_smtp::{Security, SmtpOptions};
    ///
    /// let options = SmtpOptions::new("smtp.example.com", "orders@example.com");
    /// assert_eq!(options.security, Security::Starttls);
    /// assert_eq!(options.effective_port(), 587);
    /// assert_eq!(options.connect_timeout_ms, 5000);
    /// assert_eq!(options.metadata_header_prefix, "X-Sandloom-");
    /// ```
    pub fn new(host: impl Into<String>, from: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            port: None,
            security: Security::default(),
            username: None,
            password: None,
            from: from.into(),
            reply_to: None,
            default_subject: None,
            connect_timeout_ms: default_connect_timeout_ms(),
            send_timeout_ms: default_send_timeout_ms(),
            max_connections: default_max_connections(),
            idle_timeout_ms: default_idle_timeout_ms(),
            hello_name: None,
            metadata_headers: true,
            metadata_header_prefix: default_metadata_header_prefix(),
            accept_invalid_certs: false,
        }
    }

    /// The port connected to: `port`, or the default of `security`.
    ///
    /// ```
    /// use sandloom_driver_smtp::{Security, SmtpOptions};
    ///
    /// let plain = SmtpOptions {
    ///     security: Security::Plain,
    ///     ..SmtpOptions::new("127.0.0.1", "app@example.com")
    /// };
    /// assert_eq!(plain.effective_port(), 25);
    /// assert_eq!(SmtpOptions { port: Some(2525), ..plain }.effective_port(), 2525);
    /// ```
    pub fn effective_port(&self) -> u16 {
        self.port.unwrap_or_else(|| self.security.default_port())
    }

    /// The server as `host:port` (`[::1]:25` for an IPv6 address), for messages.
    ///
    /// ```
    /// use sandloom_driver_smtp::SmtpOptions;
    ///
    /// let options = SmtpOptions::new("smtp.example.com", "app@example.com");
    /// assert_eq!(options.server(), "smtp.example.com:587");
    /// ```
    pub fn server(&self) -> String {
        server_name(&self.host, self.effective_port())
    }

    /// Check the options: a usable host, mailboxes that parse, timeouts and limits in range,
    /// no credentials over `plain`. The messages name the option and never show the password.
    ///
    /// ```
    /// use sandloom_driver_smtp::SmtpOptions;
    ///
    /// let bad = SmtpOptions::new("smtp.example.com", "not a mailbox");
    /// let err = bad.validate().unwrap_err();
    /// assert!(err.message().contains("`from`"), "{err}");
    /// ```
    ///
    /// # Errors
    /// A [`DriverError`] naming the first option that is wrong and why.
    pub fn validate(&self) -> Result<(), DriverError> {
        self.check().map(drop)
    }

    pub(crate) fn check(&self) -> Result<Checked, DriverError> {
        check_host(&self.host)?;
        if self.port == Some(0) {
            return Err(DriverError::new("`port` must be between 1 and 65535"));
        }
        let from = parse_mailbox("from", &self.from)?;
        let reply_to = self
            .reply_to
            .as_deref()
            .map(|text| parse_mailbox("reply_to", text))
            .transpose()?;
        self.check_credentials()?;
        if let Some(subject) = &self.default_subject
            && subject.contains(['\r', '\n'])
        {
            return Err(DriverError::new("`default_subject` must be one line"));
        }
        let connect_timeout = timeout("connect_timeout_ms", self.connect_timeout_ms)?;
        let send_timeout = timeout("send_timeout_ms", self.send_timeout_ms)?;
        let idle_timeout = timeout("idle_timeout_ms", self.idle_timeout_ms)?;
        if !(1..=MAX_CONNECTIONS).contains(&self.max_connections) {
            return Err(DriverError::new(format!(
                "`max_connections` must be between 1 and {MAX_CONNECTIONS}, not {}",
                self.max_connections
            )));
        }
        if let Some(name) = &self.hello_name
            && (name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(DriverError::new(format!(
                "`hello_name` must be a host name (printable ASCII, no spaces), not {name:?}"
            )));
        }
        check_prefix(&self.metadata_header_prefix)?;
        if self.accept_invalid_certs && self.security == Security::Plain {
            return Err(DriverError::new(
                "`accept_invalid_certs` has no meaning with `security = \"plain\"` (there is no \
                 certificate): remove it",
            ));
        }
        Ok(Checked {
            port: self.effective_port(),
            from,
            reply_to,
            connect_timeout,
            send_timeout,
            idle_timeout,
        })
    }

    fn check_credentials(&self) -> Result<(), DriverError> {
        match (&self.username, &self.password) {
            (Some(_), None) => Err(DriverError::new(
                "`username` is set but `password` is not: set both, or neither",
            )),
            (None, Some(_)) => Err(DriverError::new(
                "`password` is set but `username` is not: set both, or neither",
            )),
            (Some(user), Some(_)) if user.trim().is_empty() => {
                Err(DriverError::new("`username` must not be empty"))
            }
            (Some(_), Some(_)) if self.security == Security::Plain => Err(DriverError::new(
                "`username`/`password` with `security = \"plain\"` would send the password \
                 unencrypted: use `security = \"starttls\"` or `\"tls\"`",
            )),
            (None, None) | (Some(_), Some(_)) => Ok(()),
        }
    }
}

fn parse_mailbox(option: &str, text: &str) -> Result<Mailbox, DriverError> {
    crate::compose::parse_mailbox(text).map_err(|reason| {
        DriverError::new(format!(
            "`{option}` must be a mailbox such as `orders@example.com` or \
             `Orders <orders@example.com>`, not {text:?}: {reason}"
        ))
    })
}

fn timeout(option: &str, ms: u64) -> Result<Duration, DriverError> {
    if (1..=MAX_TIMEOUT_MS).contains(&ms) {
        Ok(Duration::from_millis(ms))
    } else {
        Err(DriverError::new(format!(
            "`{option}` must be between 1 and {MAX_TIMEOUT_MS} milliseconds, not {ms}"
        )))
    }
}

fn check_prefix(prefix: &str) -> Result<(), DriverError> {
    let starts_with_x = prefix
        .get(..2)
        .is_some_and(|start| start.eq_ignore_ascii_case("X-"));
    if !starts_with_x || !crate::compose::is_header_name(prefix) {
        return Err(DriverError::new(format!(
            "`metadata_header_prefix` must start with `X-` and hold only header-name characters \
             (printable ASCII, no `:`), not {prefix:?}"
        )));
    }
    if prefix.len() > crate::compose::MAX_HEADER_NAME_LEN / 2 {
        return Err(DriverError::new(format!(
            "`metadata_header_prefix` must be at most {} characters",
            crate::compose::MAX_HEADER_NAME_LEN / 2
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> SmtpOptions {
        SmtpOptions::new("smtp.example.com", "Orders <orders@example.com>")
    }

    fn refused(options: &SmtpOptions, needle: &str) {
        let err = options.validate().unwrap_err();
        assert!(
            err.message().contains(needle),
            "{err} should mention {needle}"
        );
    }

    #[test]
    fn defaults_validate_and_ports_follow_security() {
        assert!(options().validate().is_ok());
        assert_eq!(options().server(), "smtp.example.com:587");
        let ipv6 = SmtpOptions {
            security: Security::Plain,
            ..SmtpOptions::new("::1", "a@example.com")
        };
        assert!(ipv6.validate().is_ok());
        assert_eq!(ipv6.server(), "[::1]:25");
    }

    #[test]
    fn nonsense_is_refused_with_the_option_named() {
        type Change = fn(&mut SmtpOptions);
        let cases: [(Change, &str); 17] = [
            (|o| o.host = " ".into(), "`host`"),
            (|o| o.host = "smtp://smtp.example.com".into(), "scheme"),
            (|o| o.host = "smtp.example.com:25".into(), "`port`"),
            (|o| o.host = "smtp.exa mple.com".into(), "`host`"),
            (|o| o.port = Some(0), "`port`"),
            (|o| o.from = "orders".into(), "`from`"),
            (|o| o.from = String::new(), "`from`"),
            (|o| o.reply_to = Some("@".into()), "`reply_to`"),
            (
                |o| o.default_subject = Some("a\r\nBcc: x@y.z".into()),
                "one line",
            ),
            (|o| o.connect_timeout_ms = 0, "`connect_timeout_ms`"),
            (|o| o.send_timeout_ms = u64::MAX, "`send_timeout_ms`"),
            (|o| o.idle_timeout_ms = 0, "`idle_timeout_ms`"),
            (|o| o.max_connections = 0, "`max_connections`"),
            (|o| o.hello_name = Some("my host".into()), "`hello_name`"),
            (|o| o.metadata_header_prefix = "Meta-".into(), "`X-`"),
            (|o| o.metadata_header_prefix = "X-A:".into(), "`X-`"),
            (
                |o| {
                    o.security = Security::Plain;
                    o.accept_invalid_certs = true;
                },
                "`accept_invalid_certs`",
            ),
        ];
        for (change, needle) in cases {
            let mut changed = options();
            change(&mut changed);
            refused(&changed, needle);
        }
    }

    #[test]
    fn credentials_come_in_pairs_and_never_over_plain() {
        let secret = "hunter2-secret";
        refused(
            &SmtpOptions {
                username: Some("u".into()),
                ..options()
            },
            "`password`",
        );
        refused(
            &SmtpOptions {
                password: Some(secret.into()),
                ..options()
            },
            "`username`",
        );
        let plain = SmtpOptions {
            security: Security::Plain,
            username: Some("u".into()),
            password: Some(secret.into()),
            ..options()
        };
        let err = plain.validate().unwrap_err();
        assert!(err.message().contains("unencrypted"), "{err}");
        assert!(!err.message().contains(secret));
        assert!(!format!("{plain:?}").contains(secret));
    }

    #[test]
    fn host_with_user_info_is_refused_without_repeating_it() {
        let host = "user:hunter2-secret@smtp.example.com";
        let err = SmtpOptions {
            host: host.into(),
            ..options()
        }
        .validate()
        .unwrap_err();
        assert!(err.message().contains("user-info"), "{err}");
        assert!(!err.message().contains("hunter2"), "{err}");
    }
}
