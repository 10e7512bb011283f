//! Obligations under concurrency and conditions: writes and deletes at once lose nothing,
//! `put_if` creates once and compares etags, one winner among racing creators.

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ETAG, ObjectMeta, PutCondition};

use super::ObjectStoreSettings;
use super::support::{expect_listing, get_exact, joined, summarize};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

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
    prefixes_emptied_under_writes(i).await
}

/// Pairs of tasks in a prefix of their own each write, read back and delete their own key
/// there, over and over: the prefix is emptied again and again (and a store of directories
/// removes it) while the other task of the pair writes into it. The chance that a delete lands
/// between a write making the directory and moving the object into it is small each time, so
/// it takes many rounds to reach it reliably.
async fn prefixes_emptied_under_writes<T: ObjectStoreProvider>(
    i: &Instance<T>,
) -> Result<(), String> {
    const PAIRS: usize = 4;
    const ROUNDS: usize = 200;
    let mut tasks = Vec::new();
    for pair in 0..PAIRS {
        for who in ["x", "y"] {
            let store = i.shared();
            tasks.push(tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let key = format!("vanishing/{pair}/deep/{who}");
                    let data = format!("{who}{round}");
                    store
                        .put(&key, Bytes::from(data.clone()))
                        .await
                        .map_err(|err| {
                            format!(
                                "put({key:?}) failed while another task emptied its prefix: {err}"
                            )
                        })?;
                    get_exact(&*store, &key, data.as_bytes()).await?;
                    store.delete(&key).await.map_err(|err| {
                        format!("delete({key:?}) failed beside a write into its prefix: {err}")
                    })?;
                }
                Ok::<(), String>(())
            }));
        }
    }
    for task in tasks {
        joined(task).await?;
    }
    expect_listing(&*i.driver, "vanishing/", None, &[]).await?;
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
        let winners = race_put_if(i, &key, &PutCondition::IfAbsent, &round.to_string()).await?;
        let names: Vec<&str> = winners.iter().map(|(data, _)| data.as_str()).collect();
        ensure!(
            winners.len() == 1,
            "{} of {} concurrent put_if({key:?}, IfAbsent) succeeded ({}): exactly one must, \
             the others answer Conflict",
            winners.len(),
            RACERS,
            summarize(&names)
        );
        get_exact(&*i.driver, &key, names[0].as_bytes()).await?;
    }
    Ok(())
}

/// How many `put_if` calls race in one round: [`RACING_TASKS`] tasks on several threads,
/// each with [`RACING_ATTEMPTS`] calls in flight at once.
const RACERS: usize = RACING_TASKS * RACING_ATTEMPTS;
const RACING_TASKS: usize = 4;
const RACING_ATTEMPTS: usize = 4;

