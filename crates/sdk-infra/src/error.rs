//! The one error type every operation trait returns.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

/// What kind of failure an operation met. Match on this, not on messages.
///
/// ```
/// use sandloom_sdk_infra::{ErrorKind, InfraError};
///
/// let err = InfraError::not_found("objectstore", "no object `a.txt`");
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// assert!(!err.kind().is_retryable());
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The optional operation belongs to a feature the driver did not declare.
    Unsupported,
    /// The key, object, task or lease does not exist.
    NotFound,
    /// The input breaks the contract: an empty key, a key escaping its root, an empty message.
    InvalidInput,
    /// The state changed under the caller: a stale reservation, an etag mismatch, an existing key.
    Conflict,
    /// The driver has been stopped; the `Infra` it belonged to is shutting down or gone.
    Stopped,
    /// The backend could not be reached or refused service for now; retrying may succeed.
    Unavailable,
    /// The operation did not finish in its time budget; retrying may succeed.
    Timeout,
    /// The backend answered with an error that fits no other kind.
    Backend,
}

impl ErrorKind {
    /// Whether the same call may succeed if it is retried later.
    ///
    /// ```
    /// assert!(sandloom_sdk_infra::ErrorKind::Unavailable.is_retryable());
    /// ```
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Unavailable | Self::Timeout)
    }

    /// A short lowercase name for logs and metrics, stable across versions.
    ///
    /// ```
    /// assert_eq!(sandloom_sdk_infra::ErrorKind::NotFound.as_str(), "not_found");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported",
            Self::NotFound => "not_found",
            Self::InvalidInput => "invalid_input",
            Self::Conflict => "conflict",
            Self::Stopped => "stopped",
            Self::Unavailable => "unavailable",
            Self::Timeout => "timeout",
            Self::Backend => "backend",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operation failed. Carries the [`ErrorKind`], the capability it happened in and a message
/// that never contains secrets (drivers are held to that by their conformance kit).
///
/// ```
/// use sandloom_sdk_infra::{ErrorKind, InfraError};
///
/// let err = InfraError::unsupported("cache", "increment", "increment");
/// assert_eq!(err.kind(), ErrorKind::Unsupported);
/// assert_eq!(err.capability(), "cache");
/// assert_eq!(
///     err.to_string(),
///     "cache: `increment` is not supported: the driver does not declare feature `increment`"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{capability}: {message}")]
pub struct InfraError {
    kind: ErrorKind,
    capability: &'static str,
    message: Cow<'static, str>,
    #[source]
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl InfraError {
    /// A new error of `kind` in `capability` with a message for people.
    ///
    /// ```
    /// use sandloom_sdk_infra::{ErrorKind, InfraError};
    /// let err = InfraError::new(ErrorKind::Conflict, "taskqueue", "reservation expired");
    /// assert_eq!(err.message(), "reservation expired");
    /// ```
    pub fn new(
        kind: ErrorKind,
        capability: &'static str,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            kind,
            capability,
            message: message.into(),
            source: None,
        }
    }

    /// Attach the underlying cause (a client crate's error, an I/O error).
    ///
    /// ```
    /// use sandloom_sdk_infra::InfraError;
    /// use std::error::Error as _;
    /// let io = std::io::Error::other("connection reset");
    /// let err = InfraError::unavailable("cache", "backend went away").with_source(io);
    /// assert!(err.source().is_some());
    /// ```
    #[must_use]
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The optional `operation` of `capability` needs `feature`, which the driver did not declare.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::unsupported("cache", "set_with_ttl", "ttl");
    /// assert_eq!(e.kind(), sandloom_sdk_infra::ErrorKind::Unsupported);
    /// ```
    pub fn unsupported(capability: &'static str, operation: &str, feature: &str) -> Self {
        Self::new(
            ErrorKind::Unsupported,
            capability,
            format!(
                "`{operation}` is not supported: the driver does not declare feature `{feature}`"
            ),
        )
    }

    /// Something named does not exist.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::not_found("objectstore", "no object `x`");
    /// assert_eq!(e.kind(), sandloom_sdk_infra::ErrorKind::NotFound);
    /// ```
    pub fn not_found(capability: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::NotFound, capability, message)
    }

    /// The caller's input breaks the contract.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::invalid_input("cache", "empty key");
    /// assert_eq!(e.kind(), sandloom_sdk_infra::ErrorKind::InvalidInput);
    /// ```
    pub fn invalid_input(capability: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::InvalidInput, capability, message)
    }

    /// The state changed under the caller.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::conflict("lock", "lease expired");
    /// assert_eq!(e.kind(), sandloom_sdk_infra::ErrorKind::Conflict);
    /// ```
    pub fn conflict(capability: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Conflict, capability, message)
    }

    /// The driver was stopped.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::stopped("cache");
    /// assert_eq!(e.to_string(), "cache: the driver has been stopped");
    /// ```
    pub fn stopped(capability: &'static str) -> Self {
        Self::new(
            ErrorKind::Stopped,
            capability,
            "the driver has been stopped",
        )
    }

    /// The backend is unreachable for now.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::unavailable("cache", "connection refused");
    /// assert!(e.kind().is_retryable());
    /// ```
    pub fn unavailable(capability: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Unavailable, capability, message)
    }

    /// What kind of failure this is.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::stopped("cache");
    /// assert_eq!(e.kind(), sandloom_sdk_infra::ErrorKind::Stopped);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The capability whose operation failed (`cache`, `objectstore`, …).
    ///
    /// ```
    /// assert_eq!(sandloom_sdk_infra::InfraError::stopped("lock").capability(), "lock");
    /// ```
    pub fn capability(&self) -> &'static str {
        self.capability
    }

    /// The message, without the capability prefix.
    ///
    /// ```
    /// let e = sandloom_sdk_infra::InfraError::not_found("cache", "gone");
    /// assert_eq!(e.message(), "gone");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The result of every operation.
///
/// ```
/// use sandloom_sdk_infra::{InfraError, InfraResult};
///
/// fn parse_count(text: &str) -> InfraResult<u32> {
///     text.parse()
///         .map_err(|_| InfraError::invalid_input("cache", format!("{text:?} is not a count")))
/// }
/// assert_eq!(parse_count("3").unwrap(), 3);
/// assert!(parse_count("three").is_err());
/// ```
pub type InfraResult<T> = Result<T, InfraError>;
