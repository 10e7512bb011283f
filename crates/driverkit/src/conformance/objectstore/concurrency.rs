//! Obligations under concurrency and conditions: writes and deletes at once lose nothing,
//! `put_if` creates once and compares etags, one winner among racing creators.

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ETAG, PutCondition};

use super::super::harness::Instance;
use super::super::{call, ensure, expect_kind, expect_unsupported};
use super::ObjectStoreSettings;
use super::support::{expect_listing, get_exact, joined, summarize};
use crate::objectstore::ObjectStoreProvider;

pub(super) async fn concurrent_puts_lose_nothing<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const TASKS: usize = 16;
    const PUTS: usize = 16;
    let key = |task: usize, n: usize| format!("concurrent/{task:02}/{n:02}");
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = i.shared();
        tasks.push(tokio::spawn(async move {
            // Within a task the writes are concurrent too: a driver that reads, modifies and
            // writes back shared state loses all but one of them.
            let puts = (0..PUTS).map(|n| {
                let store = store.clone();
                async move {
                    let key = key(task, n);
                    store
                        .put(&key, Bytes::from(format!("{task}-{n}")))
                        .await
                        .map_err(|err| format!("put({key:?}) failed: {err}"))
                }
            });
            futures_util::future::try_join_all(puts).await?;
            for n in 0..PUTS {
                get_exact(&*store, &key(task, n), format!("{task}-{n}").as_bytes()).await?;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        joined(task).await?;
    }
    let keys: Vec<String> = (0..TASKS)
        .flat_map(|task| (0..PUTS).map(move |n| key(task, n)))
        .collect();
    let expected: Vec<&str> = keys.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "concurrent/", Some(100), &expected).await?;
    Ok(())
}

pub(super) async fn concurrent_puts_and_deletes_lose_nothing<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const TASKS: usize = 8;
    const ROUNDS: usize = 8;
    let key = |round: usize, task: usize, which: &str| format!("churn/{round}/{task}-{which}");
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = i.shared();
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let (doomed, kept) = (key(round, task, "a"), key(round, task, "b"));
                call!(
                    format!("put({doomed:?})"),
                    store.put(&doomed, Bytes::from_static(b"doomed"))
                );
                // The delete may empty the shared prefix while the sibling is being written.
                let (deleted, put) = futures_util::future::join(
                    store.delete(&doomed),
                    store.put(&kept, Bytes::from(kept.clone())),
                )
                .await;
                deleted.map_err(|err| format!("delete({doomed:?}) beside a put failed: {err}"))?;
                put.map_err(|err| format!("put({kept:?}) beside a delete failed: {err}"))?;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        joined(task).await?;
    }
    let kept: Vec<String> = (0..ROUNDS)
        .flat_map(|round| (0..TASKS).map(move |task| key(round, task, "b")))
        .collect();
    let expected: Vec<&str> = kept.iter().map(String::as_str).collect();
    expect_listing(&*i.driver, "churn/", Some(20), &expected).await?;
    for key in &kept {
        get_exact(&*i.driver, key, key.as_bytes()).await?;
    }
    Ok(())
}

pub(super) async fn put_if_absent_creates_only_once<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "if-absent/key";
    let absent = || PutCondition::IfAbsent;
    if !i.declares(CONDITIONAL_PUT) {
        expect_unsupported(
            "put_if(IfAbsent)",
            &store.put_if(key, Bytes::from_static(b"x"), absent()).await,
        )?;
        return expect_kind(
            "get after an unsupported put_if",
            ErrorKind::NotFound,
            &store.get(key).await,
        );
    }
    let meta = call!(
        "put_if(IfAbsent) of a missing key",
        store.put_if(key, Bytes::from_static(b"first"), absent())
    );
    ensure!(
        meta.key == key && meta.size == 5,
        "put_if of 5 bytes reports key {:?} and size {}",
        meta.key,
        meta.size
    );
    get_exact(store, key, b"first").await?;
    expect_kind(
        "put_if(IfAbsent) of an existing key",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"second"), absent())
            .await,
    )?;
    get_exact(store, key, b"first").await?;
    call!("put", store.put(key, Bytes::from_static(b"third")));
    expect_kind(
        "put_if(IfAbsent) of a key written by put",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"fourth"), absent())
            .await,
    )?;
    get_exact(store, key, b"third").await?;
    call!("delete", store.delete(key));
    call!(
        "put_if(IfAbsent) after delete",
        store.put_if(key, Bytes::from_static(b"fifth"), absent())
    );
    get_exact(store, key, b"fifth").await
}

