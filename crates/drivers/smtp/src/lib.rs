//! # sandloom-driver-smtp — `notifier.smtp`
//!
//! A [`Notifier`](sandloom_driverkit::notifier::Notifier) that sends each message as a
//! plain-text e-mail through an SMTP server, with [lettre](https://docs.rs/lettre) (tokio,
//! rustls): `STARTTLS` (default), implicit TLS or, explicitly, plain text; optional SMTP AUTH;
//! pooled sessions. Declared feature: `batch`.
//!
//! Link it in the application with `sandloom::link_drivers!(sandloom_driver_smtp)` and select
//! it in `INFRA`:
//!
//! ```toml
//! [notifier.default]
//! driver = "smtp"
//! host = "smtp.example.com"          # port 587, STARTTLS required
//! username = "orders@example.com"    # password from SANDLOOM__NOTIFIER__DEFAULT__PASSWORD
//! from = "Orders <orders@example.com>"
//! ```
//!
//! Every option is described on [`SmtpOptions`]; what a message becomes, and which errors
//! answer what, on [`SmtpNotifier`].
//!
//! `start` opens a session and checks that the server answers (`NOOP`) within
//! `connect_timeout_ms`; a failure names the server as `host:port`, never the password.
//!
//! ```no_run
//! use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
//! use sandloom_driverkit::Driver;
//! use sandloom_driverkit::notifier::{Message, Notifier};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let notifier = SmtpNotifier::from_options(SmtpOptions {
//!     username: Some("orders@example.com".into()),
//!     password: std::env::var("SMTP_PASSWORD").ok().map(Into::into),
//!     ..SmtpOptions::new("smtp.example.com", "Orders <orders@example.com>")
//! })?;
//! notifier.start().await?;
//! let receipt = notifier
//!     .send(&Message::new("ada@example.com", "Disk almost full on db-1.").with_subject("Alert"))
//!     .await?;
//! println!("Message-ID {}", receipt.id);
//! # Ok(())
//! # }
//! ```

mod address;
mod compose;
mod errors;
mod options;
mod provider;

pub use options::{Security, SmtpOptions};
pub use provider::SmtpNotifier;

sandloom_driverkit::register_driver!(notifier, "smtp", SmtpNotifier);
