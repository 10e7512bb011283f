//! What `cache.redis` leaves in Redis, read back with the `redis` crate directly: keys under
//! `{prefix}:`, expiries as documented for `set`, `set_with_ttl`, `set_many` and counters.

mod support;

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use support::OwnRedis;

async fn raw(server: &OwnRedis) -> MultiplexedConnection {
    let client = redis::Client::open(server.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

async fn pttl(connection: &mut MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query_async(connection)
        .await
        .unwrap()
}

async fn started(options: RedisCacheOptions) -> RedisCache {
    let cache = RedisCache::from_options(options).unwrap();
    cache.start().await.unwrap();
    cache
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_live_under_the_prefix_and_instances_do_not_see_each_other() {
    let server = OwnRedis::start();
    let shop = started(RedisCacheOptions {
        url: server.url().into(),
        prefix: Some("shop".to_owned()),
        ..RedisCacheOptions::default()
    })
    .await;
    let blog = started(RedisCacheOptions {
        url: server.url().into(),
        prefix: Some("blog".to_owned()),
        ..RedisCacheOptions::default()
    })
    .await;
    shop.set("greeting", Bytes::from_static(b"hi"))
        .await
        .unwrap();
    shop.set_many(&[("a", Bytes::from_static(b"1"))])
        .await
        .unwrap();
    assert_eq!(blog.get("greeting").await.unwrap(), None);
    assert!(!blog.delete("greeting").await.unwrap());

    let mut connection = raw(&server).await;
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut connection)
        .await
        .unwrap();
    keys.sort();
    assert_eq!(keys, ["shop:a", "shop:greeting"]);
    // A counter is Redis's own integer text: other clients can read and INCR it too.
    assert_eq!(shop.increment("visits", 41).await.unwrap(), 41);
    let other: i64 = redis::cmd("INCR")
        .arg("shop:visits")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(other, 42);
    assert_eq!(
        shop.get("visits").await.unwrap().as_deref(),
        Some(&b"42"[..])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiries_follow_the_documented_rules() {
    let server = OwnRedis::start();
    let mut connection = raw(&server).await;

    let plain = started(RedisCacheOptions {
        url: server.url().into(),
        ..RedisCacheOptions::default()
    })
    .await;
    plain.set("k", Bytes::new()).await.unwrap();
    assert_eq!(pttl(&mut connection, "k").await, -1, "plain set: no expiry");
    plain
        .set_with_ttl("k", Bytes::new(), Duration::from_mins(1))
        .await
        .unwrap();
    let left = pttl(&mut connection, "k").await;
    assert!((59_000..=60_000).contains(&left), "{left}");
    plain.set("k", Bytes::new()).await.unwrap();
    assert_eq!(
        pttl(&mut connection, "k").await,
        -1,
        "set clears the expiry"
    );
    plain
        .set_with_ttl("k", Bytes::new(), Duration::MAX)
        .await
        .unwrap();
    assert_eq!(
        pttl(&mut connection, "k").await,
        -1,
        "an endless ttl stores no expiry"
    );
    plain.increment("n", 1).await.unwrap();
    assert_eq!(
        pttl(&mut connection, "n").await,
        -1,
        "counters: no expiry by default"
    );

    let expiring = started(RedisCacheOptions {
        url: server.url().into(),
        default_ttl_ms: Some(30_000),
        ..RedisCacheOptions::default()
    })
    .await;
    expiring.set("d", Bytes::new()).await.unwrap();
    assert!((29_000..=30_000).contains(&pttl(&mut connection, "d").await));
    expiring
        .set_many(&[("m1", Bytes::new()), ("m2", Bytes::new())])
        .await
        .unwrap();
    for key in ["m1", "m2"] {
        assert!((29_000..=30_000).contains(&pttl(&mut connection, key).await));
    }
    expiring
        .set_with_ttl("d", Bytes::new(), Duration::from_secs(5))
        .await
        .unwrap();
    assert!((4_000..=5_000).contains(&pttl(&mut connection, "d").await));
    // A new counter gets the default expiry; an existing one keeps the expiry it has.
    assert_eq!(expiring.increment("c", 3).await.unwrap(), 3);
    assert!((29_000..=30_000).contains(&pttl(&mut connection, "c").await));
    expiring
        .set_with_ttl("c", Bytes::from_static(b"10"), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(expiring.increment("c", 1).await.unwrap(), 11);
    assert!((4_000..=5_000).contains(&pttl(&mut connection, "c").await));
    assert_eq!(expiring.increment("n", 1).await.unwrap(), 2);
    assert_eq!(
        pttl(&mut connection, "n").await,
        -1,
        "an existing counter keeps no expiry"
    );
}

async fn connected_clients(connection: &mut MultiplexedConnection) -> u32 {
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query_async(connection)
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("connected_clients:"))
        .and_then(|count| count.trim().parse().ok())
        .expect("INFO clients has connected_clients")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_serves_every_caller_and_stop_closes_it() {
    let server = OwnRedis::start();
    let mut connection = raw(&server).await;
    assert_eq!(connected_clients(&mut connection).await, 1);
    let cache = std::sync::Arc::new(
        started(RedisCacheOptions {
            url: server.url().into(),
            ..RedisCacheOptions::default()
        })
        .await,
    );
    let calls = (0..64).map(|n| {
        let cache = std::sync::Arc::clone(&cache);
        tokio::spawn(async move { cache.set(&format!("k{n}"), Bytes::new()).await })
    });
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(connected_clients(&mut connection).await, 2);

    cache.stop().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while connected_clients(&mut connection).await != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the driver's connection was still open 5 s after stop"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
