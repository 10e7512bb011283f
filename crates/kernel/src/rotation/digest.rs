//! The keyed digest a polled store's secrets are compared by when the store has no versions:
//! HMAC-SHA-256 under a key drawn once per process. Only the digest is kept, never the value;
//! without the key (which never leaves the process) a digest says nothing about the value, not
//! even whether two processes hold the same one.

use std::sync::OnceLock;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A digest of one value.
pub(crate) type Digest = [u8; 32];

/// The per-process key, drawn from the operating system on first use.
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut key = [0_u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No system randomness (practically unheard of on the platforms Tokio runs on):
            // fall back to the std hasher's per-process random keys, still unknown outside.
            use std::hash::{BuildHasher, Hasher};
            for chunk in key.chunks_mut(8) {
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_usize(chunk.as_ptr() as usize);
                chunk.copy_from_slice(&hasher.finish().to_le_bytes());
            }
        }
        key
    })
}

/// The keyed digest of `value`. The hasher's buffers are zeroed when it is dropped (the
/// `zeroize` feature of `hmac` and `sha2`); the caller zeroes `value`.
pub(crate) fn digest(value: &[u8]) -> Digest {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key()).expect("HMAC takes any key length");
    mac.update(value);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use sha2::Digest as _;

    use super::digest;

    #[test]
    fn equal_values_equal_digests_and_the_digest_is_not_the_plain_hash() {
        assert_eq!(digest(b"s3cr3t"), digest(b"s3cr3t"));
        assert_ne!(digest(b"s3cr3t"), digest(b"s3cr3u"));
        assert_ne!(digest(b""), digest(b"\0"));
        // Keyed: not SHA-256 of the value (which anyone could compute from a guess).
        let plain: [u8; 32] = sha2::Sha256::digest(b"s3cr3t").into();
        assert_ne!(digest(b"s3cr3t"), plain);
    }
}
