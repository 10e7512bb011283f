//! The object-key rule and the list-prefix rule, held to their definitions by property tests.

use proptest::prelude::*;
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::objectstore::{
    MAX_KEY_BYTES, MAX_SEGMENT_BYTES, validate_key, validate_prefix,
};

/// The key rule as its documentation states it, written independently of `validate_key`.
fn documented_key_rule(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && key.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment.len() <= MAX_SEGMENT_BYTES
                && !segment.contains(['\0', '\\'])
        })
}

/// The prefix rule as defined: empty, or the start of at least one valid key.
fn starts_a_valid_key(prefix: &str) -> bool {
    prefix.is_empty() || validate_key(prefix).is_ok() || validate_key(&format!("{prefix}x")).is_ok()
}

/// Text built to reach every branch of the rules: short segments of the characters that
/// matter (`.`, `/`, `\`, NUL, a two-byte letter), long segments near 255 bytes, and many
/// segments near 1024 bytes in all.
fn text() -> impl Strategy<Value = String> {
    let short = "[ab./\\\\\\x00é]{0,6}";
    let long = (MAX_SEGMENT_BYTES - 3..=MAX_SEGMENT_BYTES + 2).prop_map(|n| "x".repeat(n));
    let segment = prop_oneof![4 => short.prop_map(String::from), 1 => long];
    let joined = prop::collection::vec(segment, 0..=6).prop_map(|segments| segments.join("/"));
    let near_the_limit = (1..=8_usize, MAX_KEY_BYTES - 4..=MAX_KEY_BYTES + 4, short).prop_map(
        |(width, total, tail)| {
            let mut key = String::new();
            while key.len() + tail.len() < total {
                key.push_str(&"y".repeat(width));
                key.push('/');
            }
            key.push_str(&tail);
            key
        },
    );
    prop_oneof![3 => joined, 1 => near_the_limit, 1 => "\\PC{0,12}"]
}

/// Valid keys: one to six segments that are neither `.` nor `..`, some near 255 bytes.
fn valid_key() -> impl Strategy<Value = String> {
    let short = "[ab.é-]{1,6}".prop_filter("not a dot segment", |s| s != "." && s != "..");
    let long = (MAX_SEGMENT_BYTES - 3..=MAX_SEGMENT_BYTES).prop_map(|n| "x".repeat(n));
    let segment = prop_oneof![4 => short, 1 => long];
    prop::collection::vec(segment, 1..=6)
        .prop_map(|segments| segments.join("/"))
        .prop_filter("at most 1024 bytes", |key| key.len() <= MAX_KEY_BYTES)
}

/// Modest case counts, and no regression files written into the source tree.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn validate_key_is_the_documented_rule(key in text()) {
        let verdict = validate_key(&key);
        prop_assert_eq!(verdict.is_ok(), documented_key_rule(&key), "{:?}", key);
        if let Err(err) = verdict {
            prop_assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn a_prefix_is_valid_exactly_when_it_starts_a_valid_key(prefix in text()) {
        let verdict = validate_prefix(&prefix);
        prop_assert_eq!(verdict.is_ok(), starts_a_valid_key(&prefix), "{:?}", prefix);
        if let Err(err) = verdict {
            prop_assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn every_start_of_a_valid_key_is_a_valid_prefix(key in valid_key()) {
        prop_assert!(validate_key(&key).is_ok(), "{:?}", key);
        for (at, _) in key.char_indices().chain([(key.len(), ' ')]) {
            let prefix = &key[..at];
            prop_assert!(validate_prefix(prefix).is_ok(), "{:?} starts {:?}", prefix, key);
        }
    }
}

#[test]
fn the_limits_are_exact() {
    let segment = "s".repeat(MAX_SEGMENT_BYTES);
    assert!(validate_key(&segment).is_ok());
    assert!(validate_key(&format!("{segment}s")).is_err());
    // Four segments of 254 bytes and their slashes: 1020 bytes, room for four more.
    let segment = "t".repeat(MAX_SEGMENT_BYTES - 1);
    let base = [segment.as_str(); 4].join("/") + "/";
    assert_eq!(base.len(), MAX_KEY_BYTES - 4);
    assert!(validate_key(&format!("{base}kkkk")).is_ok());
    assert!(validate_key(&format!("{base}kkkkk")).is_err());
    for (prefix, valid) in [
        (format!("{base}kkkk"), true),
        (format!("{base}kkkkk"), false),
        // A prefix ending in `/`, `.` or `..` needs a byte more to become a key.
        (format!("{base}kk/"), true),
        (format!("{base}kkk/"), false),
        (format!("{base}k/."), true),
        (format!("{base}kk/."), false),
        (format!("{base}.."), true),
        (format!("{base}k/.."), false),
    ] {
        assert_eq!(
            validate_prefix(&prefix).is_ok(),
            valid,
            "{} bytes",
            prefix.len()
        );
    }
    // The 3,000-segment key of the crash campaign.
    let deep = "a/".repeat(2999) + "a";
    assert_eq!(
        validate_key(&deep).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}
