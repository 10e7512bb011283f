use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sandloom_driverkit::notifier::{BATCH, Message, NAME, NotifierOps, NotifierProvider, Receipt};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Version};

use crate::ConsoleOptions;

/// Prints each message as one line to standard error.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::notifier::{Message, Notifier};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let console = sandloom_example_driver_console::ConsoleNotifier::from_options(Default::default()).unwrap();
/// let receipt = console.send(&Message::new("ops", "deployed")).await.unwrap();
/// assert_eq!(receipt.id, "console-1");
/// # }
/// ```
#[derive(Debug)]
pub struct ConsoleNotifier {
    prefix: String,
    sent: AtomicU64,
    stopped: AtomicBool,
}

impl ConsoleNotifier {
    fn write(&self, message: &Message) -> InfraResult<Receipt> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        if message.recipient.trim().is_empty() {
            return Err(InfraError::invalid_input(NAME, "the recipient is empty"));
        }
        if message.body.is_empty() {
            return Err(InfraError::invalid_input(NAME, "the message body is empty"));
        }
        let subject = message
            .subject
            .as_deref()
            .map(|s| format!("[{s}] "))
            .unwrap_or_default();
        writeln!(
            std::io::stderr().lock(),
            "{}to {}: {subject}{}",
            self.prefix,
            message.recipient,
            message.body
        )
        .map_err(|err| InfraError::unavailable(NAME, "cannot write to stderr").with_source(err))?;
        let number = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(Receipt::new(format!("console-{number}")))
    }
}

impl NotifierOps for ConsoleNotifier {
    async fn send(&self, message: &Message) -> InfraResult<Receipt> {
        self.write(message)
    }

    async fn send_batch(&self, messages: &[Message]) -> InfraResult<Vec<InfraResult<Receipt>>> {
        // After stop the whole call fails, as `send` does (not each message on its own).
        if self.stopped.load(Ordering::Acquire) {
            return Err(InfraError::stopped(NAME));
        }
        Ok(messages.iter().map(|message| self.write(message)).collect())
    }
}

impl Driver for ConsoleNotifier {
    type Options = ConsoleOptions;

    fn supported_features() -> &'static [&'static str] {
        &[BATCH]
    }

    fn from_options(options: ConsoleOptions) -> Result<Self, DriverError> {
        Ok(Self {
            prefix: options.prefix,
            sent: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.stopped.store(true, Ordering::Release);
        Ok(())
    }
}

impl NotifierProvider for ConsoleNotifier {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_empty_input_and_works_until_stopped() {
        let console = ConsoleNotifier::from_options(ConsoleOptions::default()).unwrap();
        let empty = console.send(&Message::new("ops", "")).await.unwrap_err();
        assert_eq!(
            empty.kind(),
            sandloom_driverkit::sdk::ErrorKind::InvalidInput
        );
        let batch = console
            .send_batch(&[Message::new("a", "one"), Message::new(" ", "two")])
            .await
            .unwrap();
        assert_eq!(batch[0].as_ref().unwrap().id, "console-1");
        assert!(batch[1].is_err());
        console.stop().await.unwrap();
        let stopped = console
            .send(&Message::new("ops", "late"))
            .await
            .unwrap_err();
        assert_eq!(stopped.kind(), sandloom_driverkit::sdk::ErrorKind::Stopped);
    }
}
