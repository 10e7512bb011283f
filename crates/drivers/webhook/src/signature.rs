//! HMAC-SHA256 signatures of requests: what the driver sends and what receivers check.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

/// Header with the signature, `sha256=<64 lowercase hex digits>`; sent when `secret` is set.
///
/// ```
/// assert_eq!(sandloom_driver_webhook::SIGNATURE_HEADER, "x-sandloom-signature");
/// ```
pub const SIGNATURE_HEADER: &str = "x-sandloom-signature";

/// Header with the time of the attempt, in whole seconds since the Unix epoch; part of the
/// signed material, so a captured request cannot be replayed later unnoticed.
///
/// ```
/// assert_eq!(sandloom_driver_webhook::TIMESTAMP_HEADER, "x-sandloom-timestamp");
/// ```
pub const TIMESTAMP_HEADER: &str = "x-sandloom-timestamp";

/// Header with the message id: the same on every attempt of one message, and equal to the
/// body's `id` and to the receipt id.
///
/// ```
/// assert_eq!(sandloom_driver_webhook::MESSAGE_ID_HEADER, "x-sandloom-message-id");
/// ```
pub const MESSAGE_ID_HEADER: &str = "x-sandloom-message-id";

/// Header with the message id again, under the name generic idempotency middleware reads.
///
/// ```
/// assert_eq!(sandloom_driver_webhook::IDEMPOTENCY_KEY_HEADER, "idempotency-key");
/// ```
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// What the value of [`SIGNATURE_HEADER`] starts with.
const PREFIX: &str = "sha256=";

type HmacSha256 = Hmac<Sha256>;

/// The HMAC keyed once with the secret; cloned per signature, so the key schedule is not
/// recomputed for every request.
#[derive(Clone)]
pub(crate) struct Signer {
    keyed: HmacSha256,
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signer(<redacted>)")
    }
}

impl Signer {
    pub(crate) fn new(secret: &[u8]) -> Self {
        Self {
            keyed: keyed(secret),
        }
    }

    /// The value of [`SIGNATURE_HEADER`] for `timestamp` and `body`.
    pub(crate) fn sign(&self, timestamp: &str, body: &[u8]) -> String {
        let mut mac = self.keyed.clone();
        feed(&mut mac, timestamp, body);
        let tag = mac.finalize().into_bytes();
        let mut header = String::with_capacity(PREFIX.len() + 2 * tag.len());
        header.push_str(PREFIX);
        header.push_str(&hex::encode(tag));
        header
    }
}

fn keyed(secret: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length (long ones are hashed first), so this cannot fail; the
    // fallback keeps even an impossible failure from panicking.
    HmacSha256::new_from_slice(secret)
        .unwrap_or_else(|_| HmacSha256::new(&hmac::digest::Key::<HmacSha256>::default()))
}

/// The signed material: `<timestamp>.<body bytes>`.
fn feed(mac: &mut HmacSha256, timestamp: &str, body: &[u8]) {
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
}

/// The value of [`SIGNATURE_HEADER`] the driver sends for `body` at `timestamp`:
/// `sha256=` and the lowercase hex HMAC-SHA256, keyed with `secret`, of the timestamp, a `.`
/// and the exact body bytes. For receivers' tests; receivers check with [`verify_signature`].
///
/// ```
/// use sandloom_driver_webhook::{signature, verify_signature};
///
/// let header = signature("hunter2", "1700000000", br#"{"id":"1"}"#);
/// assert!(header.starts_with("sha256="));
/// assert_eq!(header.len(), 7 + 64);
/// assert!(verify_signature("hunter2", "1700000000", br#"{"id":"1"}"#, &header));
/// ```
pub fn signature(secret: impl AsRef<[u8]>, timestamp: &str, body: &[u8]) -> String {
    Signer::new(secret.as_ref()).sign(timestamp, body)
}

/// Whether `header` (the value of [`SIGNATURE_HEADER`]) is the signature of `body` at
/// `timestamp` (the value of [`TIMESTAMP_HEADER`]) with `secret`. Compares in constant time.
///
/// Pass the raw body bytes as received, before any JSON parsing. A valid signature proves the
/// sender knows the secret; to refuse replays, also check the timestamp with
/// [`timestamp_is_fresh`] and, to refuse duplicates, remember [`MESSAGE_ID_HEADER`] values.
///
/// ```
/// use sandloom_driver_webhook::{signature, verify_signature};
///
/// let body = br#"{"id":"5f0c","recipient":"ops","subject":null,"body":"hi","metadata":{}}"#;
/// let header = signature("hunter2", "1700000000", body);
/// assert!(verify_signature("hunter2", "1700000000", body, &header));
/// assert!(!verify_signature("wrong", "1700000000", body, &header));
/// assert!(!verify_signature("hunter2", "1700000001", body, &header)); // another time
/// assert!(!verify_signature("hunter2", "1700000000", b"{}", &header)); // another body
/// assert!(!verify_signature("hunter2", "1700000000", body, "sha256=zz")); // malformed
/// ```
pub fn verify_signature(
    secret: impl AsRef<[u8]>,
    timestamp: &str,
    body: &[u8],
    header: &str,
) -> bool {
    let Some(hex_tag) = header.trim().strip_prefix(PREFIX) else {
        return false;
    };
    let Ok(tag) = hex::decode(hex_tag) else {
        return false;
    };
    let mut mac = keyed(secret.as_ref());
    feed(&mut mac, timestamp, body);
    mac.verify_slice(&tag).is_ok()
}

/// Whether `timestamp` (the value of [`TIMESTAMP_HEADER`]) is within `tolerance` of this
/// machine's clock, either way. Five minutes is a common tolerance; the driver stamps every
/// attempt afresh, so retries stay fresh.
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use sandloom_driver_webhook::timestamp_is_fresh;
///
/// let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
/// let five_minutes = Duration::from_secs(300);
/// assert!(timestamp_is_fresh(&now.to_string(), five_minutes));
/// assert!(!timestamp_is_fresh(&(now - 3600).to_string(), five_minutes));
/// assert!(!timestamp_is_fresh("yesterday", five_minutes));
/// ```
pub fn timestamp_is_fresh(timestamp: &str, tolerance: Duration) -> bool {
    let Ok(seconds) = timestamp.trim().parse::<u64>() else {
        return false;
    };
    let now = unix_seconds(SystemTime::now());
    now.abs_diff(seconds) <= tolerance.as_secs()
}

/// Whole seconds since the Unix epoch (0 for a clock set before it).
pub(crate) fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_an_independently_computed_vector() {
        // Python: hmac.new(b"hunter2-secret", b'1700000000.{"id":"1"}', hashlib.sha256)
        assert_eq!(
            signature("hunter2-secret", "1700000000", br#"{"id":"1"}"#),
            "sha256=e403238f22072353e562c847cb166b40a24702592f44ec762bfab552b788a623"
        );
    }

    #[test]
    fn verification_accepts_uppercase_hex_and_surrounding_spaces() {
        let header = signature("s", "1", b"body");
        let upper = format!(" sha256={} ", header[7..].to_uppercase());
        assert!(verify_signature("s", "1", b"body", &upper));
        assert!(!verify_signature("s", "1", b"body", &header[7..]));
        assert!(!verify_signature("s", "1", b"body", "sha256="));
        assert!(!verify_signature("s", "1", b"body", &header[..20]));
    }
}
