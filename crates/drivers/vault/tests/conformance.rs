//! `secrets.vault` passes the whole conformance kit of the `secrets` contract against a real
//! `OpenBao` server (`bao server -dev`, started by `scripts/test-services`), each instance under a
//! prefix of its own in the `secret/` KV v2 engine, reached through a proxy the kit's outage cuts.

mod support;

use sandloom_conformance::KitRequest;
use sandloom_conformance::secrets::Seed;
use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};

/// The instance's prefix under `secret/`: unique to the run and to the instance.
fn prefix(request: &KitRequest) -> String {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let run = RUN.get_or_init(|| support::unique("kit"));
    let instance = request
        .scratch_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .replace(
            |c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "_",
        );
    format!("sandloom-vault-tests/{run}/{instance}")
}

fn options(request: &KitRequest) -> VaultSecretsOptions {
    let address = if request.unreachable {
        "http://127.0.0.1:1".to_owned()
    } else {
        support::proxy_for(&request.scratch_dir)
    };
    VaultSecretsOptions {
        address: address.into(),
        ..support::options(&prefix(request))
    }
}

fn seed(request: &KitRequest, seed: &Seed) -> Result<(), String> {
    let prefix = prefix(request);
    match seed {
        Seed::Set { name, value } => support::put(&format!("{prefix}/{name}"), value),
        Seed::Remove { name } => support::remove(&format!("{prefix}/{name}")),
        _ => Err(format!("this seeder does not know {seed:?}")),
    }
}

sandloom_conformance::secrets_conformance!(
    #[cfg_attr(
        not(sandloom_test_vault),
        ignore = "needs a real server: set SANDLOOM_TEST_VAULT_URL (eval \"$(scripts/test-services up)\") and rebuild"
    )]
    VaultSecrets,
    options,
    .seeder(seed)
    .outage(|request| support::cut(&request.scratch_dir))
    // A scan every 50 ms, each a few requests to a local server.
    .tolerance(std::time::Duration::from_secs(1))
    .secrets([support::root_token()])
);
