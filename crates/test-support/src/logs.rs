//! Log lines captured for a test's assertions.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::Level;
use tracing::subscriber::DefaultGuard;

/// The lines a `tracing_subscriber::fmt` subscriber writes, kept in memory so a test can assert
/// on what was logged (and on what never was: a secret, a warning).
///
/// [`set_default`](LogCapture::set_default) installs the subscriber on the current thread for
/// as long as its guard lives: run the code under test on a current-thread runtime, so every
/// task logs on that thread. [`subscriber`](LogCapture::subscriber) gives the subscriber itself,
/// for `with_default` or a global install. Lines are plain text (no ANSI colours), events at
/// `level` and above; clones share one buffer.
///
/// ```
/// use sandloom_test_support::LogCapture;
/// use tracing::Level;
///
/// let logs = LogCapture::new();
/// {
///     let _guard = logs.set_default(Level::INFO);
///     tracing::info!(store = "vault", "secret rotated");
///     tracing::debug!("below the level: not kept");
/// }
/// tracing::info!("after the guard: not kept");
/// let text = logs.text();
/// assert!(text.contains("INFO") && text.contains("secret rotated store=\"vault\""), "{text}");
/// assert_eq!(text.lines().count(), 1, "{text}");
/// ```
#[derive(Debug, Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

/// One write into a capture's buffer.
struct Sink(Arc<Mutex<Vec<u8>>>);

impl io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl LogCapture {
    /// An empty capture.
    ///
    /// ```
    /// assert_eq!(sandloom_test_support::LogCapture::new().text(), "");
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A subscriber that writes events at `level` and above into this capture.
    ///
    /// ```
    /// use sandloom_test_support::LogCapture;
    /// use tracing::Level;
    ///
    /// let logs = LogCapture::new();
    /// tracing::subscriber::with_default(logs.subscriber(Level::TRACE), || {
    ///     tracing::trace!("kept");
    /// });
    /// assert!(logs.text().contains("kept"));
    /// ```
    #[must_use]
    pub fn subscriber(&self, level: Level) -> impl tracing::Subscriber + Send + Sync + 'static {
        let buffer = Arc::clone(&self.0);
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false)
            .with_writer(move || Sink(Arc::clone(&buffer)))
            .finish()
    }

    /// Install [`subscriber`](Self::subscriber) on the current thread until the guard drops.
    ///
    /// ```
    /// use sandloom_test_support::LogCapture;
    /// use tracing::Level;
    ///
    /// let logs = LogCapture::new();
    /// let guard = logs.set_default(Level::WARN);
    /// tracing::warn!("kept");
    /// drop(guard);
    /// assert!(logs.text().contains("WARN"));
    /// ```
    #[must_use = "the capture ends when the guard drops"]
    pub fn set_default(&self, level: Level) -> DefaultGuard {
        tracing::subscriber::set_default(self.subscriber(level))
    }

    /// Everything captured so far (invalid UTF-8, if any, replaced).
    ///
    /// ```
    /// use sandloom_test_support::LogCapture;
    ///
    /// let logs = LogCapture::new();
    /// let _guard = logs.set_default(tracing::Level::INFO);
    /// tracing::info!(count = 2, "first");
    /// tracing::info!("second");
    /// assert_eq!(logs.text().lines().count(), 2);
    /// ```
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_buffer_and_the_level_filters() {
        let logs = LogCapture::new();
        let clone = logs.clone();
        tracing::subscriber::with_default(clone.subscriber(Level::INFO), || {
            tracing::info!(target: "sandloom::test", "kept");
            tracing::debug!("dropped");
        });
        let text = logs.text();
        assert!(text.contains("INFO sandloom::test: kept"), "{text}");
        assert!(!text.contains("dropped"), "{text}");
        assert!(!text.contains('\u{1b}'), "no ANSI escapes: {text:?}");
    }
}
