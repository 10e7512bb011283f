//! A private aiosmtpd instance on a free port, for what the shared test server does not do:
//! STARTTLS, implicit TLS (both with a self-signed certificate made by `openssl`), AUTH
//! (offered after STARTTLS, every login refused with 535) and a message size limit.
//!
//! It is the aiosmtpd of the test services' virtualenv (`SANDLOOM_TEST_SMTP_PYTHON`, else
//! `venv/bin/python` beside `SANDLOOM_TEST_SMTP_MAILDIR`), so it runs where the shared
//! server runs. Messages go to a maildir of its own; the process is killed on drop.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sandloom_test_support::free_port;

/// How the private server listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listen {
    /// Plain text, no STARTTLS.
    Plain,
    /// Plain text; STARTTLS offered and required before mail; AUTH offered after it.
    Starttls,
    /// TLS from the first byte.
    Tls,
}

pub(crate) struct OwnServer {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl OwnServer {
    /// Start one, with `extra` aiosmtpd arguments (`-s 2000`), and wait until it listens.
    pub(crate) fn start(listen: Listen, extra: &[&str]) -> Self {
        Self::start_on(free_port(), listen, extra)
    }

    /// The same on `port` (to replace a server that was dropped).
    pub(crate) fn start_on(port: u16, listen: Listen, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let mut command = Command::new(python());
        command
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(extra);
        match listen {
            Listen::Plain => {}
            Listen::Starttls => {
                let (cert, key) = self_signed(dir.path());
                command.arg("--tlscert").arg(cert).arg("--tlskey").arg(key);
            }
            Listen::Tls => {
                let (cert, key) = self_signed(dir.path());
                command
                    .arg("--smtpscert")
                    .arg(cert)
                    .arg("--smtpskey")
                    .arg(key);
            }
        }
        let child = command
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.path().join("maildir"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start aiosmtpd from the test services' virtualenv");
        let mut server = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("aiosmtpd on port {port} exited at start: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "aiosmtpd did not listen on {port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// How many messages it stored.
    pub(crate) fn stored(&self) -> usize {
        std::fs::read_dir(self.dir.path().join("maildir").join("new")).map_or(0, Iterator::count)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("SANDLOOM_TEST_SMTP_PYTHON") {
        return python.into();
    }
    let maildir = std::env::var("SANDLOOM_TEST_SMTP_MAILDIR")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_SMTP_MAILDIR").map(str::to_owned))
        .expect("SANDLOOM_TEST_SMTP_MAILDIR is not set: eval \"$(scripts/test-services up)\"");
    let python = Path::new(&maildir).join("../venv/bin/python");
    assert!(
        python.exists(),
        "no aiosmtpd virtualenv at {}",
        python.display()
    );
    python
}

/// A key and a self-signed certificate for `localhost` and 127.0.0.1, valid for a day.
fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("cannot run openssl to make a test certificate");
    assert!(
        status.success(),
        "openssl could not make a test certificate"
    );
    (cert, key)
}
