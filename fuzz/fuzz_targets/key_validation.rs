//! The object-key rule and the list-prefix rule agree: a valid key is a valid prefix, and so is
//! every start of it (each ending at a `/` in particular); a prefix is valid exactly when it is
//! empty or starts a valid key; every refusal is `InvalidInput`. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::objectstore::{validate_key, validate_prefix};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let key = validate_key(text);
    let prefix = validate_prefix(text);
    for err in [&key, &prefix].into_iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{text:?}: {err}");
    }
    let starts_a_key = text.is_empty() || key.is_ok() || validate_key(&format!("{text}x")).is_ok();
    assert_eq!(prefix.is_ok(), starts_a_key, "{text:?}: {prefix:?}");
    if key.is_ok() {
        for (at, c) in text.char_indices() {
            let start = &text[..at + c.len_utf8()];
            assert!(
                validate_prefix(start).is_ok(),
                "{start:?} starts key {text:?}"
            );
            if c == '/' {
                // The key before a `/` is itself a key.
                assert!(
                    validate_key(&text[..at]).is_ok(),
                    "{:?} of {text:?}",
                    &text[..at]
                );
            }
        }
    }
});
