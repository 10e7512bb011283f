//! The experimental `secrets` capability through the application door: an instance per
//! built-in driver, reached as modules reach it (`infra.secrets()`, the `SECRETS` key), and
//! refused in production without the accepted risk, as every experimental capability is.

mod common;

use common::start;
use sandloom::sdk::SECRETS;
use sandloom::sdk::secrets::{LIST, VERSIONS, WATCH};
use sandloom_embedded::MemorySecretStore;

#[tokio::test]
async fn modules_read_secrets_from_each_built_in_driver() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tls")).unwrap();
    std::fs::write(dir.path().join("tls/key"), b"file-value").unwrap();
    let store = MemorySecretStore::named("test-secrets-door");
    store.set("db/password", "memory-value").unwrap();
    // SAFETY: this test binary reads its environment only through `std::env`.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("TEST_SECRETS_DOOR_api__token", "env-value");
    }
    let infra = format!(
        "[secrets.default]\ndriver = \"memory\"\nstore = \"test-secrets-door\"\n\n\
         [secrets.env]\ndriver = \"env\"\nprefix = \"TEST_SECRETS_DOOR_\"\n\n\
         [secrets.mounted]\ndriver = \"file\"\nroot = {:?}\n",
        dir.path().display().to_string()
    );
    let running = start(&infra, sandloom::link_drivers!(sandloom_embedded))
        .await
        .unwrap();
    let infra = running.infra();
    let default = infra.secrets().unwrap();
    assert_eq!(
        default.get("db/password").await.unwrap().expose(),
        b"memory-value"
    );
    let env = infra.capability(&SECRETS, "env").unwrap();
    assert_eq!(
        env.get("api/token").await.unwrap().expose_str().unwrap(),
        "env-value"
    );
    let mounted = infra.capability(&SECRETS, "mounted").unwrap();
    assert_eq!(
        mounted.get("tls/key").await.unwrap().expose(),
        b"file-value"
    );
    assert_eq!(mounted.list("").await.unwrap(), ["tls/key"]);
    // The gate serves what each instance declares, and refuses the rest.
    assert_eq!(default.current_version("db/password").await.unwrap(), 1);
    let unsupported = env.current_version("api/token").await.unwrap_err();
    assert_eq!(unsupported.kind(), sandloom::sdk::ErrorKind::Unsupported);
    let features = |name: &str| {
        running
            .report()
            .lines
            .iter()
            .find(|line| line.instance == name)
            .map(|line| line.features.clone())
            .unwrap()
    };
    assert_eq!(features("default"), [VERSIONS, WATCH, LIST]);
    assert_eq!(features("env"), [LIST]);
    assert_eq!(features("mounted"), [WATCH, LIST]);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn secrets_is_stable_and_starts_in_production_without_an_accepted_risk() {
    let spec = sandloom_kernel::registry::capabilities()
        .iter()
        .find(|spec| spec.name == "secrets")
        .unwrap();
    assert_eq!(
        (spec.stability, spec.contract_version.major),
        (sandloom_kernel::registry::Stability::Stable, 1)
    );
    let running = start(
        "environment = \"production\"\n[secrets.default]\ndriver = \"memory\"\n",
        sandloom::link_drivers!(sandloom_embedded),
    )
    .await
    .unwrap();
    running.shutdown().await.unwrap();
}
