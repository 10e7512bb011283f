//! The obligation `one_key_rule_for_every_operation`: a key gets the same verdict from every
//! operation, and a list prefix that starts no valid key is refused.

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{
    CONDITIONAL_PUT, ListOptions, MAX_KEY_BYTES, MAX_SEGMENT_BYTES, PutCondition,
};
use sandloom_sdk_infra::{ErrorKind, InfraResult};

use super::ObjectStoreSettings;
use super::support::{expect_listing, get_exact};
use crate::harness::Instance;
use crate::{ensure, expect_kind};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

/// Keys that `validate_key` refuses for their length alone, which a store that checks keys
/// only where its backend fails would take for fine in some operations.
pub(super) fn too_long_keys() -> Vec<String> {
    let short = "k".repeat(200);
    vec![
        // 3,000 segments, 5,999 bytes: the key the crash campaign found.
        "a/".repeat(2999) + "a",
        "s".repeat(MAX_SEGMENT_BYTES + 1),
        format!("long/{}", "s".repeat(MAX_SEGMENT_BYTES + 1)),
        vec![short; 6].join("/"),
        "x/".repeat(MAX_KEY_BYTES / 2) + "x",
    ]
}

/// Keys `validate_key` accepts that some backends cannot hold (the longest key and segment,
/// control characters, names a file system or a driver reserves): a driver may refuse them,
/// but then in every operation.
pub(super) fn edge_keys() -> Vec<String> {
    let segment = "e".repeat(MAX_SEGMENT_BYTES - 1);
    let longest = [segment.as_str(); 4].join("/") + "/eeee";
    debug_assert_eq!(longest.len(), MAX_KEY_BYTES);
    vec![
        "e".repeat(MAX_SEGMENT_BYTES),
        longest,
        "edge/tab\there".to_owned(),
        "edge/line\nbreak".to_owned(),
        ".sandloom-tmp/edge".to_owned(),
        "edge/a:b*c?".to_owned(),
        "edge/CON".to_owned(),
    ]
}

/// Prefixes that start no valid key: every store answers `InvalidInput`, not an empty page.
pub(super) fn invalid_prefixes() -> Vec<String> {
    let mut prefixes: Vec<String> = [
        "/", "/a", "../", "./", "./a", "a//", "//", "a/./", "a/../", "a/../b", "a\\", "\\", "\0",
        "a\0",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    prefixes.push("p".repeat(MAX_SEGMENT_BYTES + 1));
    // 1,024 bytes ending in `/`: a key would need one more byte.
    prefixes.push("a/".repeat(MAX_KEY_BYTES / 2));
    prefixes.push("x/".repeat(MAX_KEY_BYTES));
    prefixes
}

/// Prefixes that are no key but start valid keys: every store must list with them.
pub(super) const VALID_PREFIXES: &[&str] = &[
    "", ".", "..", "dots/", "dots/.", "dots/..", "dots/..x", "dots/.x",
];

fn refused<T>(result: &InfraResult<T>) -> bool {
    matches!(result, Err(error) if error.kind() == ErrorKind::InvalidInput)
}

/// What an operation answered, cut short: the answers to long keys repeat the key.
fn verdict<T: std::fmt::Debug>(result: &InfraResult<T>) -> String {
    let answer = match result {
        Ok(value) => format!("succeeded with {value:?}"),
        Err(error) => format!("answered {}: {error}", error.kind()),
    };
    match answer.char_indices().nth(160) {
        Some((end, _)) => format!("{}…", &answer[..end]),
        None => answer,
    }
}

/// Short enough to read in a failure: long keys are named by their length.
fn name(key: &str) -> String {
    if key.len() <= 64 {
        format!("{key:?}")
    } else {
        let start: String = key.chars().take(24).collect();
        format!("{start:?}… ({} bytes)", key.len())
    }
}

/// What `put`, `get`, `head`, `delete` (and `put_if` when declared) answer for `key`, each
/// marked with whether it refused the key as `InvalidInput`.
async fn verdicts<T: ObjectStoreProvider>(
    i: &Instance<T>,
    key: &str,
) -> Vec<(&'static str, bool, String)> {
    let store = &*i.driver;
    let data = || Bytes::from_static(b"one key rule");
    let mut answers = Vec::new();
    let put = store.put(key, data()).await;
    answers.push(("put", refused(&put), verdict(&put)));
    let get = store.get(key).await;
    answers.push(("get", refused(&get), verdict(&get)));
    let head = store.head(key).await;
    answers.push(("head", refused(&head), verdict(&head)));
    if i.declares(CONDITIONAL_PUT) {
        let put_if = store.put_if(key, data(), PutCondition::IfAbsent).await;
        answers.push(("put_if", refused(&put_if), verdict(&put_if)));
    }
    let delete = store.delete(key).await;
    answers.push(("delete", refused(&delete), verdict(&delete)));
    answers
}

pub(super) async fn one_key_rule_for_every_operation<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    for key in too_long_keys() {
        for (operation, refused, answer) in verdicts(i, &key).await {
            ensure!(
                refused,
                "{operation}({}) {answer}: a key `validate_key` refuses must answer {} in every \
                 operation",
                name(&key),
                ErrorKind::InvalidInput
            );
        }
    }
    for key in edge_keys() {
        // Written first, then read: a store that accepts it must give it back.
        let data = Bytes::from_static(b"edge");
        let put = store.put(&key, data.clone()).await;
        if put.is_ok() {
            get_exact(store, &key, &data).await?;
            // A key is a valid prefix, even one that leaves no room to grow: it lists itself.
            expect_listing(store, &key, None, &[key.as_str()]).await?;
        }
        let answers = verdicts(i, &key).await;
        let put_refused = refused(&put);
        for (operation, refused, answer) in &answers {
            ensure!(
                *refused == put_refused,
                "put({}) {}, but {operation} {answer}: a key must be refused (InvalidInput) by \
                 every operation or by none",
                name(&key),
                verdict(&put)
            );
        }
        if !put_refused {
            // The verdicts ended with a delete; make sure nothing is left for the listing below.
            let _ = store.delete(&key).await;
        }
    }
    for prefix in invalid_prefixes() {
        expect_kind(
            &format!("list({})", name(&prefix)),
            ErrorKind::InvalidInput,
            &store.list(&prefix, ListOptions::default()).await,
        )?;
    }
    for key in ["dots/..x", "dots/.x"] {
        let written = store.put(key, Bytes::from_static(b"dots")).await;
        if let Err(error) = written {
            return Err(format!("put({key:?}) failed: {error}"));
        }
    }
    for prefix in VALID_PREFIXES {
        let listed = store.list(prefix, ListOptions::default()).await;
        if let Err(error) = &listed {
            return Err(format!(
                "list({prefix:?}) answered {}: {error}; a prefix that starts a valid key must list",
                error.kind()
            ));
        }
    }
    expect_listing(store, "dots/..", None, &["dots/..x"]).await?;
    expect_listing(store, "dots/.", None, &["dots/..x", "dots/.x"]).await?;
    expect_listing(store, "", None, &["dots/..x", "dots/.x"]).await?;
    Ok(())
}
