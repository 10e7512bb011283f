//! Obligations on keys: unusual keys kept exactly, invalid ones refused by every operation.

use std::path::{Path, PathBuf};

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ListOptions, PutCondition};

use super::ObjectStoreSettings;
use super::support::{describe, expect_listing, get_exact};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

/// Keys every backend should store as they are (no characters Windows file names refuse).
pub(super) fn unusual_keys() -> Vec<String> {
    let mut keys: Vec<String> = [
        "unusual/with space",
        "unusual/ключ",
        "unusual/鍵",
        "unusual/🔑",
        "unusual/café",
        "unusual/cafe\u{301}",
        "unusual/percent%20and+plus",
        "unusual/sym=&@!$'(),;~#",
        "unusual/..dots",
        "unusual/.hidden",
        "unusual/.../three-dots",
        "unusual/trailing.",
        "unusual/-dash",
        "unusual/UPPER",
        "unusual/upper",
        "unusual/deep/1/2/3/4/5/6/7/8/9",
        // Each the other's encoding or decoding, as a URL, a form or a path would have it.
        "unusual/enc/a b",
        "unusual/enc/a%20b",
        "unusual/enc/a+b",
        "unusual/enc/a%2Bb",
        "unusual/enc/a%2Fb",
        "unusual/enc/a/b",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let segment = "x".repeat(100);
    keys.push(format!("unusual/long/{}", [segment.as_str(); 8].join("/")));
    keys
}

pub(super) async fn unusual_keys_round_trip<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let keys = unusual_keys();
    for (n, key) in keys.iter().enumerate() {
        call!(
            format!("put({key:?})"),
            store.put(key, Bytes::from(format!("{n}:{key}")))
        );
    }
    for (n, key) in keys.iter().enumerate() {
        let got = call!(format!("get({key:?})"), store.get(key));
        ensure!(
            got == format!("{n}:{key}").as_bytes(),
            "get({key:?}) answered {}: keys must be distinct and exact",
            describe(&got)
        );
        let head = call!(format!("head({key:?})"), store.head(key));
        ensure!(
            head.key == *key,
            "head({key:?}) reports the key {:?}",
            head.key
        );
    }
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    expect_listing(store, "unusual/", None, &expected).await?;
    expect_listing(store, "unusual/enc/a/", None, &["unusual/enc/a/b"]).await?;
    // Every other key is deleted: each of those is gone, each of the others is still there,
    // so a driver that encodes a key one way to write and another way to delete is seen.
    let gone: Vec<(usize, &String)> = keys.iter().enumerate().step_by(2).collect();
    let kept: Vec<(usize, &String)> = keys.iter().enumerate().skip(1).step_by(2).collect();
    if i.declares(CONDITIONAL_PUT) {
        for key in &keys {
            let answer = store
                .put_if(key, Bytes::from_static(b"again"), PutCondition::IfAbsent)
                .await;
            expect_kind(
                &format!("put_if({key:?}, IfAbsent) of an existing object"),
                ErrorKind::Conflict,
                &answer,
            )?;
        }
    }
    for (_, key) in &gone {
        call!(format!("delete({key:?})"), store.delete(key));
    }
    for (_, key) in &gone {
        let got = store.get(key).await;
        expect_kind(
            &format!("get({key:?}) after its delete"),
            ErrorKind::NotFound,
            &got,
        )?;
        let head = store.head(key).await;
        expect_kind(
            &format!("head({key:?}) after its delete"),
            ErrorKind::NotFound,
            &head,
        )?;
    }
    for (n, key) in &kept {
        get_exact(store, key, format!("{n}:{key}").as_bytes()).await?;
    }
    let expected: Vec<&str> = kept.iter().map(|(_, key)| key.as_str()).collect();
    expect_listing(store, "unusual/", None, &expected).await?;
    Ok(())
}

/// Keys every driver refuses. `kept` is an object the kit writes first: keys that a path
/// normalizer would turn into it must not reach it.
pub(super) const INVALID_KEYS: &[&str] = &[
    "",
    "/",
    "/absolute",
    "/kept",
    ".",
    "..",
    "./kept",
    "kept/.",
    "a/./b",
    "x/../kept",
    "a/..",
    "kept/",
    "kept//",
    "a//b",
    "//a",
    "\0",
    "a\0b",
    "kept\0",
    "a\\b",
    "\\kept",
];

/// Keys that would leave the store's root if used as relative paths (`{}` is the marker).
pub(super) const ESCAPING_KEYS: &[&str] = &["../{}", "../../{}", "a/../../{}", "..\\{}"];

