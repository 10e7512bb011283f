//! Behaviour both embedded object stores share (run here for memory, from `objectstore_fs`
//! for fs), then what is particular to the memory store.

use std::collections::HashSet;
use std::sync::Arc;

use sandloom_driverkit::objectstore::ObjectStore;
use sandloom_driverkit::sdk::ErrorKind;

use super::*;

/// Keys whose byte order differs from a naive per-directory name order ('-' < '.' < '/' < '0').
pub(crate) const ORDER_KEYS: &[&str] = &[
    "b", "a/c/d", "a0", "a-", "ab/x", "a/b.txt", "a.c", "a/b", ".hidden",
];

pub(crate) const BAD_KEYS: &[&str] = &[
    "",
    "../x",
    "/etc/passwd",
    "a\0b",
    "a/../b",
    "./a",
    "a//b",
    "a\\b",
    "a/",
    "..",
    ".",
];

fn kind<T: std::fmt::Debug>(result: InfraResult<T>) -> ErrorKind {
    result.unwrap_err().kind()
}

pub(crate) async fn round_trip(store: &dyn ObjectStore) {
    let meta = store
        .put("docs/a.txt", Bytes::from_static(b"hello"))
        .await
        .unwrap();
    assert_eq!((meta.key.as_str(), meta.size), ("docs/a.txt", 5));
    assert!(meta.last_modified.is_some());
    assert_eq!(store.get("docs/a.txt").await.unwrap(), "hello");
    let head = store.head("docs/a.txt").await.unwrap();
    assert_eq!((head.size, head.etag.as_deref()), (5, meta.etag.as_deref()));
    store
        .put("docs/a.txt", Bytes::from_static(b"bye"))
        .await
        .unwrap();
    assert_eq!(store.get("docs/a.txt").await.unwrap(), "bye");
    assert_eq!(store.head("docs/a.txt").await.unwrap().size, 3);
    store.put("empty", Bytes::new()).await.unwrap();
    assert_eq!(store.get("empty").await.unwrap(), "");
    assert_eq!(store.head("empty").await.unwrap().size, 0);
    store.delete("docs/a.txt").await.unwrap();
    assert_eq!(kind(store.get("docs/a.txt").await), ErrorKind::NotFound);
    assert_eq!(kind(store.head("docs/a.txt").await), ErrorKind::NotFound);
    store.delete("docs/a.txt").await.unwrap();
    store.delete("never/was").await.unwrap();
}

pub(crate) async fn invalid_keys_are_refused(store: &dyn ObjectStore) {
    for &bad in BAD_KEYS {
        assert_eq!(
            kind(store.put(bad, "x".into()).await),
            ErrorKind::InvalidInput,
            "{bad:?}"
        );
        assert_eq!(
            kind(store.get(bad).await),
            ErrorKind::InvalidInput,
            "{bad:?}"
        );
        assert_eq!(
            kind(store.head(bad).await),
            ErrorKind::InvalidInput,
            "{bad:?}"
        );
        assert_eq!(
            kind(store.delete(bad).await),
            ErrorKind::InvalidInput,
            "{bad:?}"
        );
        let condition = PutCondition::IfAbsent;
        let put_if = store.put_if(bad, "x".into(), condition).await;
        assert_eq!(kind(put_if), ErrorKind::InvalidInput, "{bad:?}");
    }
    let nul = store.list("a\0", ListOptions::default()).await;
    assert_eq!(kind(nul), ErrorKind::InvalidInput);
    let zero = store.list("", ListOptions::default().with_limit(0)).await;
    assert_eq!(kind(zero), ErrorKind::InvalidInput);
    let all = store.list("", ListOptions::default()).await.unwrap();
    assert!(all.objects.is_empty(), "nothing was written: {all:?}");
}

async fn all_pages(store: &dyn ObjectStore, prefix: &str, limit: usize) -> Vec<String> {
    let mut keys = Vec::new();
    let mut options = ListOptions::default().with_limit(limit);
    loop {
        let page = store.list(prefix, options.clone()).await.unwrap();
        assert!(page.objects.len() <= limit);
        keys.extend(page.objects.iter().map(|meta| meta.key.clone()));
        match page.next {
            Some(next) => {
                assert_eq!(Some(&next), keys.last(), "next is the page's last key");
                options = options.after(next);
            }
            None => return keys,
        }
    }
}

