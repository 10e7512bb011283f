//! `notifier.smtp` against lettre used directly, on the same SMTP server in the same run.
//!
//! `send`: one small plain-text message (recipient, subject, two-line body) to aiosmtpd,
//! through the driver (as a module calls it, via `&dyn Notifier`) and through lettre's
//! `AsyncSmtpTransport` with the same pool settings (building the `Message` each time, as
//! the driver does). Both reuse pooled sessions, so a send is `NOOP` + `MAIL`/`RCPT`/`DATA`.
//!
//! Needs `SANDLOOM_TEST_SMTP_URL` (`eval "$(scripts/test-services up)"`); without it the bench
//! says so and exits successfully. `cargo bench -p sandloom-driver-smtp -- --measurement-time 3`.
//! Afterwards it removes the mail it made from `SANDLOOM_TEST_SMTP_MAILDIR` (when set), so the
//! shared maildir the tests read does not grow by thousands of messages.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use criterion::Criterion;
use lettre::message::header::ContentType;
use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::client::Tls;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use sandloom_driver_smtp::{Security, SmtpNotifier, SmtpOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::notifier::{Message, Notifier};

const RECIPIENT: &str = "someone@example.com";
const SUBJECT: &str = "bench: order shipped";
const BODY: &str = "Your order 42 has shipped.\nThank you!";

fn env(name: &str, built: Option<&str>) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| built.map(str::to_owned))
}

fn server() -> Option<(String, u16)> {
    let url = env(
        "SANDLOOM_TEST_SMTP_URL",
        option_env!("SANDLOOM_TEST_SMTP_URL"),
    )?;
    let (host, port) = url.strip_prefix("smtp://")?.rsplit_once(':')?;
    Some((host.to_owned(), port.parse().ok()?))
}

fn main() {
    let Some((host, port)) = server() else {
        println!(
            "smtp bench skipped: set SANDLOOM_TEST_SMTP_URL (eval \"$(scripts/test-services up)\") \
             to run it against a real SMTP server"
        );
        return;
    };
    if let Some(maildir) = env(
        "SANDLOOM_TEST_SMTP_MAILDIR",
        option_env!("SANDLOOM_TEST_SMTP_MAILDIR"),
    ) {
        // aiosmtpd refuses every message (500) when the maildir's folders are missing.
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(PathBuf::from(&maildir).join(sub)).expect("the maildir");
        }
    }
    // Marks every message of this run, so they can be removed from the shared maildir.
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let sender = format!("bench-{run}@sandloom.test");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");

    let options = SmtpOptions {
        port: Some(port),
        security: Security::Plain,
        ..SmtpOptions::new(host.as_str(), format!("Bench <{sender}>"))
    };
    let driver = SmtpNotifier::from_options(options.clone()).expect("valid options");
    runtime
        .block_on(driver.start())
        .expect("the SMTP server answers");
    let notifier: &dyn Notifier = &driver;
    let message = Message::new(RECIPIENT, BODY).with_subject(SUBJECT);

    // lettre as the driver configures it: plain, same connect timeout, same pool.
    let raw = runtime.block_on(async {
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host.as_str())
            .port(port)
            .tls(Tls::None)
            .timeout(Some(Duration::from_millis(options.connect_timeout_ms)))
            .pool_config(
                PoolConfig::new()
                    .max_size(options.max_connections)
                    .idle_timeout(Duration::from_millis(options.idle_timeout_ms)),
            )
            .build()
    });
    let from: lettre::message::Mailbox = format!("Bench <{sender}>").parse().expect("a mailbox");
    let to: lettre::message::Mailbox = RECIPIENT.parse().expect("a mailbox");
    let raw_email = || {
        lettre::Message::builder()
            .from(from.clone())
            .to(to.clone())
            .subject(SUBJECT)
            .header(ContentType::TEXT_PLAIN)
            .body(BODY.to_owned())
            .expect("a message")
    };
    runtime
        .block_on(raw.send(raw_email()))
        .expect("lettre sends");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("send");
    group.bench_function("driver", |b| {
        b.iter(|| {
            runtime
                .block_on(notifier.send(&message))
                .expect("the driver sends")
        });
    });
    group.bench_function("lettre", |b| {
        b.iter(|| {
            runtime
                .block_on(raw.send(raw_email()))
                .expect("lettre sends")
        });
    });
    group.finish();
    criterion.final_summary();

    runtime.block_on(async move {
        driver.stop().await.expect("stop");
        raw.shutdown().await;
        // lettre's pool spawns a task when dropped: inside the runtime.
        drop(raw);
    });
    remove_bench_mail(&sender);
}

/// Delete this run's messages from the shared maildir.
fn remove_bench_mail(sender: &str) {
    let Some(maildir) = env(
        "SANDLOOM_TEST_SMTP_MAILDIR",
        option_env!("SANDLOOM_TEST_SMTP_MAILDIR"),
    ) else {
        return;
    };
    let needle = format!("X-MailFrom: {sender}");
    let Ok(entries) = std::fs::read_dir(PathBuf::from(maildir).join("new")) else {
        return;
    };
    let mut removed = 0_u32;
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = std::fs::read(&path).is_ok_and(|mail| {
            mail.windows(needle.len())
                .any(|window| window == needle.as_bytes())
        });
        if ours && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    println!("removed {removed} benchmark messages from the shared maildir");
}
