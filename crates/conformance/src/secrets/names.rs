//! Secrets obligations: the naming rule, names at its limits, and names that look alike.

use std::time::Duration;

use sandloom_driverkit::secrets::{LIST, SecretsCapability, SecretsProvider, VERSIONS, WATCH};
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::secrets::{MAX_NAME_BYTES, Secrets};

use super::values::expect_value;
use super::{SecretsSettings, set};
use crate::expect_kind;
use crate::harness::Instance;

pub(super) async fn invalid_names_are_invalid_input<T: SecretsProvider>(
    i: &Instance<T>,
    _: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    let too_long = "n".repeat(MAX_NAME_BYTES + 1);
    let names = [
        "",
        too_long.as_str(),
        "/kit",
        "kit/",
        "kit//a",
        ".",
        "kit/../a",
        "kit/./a",
        "kit/a b",
        "kit\\a",
        "kit/a\0",
        "kit/caf\u{e9}",   // NFC
        "kit/cafe\u{301}", // NFD
    ];
    for name in names {
        let shown = format!("{name:?}");
        expect_kind(
            &format!("`get({shown})`"),
            ErrorKind::InvalidInput,
            &secrets.get(name).await.map(|v| v.expose().len()),
        )?;
        if i.declares(VERSIONS) {
            expect_kind(
                &format!("`get_version({shown}, 1)`"),
                ErrorKind::InvalidInput,
                &secrets.get_version(name, 1).await.map(|v| v.expose().len()),
            )?;
            expect_kind(
                &format!("`current_version({shown})`"),
                ErrorKind::InvalidInput,
                &secrets.current_version(name).await,
            )?;
        }
    }
    if i.declares(LIST) {
        for prefix in ["kit/a b", too_long.as_str(), "kit/caf\u{e9}"] {
            expect_kind(
                &format!("`list({prefix:?})`"),
                ErrorKind::InvalidInput,
                &secrets.list(prefix).await,
            )?;
        }
    }
    if i.declares(WATCH) {
        // A cursor is not a name; `changes` has none to refuse, and must still answer.
        let changes = secrets.changes(0, Duration::ZERO).await;
        if let Err(error) = changes {
            return Err(format!("`changes(0, 0)` failed: {error}"));
        }
    }
    Ok(())
}

pub(super) async fn names_at_their_limits_are_served<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    // 256 bytes in segments no file system refuses (at most 255 bytes each).
    let longest = format!("kit/{}/{}", "l".repeat(125), "m".repeat(126));
    debug_assert_eq!(longest.len(), MAX_NAME_BYTES);
    // 128 segments: 255 bytes.
    let deepest = vec!["d"; 128].join("/");
    let names = [longest.as_str(), deepest.as_str(), "a", "Z", "7"];
    for (n, name) in names.iter().enumerate() {
        set(i, s, name, format!("value {n}").as_bytes()).await?;
    }
    for (n, name) in names.iter().enumerate() {
        expect_value(
            secrets,
            name,
            format!("value {n}").as_bytes(),
            &format!("a name of {} bytes", name.len()),
        )
        .await?;
    }
    Ok(())
}

/// Names every driver maps (ASCII letters and digits, single `_` inside segments, `/`), each
/// differing from another in one way only.
const ALIKE: &[&str] = &[
    "kit/alike/db/password",
    "kit/alike/db/Password",
    "kit/alike/DB/password",
    "kit/alike/db_password",
    "kit/alike/dbpassword",
    "kit/alike/db/password2",
    "kit/alike/db/pass_word",
    "kit/alike/db/pass/word",
    "kit/alike/db2/password",
];

/// Names that differ from one above by a character some drivers cannot map (`.`, `-`, a double
/// or trailing `_`): each is served distinctly, or refused with `InvalidInput` before seeding.
const ALIKE_UNMAPPED: &[&str] = &[
    "kit/alike/db.password",
    "kit/alike/db-password",
    "kit/alike/db__password",
    "kit/alike/db/password_",
    "kit/alike/db/_password",
];

pub(super) async fn names_that_look_alike_are_distinct<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    let mut served: Vec<&str> = ALIKE.to_vec();
    for name in ALIKE_UNMAPPED {
        match secrets.get(name).await {
            Err(error) if error.kind() == ErrorKind::NotFound => served.push(name),
            // The driver cannot map this name, and says so before anything is stored.
            Err(error) if error.kind() == ErrorKind::InvalidInput => {}
            other => {
                return Err(format!(
                    "`get({name:?})` of a name never seeded must answer NotFound (or \
                     InvalidInput if the driver cannot map it), it answered {:?}",
                    other.map(|v| format!("a value of {} bytes", v.expose().len()))
                ));
            }
        }
    }
    for (n, name) in served.iter().enumerate() {
        set(i, s, name, format!("alike {n}").as_bytes()).await?;
    }
    for (n, name) in served.iter().enumerate() {
        expect_value(
            secrets,
            name,
            format!("alike {n}").as_bytes(),
            "among names that look alike, each seeded with its own value",
        )
        .await?;
    }
    expect_absent(secrets, "kit/alike/db/PASSWORD").await?;
    expect_absent(secrets, "kit/alike/db").await
}

async fn expect_absent(secrets: &dyn Secrets, name: &str) -> Result<(), String> {
    expect_kind(
        &format!("`get({name:?})`, a name never seeded that looks like seeded ones"),
        ErrorKind::NotFound,
        &secrets.get(name).await.map(|v| v.expose().len()),
    )
}
