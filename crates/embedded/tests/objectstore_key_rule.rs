//! One key rule for every operation and every embedded store: a key is refused with
//! `InvalidInput` by `put`, `put_if`, `get`, `head` and `delete` alike, exactly when
//! `validate_key` refuses it (and, in `objectstore.fs`, when its first segment is the staging
//! directory); a list prefix exactly when no such key starts with it.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sandloom_driverkit::objectstore::{
    ListOptions, MAX_KEY_BYTES, MAX_SEGMENT_BYTES, ObjectStore, PutCondition, validate_key,
    validate_prefix,
};
use sandloom_driverkit::sdk::{ErrorKind, InfraResult};
use sandloom_driverkit::{Driver, NoOptions};
use sandloom_embedded::MemoryObjectStore;
#[cfg(unix)]
use sandloom_embedded::{FsObjectStore, FsObjectStoreOptions};

/// A store under test and the key rule it documents.
struct Subject {
    name: &'static str,
    store: Box<dyn ObjectStore>,
    accepts: fn(&str) -> bool,
    /// Keeps the fs store's root alive.
    _dir: Option<tempfile::TempDir>,
}

fn memory_rule(key: &str) -> bool {
    validate_key(key).is_ok()
}

/// `objectstore.fs` also reserves its staging directory. (Its segment limit is the file
/// system's longest name, 255 bytes on the file systems tests run on, as `validate_key`'s.)
#[cfg(unix)]
fn fs_rule(key: &str) -> bool {
    validate_key(key).is_ok() && key.split('/').next() != Some(".sandloom-tmp")
}

/// The list-prefix rule of a store whose key rule is `accepts`: the prefix is empty or starts
/// at least one key the store accepts.
fn prefix_rule(accepts: fn(&str) -> bool, prefix: &str) -> bool {
    prefix.is_empty() || accepts(prefix) || accepts(&format!("{prefix}x"))
}

