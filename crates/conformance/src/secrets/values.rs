//! Secrets obligations: values read exactly, the size limit, not-found and unavailable.

use sandloom_driverkit::secrets::{SecretsCapability, SecretsProvider};
use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::secrets::Secrets;

use super::{SecretsSettings, Seed, seed, set};
use crate::harness::Instance;
use crate::{ensure, expect_kind};

/// Read `name` and compare with `expected`, saying how they differ (never the values).
pub(super) async fn expect_value(
    secrets: &dyn Secrets,
    name: &str,
    expected: &[u8],
    context: &str,
) -> Result<(), String> {
    match secrets.get(name).await {
        Ok(value) if value.expose().as_slice() == expected => Ok(()),
        Ok(value) => {
            let got = value.expose();
            let first = got.iter().zip(expected).position(|(a, b)| a != b);
            Err(format!(
                "`get({name:?})` ({context}) answered {} bytes, {} expected{}",
                got.len(),
                expected.len(),
                first.map_or_else(String::new, |at| format!("; they differ at byte {at}"))
            ))
        }
        Err(error) => Err(format!(
            "`get({name:?})` ({context}) failed: {} ({})",
            error,
            error.kind()
        )),
    }
}

/// Every byte value, NUL included unless the kit was told the backend cannot hold one.
pub(super) fn every_byte(s: &SecretsSettings) -> Vec<u8> {
    (0..=255_u8).filter(|&b| b != 0 || s.nul_bytes()).collect()
}

pub(super) async fn get_reads_values_exactly<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("kit/plain", b"s3cr3t-p4ss".to_vec()),
        ("kit/utf8", "mot de passe: é, 密码, 🔑".as_bytes().to_vec()),
        ("kit/newline", b"line\n".to_vec()),
        ("kit/spaces", b"  padded  ".to_vec()),
        ("kit/empty", Vec::new()),
        ("kit/binary", every_byte(s)),
        ("kit/high", vec![0xff, 0xfe, 0x80, 0xc3]),
    ];
    for (name, value) in &cases {
        set(i, s, name, value).await?;
    }
    for (name, value) in &cases {
        expect_value(secrets, name, value, "as seeded").await?;
    }
    set(i, s, "kit/plain", b"rotated").await?;
    expect_value(secrets, "kit/plain", b"rotated", "after a new value").await?;
    expect_value(
        secrets,
        "kit/utf8",
        &cases[1].1,
        "another secret was changed",
    )
    .await
}

pub(super) async fn values_up_to_the_limit_and_none_past_it<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    let limit = s.max_value_bytes();
    let pattern = every_byte(s);
    let at_limit: Vec<u8> = pattern.iter().copied().cycle().take(limit).collect();
    set(i, s, "kit/at_limit", &at_limit).await?;
    expect_value(secrets, "kit/at_limit", &at_limit, "exactly the limit").await?;
    let past: Vec<u8> = pattern.iter().copied().cycle().take(limit + 1).collect();
    set(i, s, "kit/past_limit", &past).await?;
    let answer = secrets.get("kit/past_limit").await;
    expect_kind(
        &format!(
            "`get` of a value of {} bytes (the limit is {limit})",
            limit + 1
        ),
        ErrorKind::Backend,
        &answer.map(|value| format!("<{} bytes>", value.expose().len())),
    )?;
    expect_value(
        secrets,
        "kit/at_limit",
        &at_limit,
        "after one past the limit",
    )
    .await
}

/// Check that `get(name)` answers `NotFound` naming the secret.
async fn expect_not_found(secrets: &dyn Secrets, name: &str, context: &str) -> Result<(), String> {
    match secrets.get(name).await {
        Err(error) if error.kind() == ErrorKind::NotFound => {
            ensure!(
                error.to_string().contains(name),
                "the NotFound of `get({name:?})` ({context}) must name the secret: {error}"
            );
            Ok(())
        }
        Err(error) => Err(format!(
            "`get({name:?})` ({context}) must answer NotFound, it answered {}: {error}",
            error.kind()
        )),
        Ok(value) => Err(format!(
            "`get({name:?})` ({context}) must answer NotFound, it answered a value of {} bytes",
            value.expose().len()
        )),
    }
}

pub(super) async fn a_missing_secret_is_not_found_naming_it<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    expect_not_found(secrets, "kit/never_written", "never seeded").await?;
    set(i, s, "kit/short_lived", b"here").await?;
    expect_value(secrets, "kit/short_lived", b"here", "seeded").await?;
    seed(
        i,
        s,
        Seed::Remove {
            name: "kit/short_lived".to_owned(),
        },
    )
    .await?;
    expect_not_found(secrets, "kit/short_lived", "seeded, then removed").await?;
    expect_not_found(secrets, "kit/short_lived/deeper", "below a secret").await
}

pub(super) async fn not_found_and_unavailable_are_distinct<T: SecretsProvider>(
    i: &Instance<T>,
    s: &SecretsSettings,
) -> Result<(), String> {
    let secrets = i.served::<SecretsCapability>();
    set(i, s, "kit/before_outage", b"value").await?;
    expect_not_found(secrets, "kit/missing", "the backend answers").await?;
    let Some(outage) = s.outage.clone() else {
        // No backend that can fail: the NotFound half is all there is to check.
        return Ok(());
    };
    let request = i.request().clone();
    tokio::task::spawn_blocking(move || outage(&request))
        .await
        .map_err(|e| format!("the outage panicked: {e}"))?
        .map_err(|e| format!("the outage could not be made: {e}"))?;
    for name in ["kit/before_outage", "kit/missing"] {
        match secrets.get(name).await {
            Err(error) if matches!(error.kind(), ErrorKind::Unavailable | ErrorKind::Timeout) => {}
            Err(error) => {
                return Err(format!(
                    "`get({name:?})` with the backend failing must answer Unavailable or \
                     Timeout (\"cannot tell now\"), it answered {}: {error}",
                    error.kind()
                ));
            }
            Ok(value) => {
                return Err(format!(
                    "`get({name:?})` with the backend failing answered a value of {} bytes",
                    value.expose().len()
                ));
            }
        }
    }
    Ok(())
}
