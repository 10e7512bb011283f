//! Failures as the contract's error kinds: a request without an answer, an answer's status,
//! what the server said, and KV's "no such entry".

use reqwest::StatusCode;
use sandloom_driverkit::SecretUrl;
use sandloom_driverkit::sdk::{ErrorKind, InfraError};
use sandloom_driverkit::secrets::NAME;
use serde::Deserialize;

use crate::client::Answer;

/// A request that got no answer: `Timeout` when out of time, else `Unavailable`.
pub(crate) fn transport(address: &SecretUrl, path: &str, err: &reqwest::Error) -> InfraError {
    let kind = if err.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Unavailable
    };
    // The URL holds no credential (user-info is refused), but the chain says it once, here.
    let cause = sandloom_driverkit::error_chain(&err.without_url_ref());
    InfraError::new(
        kind,
        NAME,
        format!("secrets.vault: {path} at {address} got no answer: {cause}"),
    )
}

/// An answer that is not a success, as an error of the kind its status says. `NotFound`
/// is left to the caller, who knows which secret it is about.
pub(crate) fn refused(address: &SecretUrl, path: &str, answer: &Answer) -> InfraError {
    let said = said(&answer.body);
    let status = answer.status;
    let (kind, what) = match status.as_u16() {
        401 | 403 => (
            ErrorKind::Backend,
            "the token was refused (permission denied): check that it is valid and that \
             its policy grants `read` and `list` under the mount and prefix",
        ),
        404 => (
            ErrorKind::Backend,
            "no such route: is `mount` a KV version 2 engine this token can reach?",
        ),
        429 | 472 | 473 | 502 | 503 => (
            ErrorKind::Unavailable,
            "the server cannot serve now (sealed, standby, rate-limited or behind a failing proxy)",
        ),
        504 => (
            ErrorKind::Timeout,
            "a proxy in front of the server timed out",
        ),
        _ => (ErrorKind::Backend, "the server refused the request"),
    };
    InfraError::new(
        kind,
        NAME,
        format!("secrets.vault: {path} at {address} answered {status}: {what}{said}"),
    )
}

/// What the server said in `{"errors": […]}`, short, for a message: Vault's errors name paths
/// and policies, never a stored value.
fn said(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Errors {
        #[serde(default)]
        errors: Vec<String>,
    }
    let Ok(errors) = serde_json::from_slice::<Errors>(body) else {
        return String::new();
    };
    if errors.errors.is_empty() {
        return String::new();
    }
    let mut text = errors.errors.join("; ");
    if text.len() > 300 {
        let mut end = 300;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    format!(" (the server said: {text})")
}

/// Whether a 404 is KV's "no such entry" (`{"errors":[]}`) rather than a missing route or
/// mount, which says why in its errors.
pub(crate) fn is_missing_entry(answer: &Answer) -> bool {
    #[derive(Deserialize)]
    struct Errors {
        #[serde(default)]
        errors: Vec<serde::de::IgnoredAny>,
    }
    answer.status == StatusCode::NOT_FOUND
        && serde_json::from_slice::<Errors>(&answer.body).is_ok_and(|e| e.errors.is_empty())
}

/// A `Backend` error about `path`.
pub(crate) fn backend(path: &str, what: &str) -> InfraError {
    InfraError::new(
        ErrorKind::Backend,
        NAME,
        format!("secrets.vault: {path}: {what}"),
    )
}

trait WithoutUrlRef {
    /// The error's text without its URL: the chain is printed once, with the path.
    fn without_url_ref(&self) -> WithoutUrl<'_>;
}

impl WithoutUrlRef for reqwest::Error {
    fn without_url_ref(&self) -> WithoutUrl<'_> {
        WithoutUrl(self)
    }
}

/// A reqwest error shown without the URL it names.
#[derive(Debug)]
struct WithoutUrl<'a>(&'a reqwest::Error);

impl std::fmt::Display for WithoutUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        // reqwest writes "… for url (http://…)": cut that part, the message names the path.
        let text = text.split(" for url (").next().unwrap_or(&text);
        f.write_str(text)
    }
}

impl std::error::Error for WithoutUrl<'_> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(self.0)
    }
}