/// One round of [`RACERS`] concurrent `put_if(key, condition)` calls, each writing its own
/// content (`{label}-{task}-{n}`): the winners, with what they wrote and the metadata they
/// were answered. Every loser must answer `Conflict`.
async fn race_put_if<T: ObjectStoreProvider>(
    i: &Instance<T>,
    key: &str,
    condition: &PutCondition,
    label: &str,
) -> Result<Vec<(String, ObjectMeta)>, String> {
    let mut tasks = Vec::new();
    for task in 0..RACING_TASKS {
        let (store, key, condition) = (i.shared(), key.to_owned(), condition.clone());
        let label = label.to_owned();
        tasks.push(tokio::spawn(async move {
            // All attempts of a task start before any finishes: a driver that checks (or
            // compares), then writes, lets all of them through.
            let attempts = (0..RACING_ATTEMPTS).map(|n| {
                let (store, key, condition) = (&store, &key, &condition);
                let data = format!("{label}-{task}-{n}");
                async move {
                    let outcome = store
                        .put_if(key, Bytes::from(data.clone()), condition.clone())
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
                Ok(meta) => winners.push((data, meta)),
                Err(err) if err.kind() == ErrorKind::Conflict => {}
                Err(err) => {
                    return Err(format!(
                        "a concurrent put_if({key:?}, {condition:?}) answered {}, not Conflict: \
                         {err}",
                        err.kind()
                    ));
                }
            }
        }
    }
    Ok(winners)
}

pub(super) async fn concurrent_put_if_match_has_one_winner<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    const ROUNDS: usize = 8;
    let key = "swap/object";
    if !i.declares(CONDITIONAL_PUT) {
        return expect_unsupported(
            "put_if(IfMatch)",
            &i.driver
                .put_if(
                    key,
                    Bytes::from_static(b"x"),
                    PutCondition::IfMatch("\"x\"".to_owned()),
                )
                .await,
        );
    }
    if !i.declares(ETAG) {
        // Without etags no caller can hold a current one: `put_if_match_compares_etags` checks
        // that every `IfMatch` is refused.
        return Ok(());
    }
    let first = call!("put", i.driver.put(key, Bytes::from_static(b"base")));
    let Some(mut current) = first.etag else {
        return Err("the feature `etag` is declared, but put reports no etag".to_owned());
    };
    // Each round matches the etag the previous round's winner reported: a winner that reports
    // an etag other than the object's breaks the chain.
    for round in 0..ROUNDS {
        let condition = PutCondition::IfMatch(current.clone());
        let mut winners = race_put_if(i, key, &condition, &round.to_string()).await?;
        let names: Vec<&str> = winners.iter().map(|(data, _)| data.as_str()).collect();
        ensure!(
            winners.len() == 1,
            "round {round}: {} of {} concurrent put_if({key:?}, IfMatch {current:?}) succeeded \
             ({}): exactly one must, the others answer Conflict",
            winners.len(),
            RACERS,
            summarize(&names)
        );
        let (data, meta) = winners.remove(0);
        get_exact(&*i.driver, key, data.as_bytes()).await?;
        let head = call!("head", i.driver.head(key));
        ensure!(
            meta.etag.is_some() && meta.etag != Some(current.clone()) && head.etag == meta.etag,
            "round {round}: the winning put_if(IfMatch {current:?}) reports etag {:?} and head \
             then {:?}: both must report the winner's new etag",
            meta.etag,
            head.etag
        );
        current = meta.etag.unwrap_or_default();
    }
    Ok(())
}

pub(super) async fn empty_objects_meet_put_conditions<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    let key = "empty-if/object";
    let empty = Bytes::new;
    if !i.declares(CONDITIONAL_PUT) {
        return expect_unsupported(
            "put_if(IfAbsent) of an empty object",
            &store.put_if(key, empty(), PutCondition::IfAbsent).await,
        );
    }
    let created = call!(
        "put_if(IfAbsent) of an empty object",
        store.put_if(key, empty(), PutCondition::IfAbsent)
    );
    ensure!(
        created.key == key && created.size == 0,
        "put_if(IfAbsent) of an empty object reports key {:?} and size {}",
        created.key,
        created.size
    );
    get_exact(store, key, b"").await?;
    let head = call!("head of an empty object", store.head(key));
    ensure!(
        head.size == 0,
        "head of an empty object created by put_if reports size {}",
        head.size
    );
    expect_listing(store, "empty-if/", None, &[key]).await?;
    // An empty object is an object: it is there for `IfAbsent`, whatever is written over it.
    for data in [empty(), Bytes::from_static(b"x")] {
        expect_kind(
            &format!(
                "put_if(IfAbsent, {} bytes) over an empty object",
                data.len()
            ),
            ErrorKind::Conflict,
            &store.put_if(key, data, PutCondition::IfAbsent).await,
        )?;
        get_exact(store, key, b"").await?;
    }
    if !i.declares(ETAG) {
        return Ok(());
    }
    let Some(etag) = created.etag.filter(|etag| !etag.is_empty()) else {
        return Err("the feature `etag` is declared, but put_if reports no etag".to_owned());
    };
    let filled = call!(
        "put_if(IfMatch) of an empty object's etag",
        store.put_if(key, Bytes::from_static(b"x"), PutCondition::IfMatch(etag))
    );
    get_exact(store, key, b"x").await?;
    let Some(etag) = filled.etag else {
        return Err("the feature `etag` is declared, but put_if reports no etag".to_owned());
    };
    let emptied = call!(
        "put_if(IfMatch) writing an empty object",
        store.put_if(key, empty(), PutCondition::IfMatch(etag))
    );
    ensure!(
        emptied.size == 0,
        "put_if(IfMatch) writing an empty object reports size {}",
        emptied.size
    );
    get_exact(store, key, b"").await?;
    expect_kind(
        "put_if(IfAbsent) over an empty object written by put_if(IfMatch)",
        ErrorKind::Conflict,
        &store
            .put_if(key, Bytes::from_static(b"y"), PutCondition::IfAbsent)
            .await,
    )?;
    let current = call!("head", store.head(key)).etag.unwrap_or_default();
    ensure!(
        Some(&current) == emptied.etag.as_ref(),
        "put_if(IfMatch) writing an empty object reports etag {:?}, head {current:?}",
        emptied.etag
    );
    call!(
        "put_if(IfMatch) of the etag of an empty object written by put_if",
        store.put_if(
            key,
            Bytes::from_static(b"z"),
            PutCondition::IfMatch(current)
        )
    );
    get_exact(store, key, b"z").await
}