pub(super) async fn put_if_match_compares_etags<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "if-match/key";
    let matching = |etag: &str| PutCondition::IfMatch(etag.to_owned());
    if !i.declares(CONDITIONAL_PUT) {
        call!("put", store.put(key, Bytes::from_static(b"v1")));
        let etag = call!("head", store.head(key)).etag.unwrap_or_default();
        return expect_unsupported(
            "put_if(IfMatch)",
            &store
                .put_if(key, Bytes::from_static(b"v2"), matching(&etag))
                .await,
        );
    }
    expect_kind(
        "put_if(IfMatch) of a missing key",
        ErrorKind::Conflict,
        &store
            .put_if(
                "if-match/missing",
                Bytes::from_static(b"x"),
                matching("\"x\""),
            )
            .await,
    )?;
    expect_kind(
        "get after a refused put_if(IfMatch)",
        ErrorKind::NotFound,
        &store.get("if-match/missing").await,
    )?;
    let first = call!("put", store.put(key, Bytes::from_static(b"v1")));
    expect_kind(
        "put_if(IfMatch) with a wrong etag",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"v2"), matching("not-an-etag"))
            .await,
    )?;
    get_exact(store, key, b"v1").await?;
    if !i.declares(ETAG) {
        // Without etags no caller can hold a current one: only refusals are observable.
        return Ok(());
    }
    let Some(etag) = first.etag else {
        return Err("the feature `etag` is declared, but put reports no etag".to_owned());
    };
    let second = call!(
        "put_if(IfMatch) with the current etag",
        store.put_if(key, Bytes::from_static(b"v2"), matching(&etag))
    );
    get_exact(store, key, b"v2").await?;
    let head = call!("head", store.head(key));
    ensure!(
        second.etag.is_some() && second.etag != Some(etag.clone()) && head.etag == second.etag,
        "after put_if(IfMatch {etag:?}) changed the content, put_if reports etag {:?} and head \
         {:?}: both must report the new etag",
        second.etag,
        head.etag
    );
    expect_kind(
        "put_if(IfMatch) with a stale etag",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"v3"), matching(&etag))
            .await,
    )?;
    get_exact(store, key, b"v2").await
}

pub(super) async fn concurrent_put_if_absent_has_one_winner<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const ROUNDS: usize = 8;
    const TASKS: usize = 4;
    const ATTEMPTS: usize = 4;
    if !i.declares(CONDITIONAL_PUT) {
        return expect_unsupported(
            "put_if(IfAbsent)",
            &i.driver
                .put_if("race/0", Bytes::from_static(b"x"), PutCondition::IfAbsent)
                .await,
        );
    }
    for round in 0..ROUNDS {
        let key = format!("race/{round}");
        let mut tasks = Vec::new();
        for task in 0..TASKS {
            let store = i.shared();
            let key = key.clone();
            tasks.push(tokio::spawn(async move {
                // All attempts of a task start before any finishes: a driver that checks, then
                // writes, lets all of them through.
                let attempts = (0..ATTEMPTS).map(|n| {
                    let (store, key) = (&store, &key);
                    async move {
                        let data = format!("{task}-{n}");
                        let outcome = store
                            .put_if(key, Bytes::from(data.clone()), PutCondition::IfAbsent)
                            .await;
                        (data, outcome)
                    }
                });
                Ok::<_, String>(futures_util::future::join_all(attempts).await)
            }));
        }
        let mut winners = Vec::new();
        for task in tasks {
            for (data, outcome) in joined(task).await? {
                match outcome {
                    Ok(_) => winners.push(data),
                    Err(err) if err.kind() == ErrorKind::Conflict => {}
                    Err(err) => {
                        return Err(format!(
                            "a concurrent put_if({key:?}, IfAbsent) answered {}, not Conflict: \
                             {err}",
                            err.kind()
                        ));
                    }
                }
            }
        }
        ensure!(
            winners.len() == 1,
            "{} of {} concurrent put_if({key:?}, IfAbsent) succeeded ({}): exactly one must, \
             the others answer Conflict",
            winners.len(),
            TASKS * ATTEMPTS,
            summarize(&winners)
        );
        get_exact(&*i.driver, &key, winners[0].as_bytes()).await?;
    }
    Ok(())
}
