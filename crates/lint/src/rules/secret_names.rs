//! Which option names read as a credential (O002).
//!
//! The rule is by words, not substrings, so that a name that merely contains one is not
//! refused: `prefix`, `key_prefix`, `idempotency_key`, `routing_key`, `access_key_id` (a public
//! identifier) and `password_file` (a path) are not credentials. A name reads as one when:
//!
//! - its last word is `password`, `passwd`, `secret`, `token`, `credential(s)` or `apikey`
//!   (`password`, `admin_password`, `client_secret`, `session_token`);
//! - its last word is `key` and an earlier word says what kind: `api`, `access`, `secret`,
//!   `private`, `signing`, `auth`, `encryption`, `master`, `client`, `hmac`, `shared` or
//!   `session` (`api_key`, `secret_access_key`, `private_key`).
//!
//! Words are split at `_`, `-` and lower-to-upper case changes (`apiKey`, from a
//! `#[serde(rename)]`), and compared lowercased.

/// Last words that always name a credential.
const CREDENTIAL_WORDS: [&str; 7] = [
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "credentials",
    "apikey",
];

/// Words before a final `key` that make it a credential, not a lookup key.
const KEY_KINDS: [&str; 12] = [
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "auth",
    "encryption",
    "master",
    "client",
    "hmac",
    "shared",
    "session",
];

/// Whether an option called `name` holds a credential by its name.
pub(super) fn reads_as_credential(name: &str) -> bool {
    let words = words(name);
    let Some((last, earlier)) = words.split_last() else {
        return false;
    };
    CREDENTIAL_WORDS.contains(&last.as_str())
        || (last == "key" && earlier.iter().any(|w| KEY_KINDS.contains(&w.as_str())))
}

/// `name` split into lowercase words.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' {
            words.push(std::mem::take(&mut word));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.push(word);
    words.retain(|w| !w.is_empty());
    words
}

#[cfg(test)]
mod tests {
    use super::reads_as_credential;

    #[test]
    fn credentials_by_their_names() {
        for name in [
            "password",
            "passwd",
            "secret",
            "token",
            "api_key",
            "apikey",
            "apiKey",
            "access_key",
            "secret_key",
            "private_key",
            "credentials",
            "admin_password",
            "client_secret",
            "session_token",
            "secret_access_key",
            "signing-key",
        ] {
            assert!(
                reads_as_credential(name),
                "{name} should read as a credential"
            );
        }
    }

    #[test]
    fn names_that_only_contain_a_credential_word() {
        for name in [
            "prefix",
            "key_prefix",
            "key",
            "idempotency_key",
            "routing_key",
            "partition_key",
            "access_key_id",
            "password_file",
            "token_ttl_ms",
            "tokens",
            "secretive",
            "",
            "_",
        ] {
            assert!(
                !reads_as_credential(name),
                "{name} should not read as a credential"
            );
        }
    }
}