pub(super) async fn invalid_keys_are_refused<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    call!(
        "put(\"kept\")",
        store.put("kept", Bytes::from_static(b"kept"))
    );
    let marker = format!("escape-{}", i.request.namespace);
    let escaping: Vec<String> = ESCAPING_KEYS
        .iter()
        .map(|key| key.replace("{}", &marker))
        .collect();
    let keys = INVALID_KEYS
        .iter()
        .copied()
        .chain(escaping.iter().map(String::as_str));
    let invalid = ErrorKind::InvalidInput;
    for key in keys {
        let data = || Bytes::from_static(b"must not be written");
        expect_kind(
            &format!("put({key:?})"),
            invalid,
            &store.put(key, data()).await,
        )?;
        expect_kind(&format!("get({key:?})"), invalid, &store.get(key).await)?;
        expect_kind(&format!("head({key:?})"), invalid, &store.head(key).await)?;
        expect_kind(
            &format!("delete({key:?})"),
            invalid,
            &store.delete(key).await,
        )?;
        if i.declares(CONDITIONAL_PUT) {
            expect_kind(
                &format!("put_if({key:?}, IfAbsent)"),
                invalid,
                &store.put_if(key, data(), PutCondition::IfAbsent).await,
            )?;
        }
    }
    expect_kind(
        "list with a prefix holding a NUL",
        invalid,
        &store.list("a\0", ListOptions::default()).await,
    )?;
    expect_listing(store, "", None, &["kept"]).await?;
    get_exact(store, "kept", b"kept").await?;
    let escaped = escaped_files(&i.request.scratch_dir, &marker);
    for path in &escaped {
        let _ = std::fs::remove_file(path);
    }
    ensure!(
        escaped.is_empty(),
        "keys with `..` wrote outside the store: {escaped:?}"
    );
    Ok(())
}

/// Files named with `marker` in `scratch` (at any depth) or beside it.
fn escaped_files(scratch: &Path, marker: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, marker: &str, depth: usize, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().contains(marker) {
                found.push(path.clone());
            }
            if depth > 0 && entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&path, marker, depth - 1, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(scratch, marker, 16, &mut found);
    if let Some(parent) = scratch.parent() {
        walk(parent, marker, 0, &mut found);
    }
    found
}

/// Keys that differ from `near/key` by case, a trailing or leading space, a trailing dot, a
/// byte more or less, or (the last two) only in Unicode normalization (NFC, NFD).
pub(super) const NEAR_KEYS: &[&str] = &[
    "near/key",
    "near/Key",
    "near/KEY",
    "near/key ",
    "near/ key",
    "near/key.",
    "near/key2",
    "near/ke",
    "near/\u{e9}",
    "near/e\u{301}",
];

pub(super) async fn near_identical_keys_are_independent<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let content = |key: &str| format!("<{key}>");
    for key in NEAR_KEYS {
        call!(
            format!("put({key:?})"),
            store.put(key, Bytes::from(content(key)))
        );
    }
    let check_all = |keys: Vec<&'static str>| async move {
        for key in &keys {
            get_exact(store, key, content(key).as_bytes()).await?;
            let head = call!(format!("head({key:?})"), store.head(key));
            ensure!(
                head.key == *key && head.size == content(key).len() as u64,
                "head({key:?}) reports key {:?} and size {}: keys that differ only a little are \
                 distinct objects",
                head.key,
                head.size
            );
        }
        expect_listing(store, "near/", None, &keys).await?;
        let starting: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|key| key.starts_with("near/key"))
            .collect();
        expect_listing(store, "near/key", None, &starting).await?;
        Ok::<(), String>(())
    };
    check_all(NEAR_KEYS.to_vec()).await?;
    // Deleting one leaves every near key as it was.
    call!("delete(\"near/key\")", store.delete("near/key"));
    expect_kind(
        "get(\"near/key\") after its delete",
        ErrorKind::NotFound,
        &store.get("near/key").await,
    )?;
    check_all(NEAR_KEYS[1..].to_vec()).await?;
    if !i.declares(CONDITIONAL_PUT) {
        return Ok(());
    }
    // Conditions see the object of the exact key, not one that starts with it or resembles it.
    call!(
        "put_if(\"near/key\", IfAbsent) while near keys exist",
        store.put_if(
            "near/key",
            Bytes::from(content("near/key")),
            PutCondition::IfAbsent
        )
    );
    for key in NEAR_KEYS {
        expect_kind(
            &format!("put_if({key:?}, IfAbsent) of an existing key"),
            ErrorKind::Conflict,
            &store
                .put_if(
                    key,
                    Bytes::from_static(b"must not be written"),
                    PutCondition::IfAbsent,
                )
                .await,
        )?;
    }
    call!("delete(\"near/\\u{e9}\")", store.delete("near/\u{e9}"));
    call!(
        "put_if(\"near/\\u{e9}\", IfAbsent) while its NFD form exists",
        store.put_if(
            "near/\u{e9}",
            Bytes::from(content("near/\u{e9}")),
            PutCondition::IfAbsent
        )
    );
    if i.declares(sandloom_sdk_infra::objectstore::ETAG) {
        let etag = call!("head(\"near/Key\")", store.head("near/Key"))
            .etag
            .unwrap_or_default();
        expect_kind(
            "put_if(\"near/key\", IfMatch) of the etag of \"near/Key\"",
            ErrorKind::Conflict,
            &store
                .put_if(
                    "near/key",
                    Bytes::from_static(b"must not be written"),
                    PutCondition::IfMatch(etag),
                )
                .await,
        )?;
    }
    check_all(NEAR_KEYS.to_vec()).await
}
