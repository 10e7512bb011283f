use std::sync::Arc;

use sandloom_driverkit::sdk::ErrorKind;
use serde::de::value::{Error as DeError, MapDeserializer};

use serde::Deserialize;

use super::*;

fn cache() -> MemoryCache {
    MemoryCache::from_options(MemoryCacheOptions::default()).unwrap()
}

fn options(pairs: &[(&'static str, u64)]) -> Result<MemoryCacheOptions, DeError> {
    MemoryCacheOptions::deserialize(MapDeserializer::<_, DeError>::new(pairs.iter().copied()))
}

#[tokio::test]
async fn set_get_delete_round_trip() {
    let cache = cache();
    assert_eq!(cache.get("k").await.unwrap(), None);
    cache.set("k", Bytes::from_static(b"v1")).await.unwrap();
    cache.set("k", Bytes::from_static(b"v2")).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v2"[..]));
    cache.set("empty", Bytes::new()).await.unwrap();
    assert_eq!(cache.get("empty").await.unwrap().as_deref(), Some(&b""[..]));
    assert!(cache.delete("k").await.unwrap());
    assert!(!cache.delete("k").await.unwrap());
    assert_eq!(cache.get("k").await.unwrap(), None);
}

#[tokio::test]
async fn empty_keys_are_invalid_input() {
    let cache = cache();
    let kind = |r: InfraResult<()>| r.unwrap_err().kind();
    assert_eq!(
        cache.get("").await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind(cache.set("", Bytes::new()).await),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        cache.delete("").await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        cache.increment("", 1).await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let ttl = Duration::from_secs(1);
    assert_eq!(
        kind(cache.set_with_ttl("", Bytes::new(), ttl).await),
        ErrorKind::InvalidInput
    );
    let bulk = cache
        .set_many(&[("a", Bytes::new()), ("", Bytes::new())])
        .await;
    assert_eq!(kind(bulk), ErrorKind::InvalidInput);
    assert_eq!(
        cache.get("a").await.unwrap(),
        None,
        "a refused batch writes nothing"
    );
}

#[tokio::test]
async fn ttl_entries_expire_and_set_clears_the_ttl() {
    let cache = cache();
    let ttl = Duration::from_millis(50);
    cache.set_with_ttl("short", "x".into(), ttl).await.unwrap();
    cache
        .set_with_ttl("cleared", "x".into(), ttl)
        .await
        .unwrap();
    cache.set("cleared", "y".into()).await.unwrap();
    assert!(cache.get("short").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(cache.get("short").await.unwrap(), None);
    assert_eq!(
        cache.get("cleared").await.unwrap().as_deref(),
        Some(&b"y"[..])
    );
}

#[tokio::test]
async fn zero_ttl_is_invalid_input() {
    let err = cache()
        .set_with_ttl("k", "x".into(), Duration::ZERO)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[tokio::test]
async fn default_ttl_applies_to_set() {
    let opts = MemoryCacheOptions {
        default_ttl_ms: Some(50),
        ..MemoryCacheOptions::default()
    };
    let cache = MemoryCache::from_options(opts).unwrap();
    cache.set("k", "x".into()).await.unwrap();
    cache
        .set_with_ttl("long", "x".into(), Duration::from_mins(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(cache.get("k").await.unwrap(), None);
    assert!(cache.get("long").await.unwrap().is_some());
}

#[tokio::test]
async fn increment_keeps_the_expiry_of_the_counter() {
    let cache = cache();
    cache
        .set_with_ttl("n", "1".into(), Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(cache.increment("n", 1).await.unwrap(), 2);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(cache.get("n").await.unwrap(), None);
}

#[tokio::test]
async fn increment_counts_in_decimal_ascii() {
    let cache = cache();
    assert_eq!(cache.increment("n", 5).await.unwrap(), 5);
    assert_eq!(cache.increment("n", -7).await.unwrap(), -2);
    assert_eq!(cache.get("n").await.unwrap().as_deref(), Some(&b"-2"[..]));
    cache.set("m", "41".into()).await.unwrap();
    assert_eq!(cache.increment("m", 1).await.unwrap(), 42);
}

#[tokio::test]
async fn increment_of_a_non_counter_or_overflow_is_a_conflict() {
    let cache = cache();
    for text in ["abc", "05", "+5", " 5", "", "1.5", "99999999999999999999"] {
        cache
            .set("k", Bytes::copy_from_slice(text.as_bytes()))
            .await
            .unwrap();
        let err = cache.increment("k", 1).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{text:?}");
        assert_eq!(
            cache.get("k").await.unwrap().as_deref(),
            Some(text.as_bytes())
        );
    }
    cache
        .set("max", Bytes::from(i64::MAX.to_string()))
        .await
        .unwrap();
    assert_eq!(
        cache.increment("max", 1).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(cache.increment("max", -1).await.unwrap(), i64::MAX - 1);
    assert_eq!(cache.increment("min", i64::MIN).await.unwrap(), i64::MIN);
    assert_eq!(
        cache.increment("min", -1).await.unwrap_err().kind(),
        ErrorKind::Conflict
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_are_atomic() {
    let cache = Arc::new(cache());
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let cache = Arc::clone(&cache);
        tasks.push(tokio::spawn(async move {
            for _ in 0..100 {
                cache.increment("hits", 1).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(
        cache.get("hits").await.unwrap().as_deref(),
        Some(&b"1600"[..])
    );
}

#[tokio::test]
async fn bulk_operations() {
    let cache = cache();
    cache
        .set_many(&[("a", "1".into()), ("b", "2".into())])
        .await
        .unwrap();
    let values = cache.get_many(&["a", "missing", "b"]).await.unwrap();
    assert_eq!(
        values,
        vec![
            Some(Bytes::from_static(b"1")),
            None,
            Some(Bytes::from_static(b"2"))
        ]
    );
    assert_eq!(cache.delete_many(&["a", "missing", "b"]).await.unwrap(), 2);
    assert_eq!(cache.get_many(&["a", "b"]).await.unwrap(), vec![None, None]);
}

#[tokio::test]
async fn capacity_bounds_the_entry_count() {
    let opts = MemoryCacheOptions {
        capacity: 10,
        ..MemoryCacheOptions::default()
    };
    let cache = MemoryCache::from_options(opts).unwrap();
    for i in 0..200 {
        cache.set(&format!("k{i}"), "x".into()).await.unwrap();
    }
    cache.entries.run_pending_tasks();
    assert!(
        cache.entries.entry_count() <= 10,
        "{}",
        cache.entries.entry_count()
    );
}

#[tokio::test]
async fn stop_makes_every_operation_stopped() {
    let cache = cache();
    cache.set("k", "v".into()).await.unwrap();
    cache.stop().await.unwrap();
    assert!(!cache.health().await.is_healthy());
    let stopped = |e: InfraError| assert_eq!(e.kind(), ErrorKind::Stopped);
    stopped(cache.get("k").await.unwrap_err());
    stopped(cache.set("k", "v".into()).await.unwrap_err());
    stopped(cache.delete("k").await.unwrap_err());
    stopped(
        cache
            .set_with_ttl("k", "v".into(), Duration::from_secs(1))
            .await
            .unwrap_err(),
    );
    stopped(cache.increment("k", 1).await.unwrap_err());
    stopped(cache.get_many(&["k"]).await.unwrap_err());
    stopped(cache.set_many(&[("k", "v".into())]).await.unwrap_err());
    stopped(cache.delete_many(&["k"]).await.unwrap_err());
}

#[test]
fn options_are_validated_and_refuse_unknown_fields() {
    assert_eq!(options(&[]).unwrap(), MemoryCacheOptions::default());
    assert_eq!(options(&[("capacity", 5)]).unwrap().capacity, 5);
    let err = options(&[("capacity", 5), ("capcity", 1)]).unwrap_err();
    assert!(err.to_string().contains("unknown field `capcity`"), "{err}");
    let zero = MemoryCacheOptions {
        capacity: 0,
        ..MemoryCacheOptions::default()
    };
    assert!(MemoryCache::from_options(zero).is_err());
    let zero_ttl = MemoryCacheOptions {
        default_ttl_ms: Some(0),
        ..MemoryCacheOptions::default()
    };
    assert!(MemoryCache::from_options(zero_ttl).is_err());
    assert_eq!(MemoryCache::supported_features(), &[TTL, INCREMENT, BULK]);
}

/// Why this driver is on moka's `sync::Cache`: an operation's future holds little more than its
/// arguments (32 to 80 bytes in a debug build), so it fits a caller's inline buffer beside the
/// gate's work. On moka's `future::Cache` they were 824 to 1,872 bytes.
#[test]
fn operation_futures_hold_little_more_than_their_arguments() {
    const MOST: usize = 128;
    let cache = cache();
    let value = Bytes::from_static(b"v");
    let ttl = Duration::from_secs(1);
    let sizes = [
        ("get", size_of_val(&cache.get("k"))),
        ("set", size_of_val(&cache.set("k", value.clone()))),
        ("delete", size_of_val(&cache.delete("k"))),
        (
            "set_with_ttl",
            size_of_val(&cache.set_with_ttl("k", value.clone(), ttl)),
        ),
        ("increment", size_of_val(&cache.increment("k", 1))),
        ("get_many", size_of_val(&cache.get_many(&["k"]))),
        ("set_many", size_of_val(&cache.set_many(&[("k", value)]))),
        ("delete_many", size_of_val(&cache.delete_many(&["k"]))),
    ];
    for (operation, size) in sizes {
        assert!(size <= MOST, "{operation}'s future is {size} bytes");
    }
}