fn subjects(runtime: &tokio::runtime::Runtime) -> Vec<Subject> {
    let memory = MemoryObjectStore::from_options(NoOptions {}).unwrap();
    #[allow(unused_mut)]
    let mut subjects = vec![Subject {
        name: "memory",
        store: Box::new(memory),
        accepts: memory_rule,
        _dir: None,
    }];
    #[cfg(unix)]
    {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let fs = FsObjectStore::from_options(FsObjectStoreOptions { root }).unwrap();
        runtime.block_on(fs.start()).unwrap();
        subjects.push(Subject {
            name: "fs",
            store: Box::new(fs),
            accepts: fs_rule,
            _dir: Some(dir),
        });
    }
    let _ = runtime;
    subjects
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn refused<T>(result: &InfraResult<T>) -> bool {
    matches!(result, Err(err) if err.kind() == ErrorKind::InvalidInput)
}

/// Every operation gives `key` the verdict of the store's rule; a valid key round-trips and is
/// deleted again, so the store stays empty between cases.
async fn same_verdict_everywhere(subject: &Subject, key: &str) -> Result<(), TestCaseError> {
    let store = &*subject.store;
    let (name, valid) = (subject.name, (subject.accepts)(key));
    let put = store.put(key, "data".into()).await;
    prop_assert_eq!(
        refused(&put),
        !valid,
        "{}: put({:?}) answered {:?}",
        name,
        key,
        put
    );
    if valid {
        prop_assert!(put.is_ok(), "{}: put({:?}) answered {:?}", name, key, put);
    }
    let get = store.get(key).await;
    prop_assert_eq!(
        refused(&get),
        !valid,
        "{}: get({:?}) answered {:?}",
        name,
        key,
        get
    );
    let head = store.head(key).await;
    prop_assert_eq!(
        refused(&head),
        !valid,
        "{}: head({:?}) answered {:?}",
        name,
        key,
        head
    );
    let put_if = store.put_if(key, "x".into(), PutCondition::IfAbsent).await;
    prop_assert_eq!(
        refused(&put_if),
        !valid,
        "{}: put_if({:?}): {:?}",
        name,
        key,
        put_if
    );
    let delete = store.delete(key).await;
    prop_assert_eq!(
        refused(&delete),
        !valid,
        "{}: delete({:?}): {:?}",
        name,
        key,
        delete
    );
    if valid {
        prop_assert!(
            delete.is_ok(),
            "{}: delete({:?}) answered {:?}",
            name,
            key,
            delete
        );
        let gone = store.get(key).await;
        prop_assert!(
            matches!(&gone, Err(err) if err.kind() == ErrorKind::NotFound),
            "{}: get({:?}) after delete answered {:?}",
            name,
            key,
            gone
        );
    }
    Ok(())
}

async fn same_prefix_verdict(subject: &Subject, prefix: &str) -> Result<(), TestCaseError> {
    let valid = prefix_rule(subject.accepts, prefix);
    let list = subject.store.list(prefix, ListOptions::default()).await;
    prop_assert_eq!(
        refused(&list),
        !valid,
        "{}: list({:?}) answered {:?}",
        subject.name,
        prefix,
        list
    );
    if valid {
        prop_assert!(
            list.is_ok(),
            "{}: list({:?}): {:?}",
            subject.name,
            prefix,
            list
        );
    }
    Ok(())
}

/// Text built to reach every branch of the rules: short segments of the characters that
/// matter (`.`, `/`, `\`, NUL, a two-byte letter, the fs store's staging directory), segments
/// near 255 bytes, and keys of many segments near 1024 bytes.
fn text() -> impl Strategy<Value = String> {
    let short = prop_oneof![
        8 => "[ab./\\\\\\x00é]{0,5}",
        1 => Just(".sandloom-tmp".to_owned()),
    ];
    let long = (MAX_SEGMENT_BYTES - 2..=MAX_SEGMENT_BYTES + 1).prop_map(|n| "x".repeat(n));
    let segment = prop_oneof![6 => short.clone(), 1 => long];
    let joined = prop::collection::vec(segment, 1..=5).prop_map(|segments| segments.join("/"));
    let near_the_limit = (1..=40_usize, MAX_KEY_BYTES - 3..=MAX_KEY_BYTES + 3, short).prop_map(
        |(width, total, tail)| {
            let mut key = String::new();
            while key.len() + tail.len() < total {
                key.push_str(&"y".repeat(width));
                key.push('/');
            }
            key + &tail
        },
    );
    prop_oneof![6 => joined, 1 => near_the_limit]
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn every_operation_of_every_store_gives_a_key_the_same_verdict() {
    let runtime = runtime();
    let subjects = subjects(&runtime);
    let mut runner = proptest::test_runner::TestRunner::new(config(500));
    runner
        .run(&text(), |key| {
            runtime.block_on(async {
                for subject in &subjects {
                    same_verdict_everywhere(subject, &key).await?;
                }
                Ok(())
            })
        })
        .unwrap();
}

#[test]
fn every_store_gives_a_list_prefix_the_verdict_of_its_key_rule() {
    let runtime = runtime();
    let subjects = subjects(&runtime);
    let mut runner = proptest::test_runner::TestRunner::new(config(1000));
    runner
        .run(&text(), |prefix| {
            runtime.block_on(async {
                for subject in &subjects {
                    same_prefix_verdict(subject, &prefix).await?;
                }
                Ok(())
            })
        })
        .unwrap();
}

/// The inconsistencies the crash campaign found, as fixed cases: a 3,000-segment key was
/// `InvalidInput` for the fs store's `put`, `NotFound` for `get` and fine for `delete`; `../`
/// and `/` listed as empty pages.
#[test]
fn the_cases_of_issue_15() {
    let runtime = runtime();
    let subjects = subjects(&runtime);
    let deep = "a/".repeat(2999) + "a";
    let long_segment = "s".repeat(MAX_SEGMENT_BYTES + 1);
    let long_key = vec!["k".repeat(200); 6].join("/");
    runtime.block_on(async {
        for subject in &subjects {
            for key in [&deep, &long_segment, &long_key] {
                same_verdict_everywhere(subject, key).await.unwrap();
                let get = subject.store.get(key).await;
                assert!(
                    refused(&get),
                    "{}: get of {} bytes: {get:?}",
                    subject.name,
                    key.len()
                );
            }
            for prefix in ["../", "/", "a//", "./", "a/../", &format!("{deep}/")] {
                let list = subject.store.list(prefix, ListOptions::default()).await;
                assert!(
                    refused(&list),
                    "{}: list({prefix:?}): {list:?}",
                    subject.name
                );
                assert!(validate_prefix(prefix).is_err());
            }
        }
    });
}