pub(crate) async fn list_orders_filters_and_paginates(store: &dyn ObjectStore) {
    let mut expected: Vec<String> = ORDER_KEYS.iter().map(|key| (*key).to_owned()).collect();
    for i in 0..25 {
        expected.push(format!("many/{:02}/item-{i}", i % 4));
    }
    for key in expected.iter().rev() {
        store.put(key, Bytes::from(key.clone())).await.unwrap();
    }
    expected.sort();

    let everything = store.list("", ListOptions::default()).await.unwrap();
    assert_eq!(everything.next, None);
    let keys: Vec<&str> = everything
        .objects
        .iter()
        .map(|meta| meta.key.as_str())
        .collect();
    assert_eq!(keys, expected, "ascending byte order");
    for meta in &everything.objects {
        assert_eq!(meta.size, meta.key.len() as u64);
        assert!(meta.etag.is_some());
    }

    for limit in [1, 3, 7, 1000] {
        assert_eq!(all_pages(store, "", limit).await, expected, "limit {limit}");
    }
    let many: Vec<String> = expected
        .iter()
        .filter(|k| k.starts_with("many/"))
        .cloned()
        .collect();
    assert_eq!(all_pages(store, "many/", 4).await, many);
    let a_keys: Vec<String> = expected
        .iter()
        .filter(|k| k.starts_with("a/"))
        .cloned()
        .collect();
    assert_eq!(all_pages(store, "a/", 2).await, a_keys);
    assert_eq!(all_pages(store, "a/b", 1).await, ["a/b", "a/b.txt"]);
    assert_eq!(
        all_pages(store, "many/01/item-1", 10).await,
        ["many/01/item-1", "many/01/item-13", "many/01/item-17"]
    );
    assert!(all_pages(store, "zzz", 10).await.is_empty());
    // A prefix need not be a key, only the start of one; one that starts none is refused.
    assert_eq!(all_pages(store, ".", 10).await, [".hidden"]);
    assert_eq!(all_pages(store, "a/b.", 10).await, ["a/b.txt"]);
    for bad in ["../", "/", "/a", "a//", "./a", "a/./", "a\\"] {
        let refused = store.list(bad, ListOptions::default()).await;
        assert_eq!(kind(refused), ErrorKind::InvalidInput, "{bad:?}");
    }

    let after = store
        .list("", ListOptions::default().after("a/b"))
        .await
        .unwrap();
    let keys: Vec<&str> = after.objects.iter().map(|meta| meta.key.as_str()).collect();
    let later: Vec<&str> = expected
        .iter()
        .map(String::as_str)
        .filter(|k| *k > "a/b")
        .collect();
    assert_eq!(keys, later);
    let past_end = store
        .list("a/", ListOptions::default().after("b"))
        .await
        .unwrap();
    assert!(past_end.objects.is_empty() && past_end.next.is_none());

    let page = store
        .list("", ListOptions::default().with_limit(5))
        .await
        .unwrap();
    assert_eq!(page.objects.len(), 5);
    assert_eq!(page.next.as_deref(), Some(expected[4].as_str()));
    let unique: HashSet<String> = all_pages(store, "", 6).await.into_iter().collect();
    assert_eq!(unique.len(), expected.len());
}

pub(crate) async fn etags_follow_content(store: &dyn ObjectStore) {
    let one = store
        .put("e", Bytes::from_static(b"one"))
        .await
        .unwrap()
        .etag
        .unwrap();
    let two = store
        .put("e", Bytes::from_static(b"two"))
        .await
        .unwrap()
        .etag
        .unwrap();
    assert_ne!(one, two);
    assert_eq!(
        store.head("e").await.unwrap().etag.as_deref(),
        Some(two.as_str())
    );
    let again = store
        .put("f", Bytes::from_static(b"two"))
        .await
        .unwrap()
        .etag
        .unwrap();
    assert_eq!(again, two, "equal content, equal etag");
    assert_eq!(two, etag_of(b"two"));
}

pub(crate) async fn conditional_puts(store: &dyn ObjectStore) {
    let created = store
        .put_if("c", "v1".into(), PutCondition::IfAbsent)
        .await
        .unwrap();
    let again = store.put_if("c", "v2".into(), PutCondition::IfAbsent).await;
    assert_eq!(kind(again), ErrorKind::Conflict);
    assert_eq!(store.get("c").await.unwrap(), "v1");
    let etag = created.etag.unwrap();
    let wrong = store
        .put_if("c", "v2".into(), PutCondition::IfMatch("nope".into()))
        .await;
    assert_eq!(kind(wrong), ErrorKind::Conflict);
    let swapped = store
        .put_if("c", "v2".into(), PutCondition::IfMatch(etag.clone()))
        .await;
    assert_ne!(swapped.unwrap().etag.unwrap(), etag);
    let stale = store
        .put_if("c", "v3".into(), PutCondition::IfMatch(etag))
        .await;
    assert_eq!(kind(stale), ErrorKind::Conflict);
    assert_eq!(store.get("c").await.unwrap(), "v2");
    let missing = store
        .put_if("absent", "x".into(), PutCondition::IfMatch("e".into()))
        .await;
    assert_eq!(kind(missing), ErrorKind::Conflict);
    assert_eq!(kind(store.get("absent").await), ErrorKind::NotFound);
}

