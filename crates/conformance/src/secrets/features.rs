//! Secrets obligations of the optional features: versions, the change signal, listing.

use std::time::{Duration, Instant};

use sandloom_driverkit::secrets::{LIST, SecretsCapability, SecretsProvider, VERSIONS, WATCH};
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::secrets::{Changes, Secrets};

use super::{SecretsSettings, Seed, seed, set};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind, expect_unsupported};

/// How long a `changes` call that must be woken is given: far more than any tolerance.
const LONG_WAIT: Duration = Duration::from_secs(10);
/// A wait the kit lets run out.
const SHORT_WAIT: Duration = Duration::from_millis(600);

pub(super) async fn versions_are_read_by_number<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    if !i.declares(VERSIONS) {
        set(i, s, "kit/versioned", b"one").await?;
        expect_unsupported(
            "get_version",
            &secrets
                .get_version("kit/versioned", 1)
                .await
                .map(|v| v.expose().len()),
        )?;
        return expect_unsupported(
            "current_version",
            &secrets.current_version("kit/versioned").await,
        );
    }
    set(i, s, "kit/versioned", b"one").await?;
    let first = call!(
        "current_version after one value",
        secrets.current_version("kit/versioned")
    );
    ensure!(
        first >= 1,
        "versions are numbered from 1, `current_version` answered {first}"
    );
    set(i, s, "kit/versioned", b"two").await?;
    let second = call!(
        "current_version after two values",
        secrets.current_version("kit/versioned")
    );
    ensure!(
        second == first + 1,
        "a second value must be version {}, `current_version` answered {second}",
        first + 1
    );
    for (version, expected) in [(first, &b"one"[..]), (second, &b"two"[..])] {
        let value = call!(
            format!("get_version(\"kit/versioned\", {version})"),
            secrets.get_version("kit/versioned", version)
        );
        ensure!(
            value.expose().as_slice() == expected,
            "`get_version(\"kit/versioned\", {version})` answered another version's value"
        );
    }
    let current = call!("get", secrets.get("kit/versioned"));
    ensure!(
        current.expose().as_slice() == b"two",
        "`get` must answer the current version's value"
    );
    expect_kind(
        "`get_version(\"kit/versioned\", 0)`",
        ErrorKind::InvalidInput,
        &secrets
            .get_version("kit/versioned", 0)
            .await
            .map(|v| v.expose().len()),
    )?;
    expect_kind(
        "`get_version` of a version past the current one",
        ErrorKind::NotFound,
        &secrets
            .get_version("kit/versioned", second + 1)
            .await
            .map(|v| v.expose().len()),
    )?;
    expect_kind(
        "`current_version` of a secret never seeded",
        ErrorKind::NotFound,
        &secrets.current_version("kit/unversioned").await,
    )
}