/// Many writers race to create one key and to compare-and-swap a counter: exactly one create
/// wins, and no swap is lost.
pub(crate) async fn conditional_puts_are_atomic(store: Arc<dyn ObjectStore>) {
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let won = store
                .put_if("once", Bytes::from(format!("{i}")), PutCondition::IfAbsent)
                .await
                .is_ok();
            let mut swaps = 0;
            while swaps < 5 {
                let head = store.head("counter").await.unwrap();
                let value: u64 = String::from_utf8(store.get("counter").await.unwrap().to_vec())
                    .unwrap()
                    .parse()
                    .unwrap();
                let next = Bytes::from((value + 1).to_string());
                // The etag may no longer match the value read: then the swap must fail too.
                if store
                    .put_if("counter", next, PutCondition::IfMatch(head.etag.unwrap()))
                    .await
                    .is_ok()
                {
                    swaps += 1;
                }
            }
            won
        }));
    }
    let mut winners = 0;
    for task in tasks {
        winners += usize::from(task.await.unwrap());
    }
    assert_eq!(winners, 1);
    let total = String::from_utf8(store.get("counter").await.unwrap().to_vec()).unwrap();
    assert_eq!(total, "80");
}

pub(crate) async fn stop_makes_every_operation_stopped<S: ObjectStore + Driver>(store: &S) {
    store.put("k", "v".into()).await.unwrap();
    store.stop().await.unwrap();
    assert!(!store.health().await.is_healthy());
    assert_eq!(kind(store.put("k", "v".into()).await), ErrorKind::Stopped);
    assert_eq!(kind(store.get("k").await), ErrorKind::Stopped);
    assert_eq!(kind(store.head("k").await), ErrorKind::Stopped);
    assert_eq!(kind(store.delete("k").await), ErrorKind::Stopped);
    assert_eq!(
        kind(store.list("", ListOptions::default()).await),
        ErrorKind::Stopped
    );
    let put_if = store.put_if("k", "v".into(), PutCondition::IfAbsent).await;
    assert_eq!(kind(put_if), ErrorKind::Stopped);
}

fn store() -> MemoryObjectStore {
    MemoryObjectStore::from_options(NoOptions {}).unwrap()
}

#[tokio::test]
async fn memory_round_trip() {
    round_trip(&store()).await;
}

#[tokio::test]
async fn memory_invalid_keys_are_refused() {
    invalid_keys_are_refused(&store()).await;
}

#[tokio::test]
async fn memory_list_orders_filters_and_paginates() {
    list_orders_filters_and_paginates(&store()).await;
}

#[tokio::test]
async fn memory_etags_follow_content() {
    etags_follow_content(&store()).await;
}

#[tokio::test]
async fn memory_conditional_puts() {
    conditional_puts(&store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_conditional_puts_are_atomic() {
    let store = Arc::new(store());
    ObjectStoreOps::put(&*store, "counter", "0".into())
        .await
        .unwrap();
    conditional_puts_are_atomic(store).await;
}

#[tokio::test]
async fn memory_stop_makes_every_operation_stopped() {
    stop_makes_every_operation_stopped(&store()).await;
}

#[tokio::test]
async fn memory_keys_may_be_objects_and_prefixes() {
    let store = store();
    ObjectStoreOps::put(&store, "a", "1".into()).await.unwrap();
    ObjectStoreOps::put(&store, "a/b", "2".into())
        .await
        .unwrap();
    ObjectStoreOps::put(&store, ".sandloom-tmp/x", "3".into())
        .await
        .unwrap();
    assert_eq!(ObjectStoreOps::get(&store, "a").await.unwrap(), "1");
    assert_eq!(
        ObjectStoreOps::list(&store, "", ListOptions::default())
            .await
            .unwrap()
            .objects
            .len(),
        3
    );
}

#[test]
fn etag_is_fnv1a_and_length() {
    // FNV-1a 64 test vectors: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c.
    assert_eq!(etag_of(b""), "cbf29ce484222325-0");
    assert_eq!(etag_of(b"a"), "af63dc4c8601ec8c-1");
    let mut pieces = EtagHasher::default();
    pieces.update(b"hel");
    pieces.update(b"lo");
    assert_eq!(pieces.finish(), etag_of(b"hello"));
}