/// Wait for a change after `cursor` while `change` is applied, and check it names exactly `name`
/// within the tolerance of the change.
async fn expect_signal<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
    cursor: u64,
    change: Seed,
    name: &str,
) -> Result<Changes, String> {
    let shared = i.shared();
    let waiting = tokio::spawn(async move {
        let secrets: &dyn Secrets = &*shared;
        secrets.changes(cursor, LONG_WAIT).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    ensure!(
        !waiting.is_finished(),
        "`changes({cursor}, 10 s)` answered before anything changed"
    );
    let what = format!("{change:?}");
    seed(i, s, change).await?;
    let changed_at = Instant::now();
    let answer = waiting
        .await
        .map_err(|e| format!("`changes` panicked: {e}"))?
        .map_err(|e| format!("`changes({cursor}, 10 s)` failed: {e}"))?;
    let late = changed_at.elapsed();
    ensure!(
        late <= s.late(),
        "`changes` answered {late:?} after {what}, more than the tolerance of {:?}",
        s.late()
    );
    ensure!(
        answer.names == [name],
        "`changes` after {what} must name exactly {name:?}, it named {:?}",
        answer.names
    );
    ensure!(
        answer.cursor > cursor,
        "a change must move the cursor past {cursor}, it answered {}",
        answer.cursor
    );
    Ok(answer)
}

pub(super) async fn changes_signal_every_change<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    if !i.declares(WATCH) {
        return expect_unsupported("changes", &secrets.changes(0, Duration::ZERO).await);
    }
    set(i, s, "kit/watched/other", b"unchanged").await?;
    let started = Instant::now();
    let first = call!("changes(0, 0)", secrets.changes(0, Duration::ZERO));
    ensure!(
        started.elapsed() <= s.late(),
        "`changes(0, 0)` must answer at once, it took {:?}",
        started.elapsed()
    );
    ensure!(first.cursor != 0, "a cursor is never 0");
    ensure!(
        first.names.is_empty(),
        "`changes(0, …)` answers changes after the call began, it named {:?}",
        first.names
    );
    let name = "kit/watched/key";
    let created = expect_signal(
        i,
        s,
        first.cursor,
        Seed::Set {
            name: name.to_owned(),
            value: b"v1".to_vec(),
        },
        name,
    )
    .await?;
    let changed = expect_signal(
        i,
        s,
        created.cursor,
        Seed::Set {
            name: name.to_owned(),
            value: b"v2, longer".to_vec(),
        },
        name,
    )
    .await?;
    expect_signal(
        i,
        s,
        changed.cursor,
        Seed::Remove {
            name: name.to_owned(),
        },
        name,
    )
    .await?;
    // Holding an old cursor, a caller misses nothing.
    let since_first = call!(
        "changes(first cursor, 0)",
        secrets.changes(first.cursor, Duration::ZERO)
    );
    ensure!(
        since_first.names == [name],
        "`changes` from the first cursor must name the changed secret once, it named {:?}",
        since_first.names
    );
    Ok(())
}

pub(super) async fn changes_wait_their_time_and_refuse_unknown_cursors<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    if !i.declares(WATCH) {
        return expect_unsupported("changes", &secrets.changes(0, SHORT_WAIT).await);
    }
    set(i, s, "kit/quiet", b"still").await?;
    let cursor = call!("changes(0, 0)", secrets.changes(0, Duration::ZERO)).cursor;
    let started = Instant::now();
    let quiet = call!(
        "changes(cursor, 600 ms)",
        secrets.changes(cursor, SHORT_WAIT)
    );
    let took = started.elapsed();
    ensure!(
        quiet.names.is_empty(),
        "with nothing changed, `changes` named {:?}",
        quiet.names
    );
    ensure!(
        took >= SHORT_WAIT,
        "with nothing changed, `changes(cursor, 600 ms)` answered after {took:?}, before its wait"
    );
    ensure!(
        took <= SHORT_WAIT + s.late(),
        "`changes(cursor, 600 ms)` answered after {took:?}, later than its wait and the \
         tolerance of {:?}",
        s.late()
    );
    ensure!(
        quiet.cursor >= cursor,
        "the cursor went back from {cursor} to {}",
        quiet.cursor
    );
    let ahead = quiet.cursor.saturating_add(1_000_000);
    expect_kind(
        &format!("`changes({ahead}, 0)`, a cursor this store never issued"),
        ErrorKind::InvalidInput,
        &secrets.changes(ahead, Duration::ZERO).await,
    )
}

pub(super) async fn list_answers_names_under_a_prefix<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    if !i.declares(LIST) {
        return expect_unsupported("list", &secrets.list("kit/").await);
    }
    let names = [
        "kit/list/b",
        "kit/list/a",
        "kit/list/a2",
        "kit/list/deep/er",
        "kit/lister",
        "kit/other",
    ];
    for name in names {
        set(i, s, name, name.as_bytes()).await?;
    }
    let listed = call!("list(\"kit/list/\")", secrets.list("kit/list/"));
    let expected = [
        "kit/list/a",
        "kit/list/a2",
        "kit/list/b",
        "kit/list/deep/er",
    ];
    ensure!(
        listed == expected,
        "`list(\"kit/list/\")` must answer {expected:?} (sorted, nothing else), it answered {listed:?}"
    );
    let under_list = call!("list(\"kit/list\")", secrets.list("kit/list"));
    ensure!(
        under_list.len() == 5 && under_list.contains(&"kit/lister".to_owned()),
        "`list(\"kit/list\")` is a prefix of bytes: it must include \"kit/lister\", it answered {under_list:?}"
    );
    let everything = call!("list(\"\")", secrets.list(""));
    for name in names {
        ensure!(
            everything.iter().filter(|n| *n == name).count() == 1,
            "`list(\"\")` must name {name:?} once, it answered {everything:?}"
        );
    }
    ensure!(
        everything.windows(2).all(|pair| pair[0] < pair[1]),
        "`list(\"\")` must be sorted, each name once: {everything:?}"
    );
    seed(
        i,
        s,
        Seed::Remove {
            name: "kit/list/b".to_owned(),
        },
    )
    .await?;
    let after = call!("list after a removal", secrets.list("kit/list/"));
    ensure!(
        after == ["kit/list/a", "kit/list/a2", "kit/list/deep/er"],
        "a removed secret must not be listed: {after:?}"
    );
    let none = call!("list(\"kit/nothing/\")", secrets.list("kit/nothing/"));
    ensure!(
        none.is_empty(),
        "`list(\"kit/nothing/\")` answered {none:?}"
    );
    Ok(())
}
