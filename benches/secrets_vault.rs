//! `secrets.vault` through `infra.secrets()` against a raw `reqwest` GET of the same KV v2 path,
//! same server, same run: `get` of one 32-byte text value. The driver is reached as a module
//! reaches it: the kernel started on an `INFRA` selecting `secrets.vault`, `infra.secrets()` on
//! every call, through the gate. The raw side is a `reqwest` client with the driver's timeouts
//! sending the same request (`GET /v1/secret/data/<prefix>/<name>`, `X-Vault-Token`) and
//! parsing the same JSON answer into the value's bytes.
//!
//! After criterion's measurements, a real run (`--bench`) also prints a paired comparison
//! (driver and raw timed back to back in alternating rounds; median of the per-round ratios),
//! which stays meaningful on a machine whose load drifts during the run.
//!
//! Needs `SANDLOOM_TEST_VAULT_URL` and `SANDLOOM_TEST_VAULT_TOKEN`
//! (`eval "$(scripts/test-services up)"`); without them, prints how to run and exits
//! successfully.
//! `cargo bench -p sandloom-benches --bench secrets_vault -- --measurement-time 3`.

mod peers;

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use sandloom::{InfraConfig, Kernel, Running};
use tokio::runtime::Runtime;

use peers::{Paired, timed};

/// The secret both sides read.
const NAME: &str = "bench/db-password";
/// Its value: 32 bytes of text.
const VALUE: &str = "bench-value-0123456789abcdefghij";

struct Fixture {
    runtime: Runtime,
    running: Option<Running>,
    raw: reqwest::Client,
    raw_url: String,
    token: String,
}

impl Fixture {
    fn new(address: &str, token: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let prefix = format!("sandloom-bench/{}", std::process::id());
        let infra = format!(
            "[secrets.default]\ndriver = \"vault\"\naddress = \"{address}\"\ntoken = \"{token}\"\n\
             prefix = \"{prefix}\"\n"
        );
        let config = InfraConfig::from_toml_str(&infra, "benches/secrets_vault.rs").expect("INFRA");
        let defaults = sandloom_driver_vault::VaultSecretsOptions::new(address);
        let raw = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(defaults.connect_timeout_ms))
            .timeout(Duration::from_millis(defaults.request_timeout_ms))
            .build()
            .expect("a reqwest client");
        let raw_url = format!("{address}/v1/secret/data/{prefix}/{NAME}");
        let running = runtime.block_on(async {
            let written = raw
                .post(&raw_url)
                .header("x-vault-token", token)
                .body(format!("{{\"data\":{{\"value\":\"{VALUE}\"}}}}"))
                .send()
                .await
                .expect("the server answers");
            assert!(
                written.status().is_success(),
                "writing the value: {}",
                written.status()
            );
            Kernel::new(config, sandloom::link_drivers!(sandloom_driver_vault))
                .start()
                .await
                .unwrap_or_else(|err| panic!("{err}"))
        });
        Self {
            runtime,
            running: Some(running),
            raw,
            raw_url,
            token: token.to_owned(),
        }
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("started")
    }

    async fn driver_get(&self) {
        let secrets = self.running().infra().secrets().expect("secrets.default");
        let value = secrets.get(NAME).await.expect("get");
        assert_eq!(value.expose().len(), VALUE.len());
        black_box(value);
    }

    async fn raw_get(&self) {
        #[derive(serde::Deserialize)]
        struct Answer {
            data: Data,
        }
        #[derive(serde::Deserialize)]
        struct Data {
            data: std::collections::HashMap<String, String>,
        }
        let answer = self
            .raw
            .get(&self.raw_url)
            .header("x-vault-token", &self.token)
            .send()
            .await
            .expect("the server answers");
        assert!(answer.status().is_success(), "{}", answer.status());
        let body = answer.bytes().await.expect("the body");
        let mut answer: Answer = serde_json::from_slice(&body).expect("a KV v2 answer");
        let value = answer
            .data
            .data
            .remove("value")
            .expect("the field")
            .into_bytes();
        assert_eq!(value.len(), VALUE.len());
        black_box(value);
    }

    fn clean_up(mut self) {
        let running = self.running.take().expect("started");
        let metadata = self.raw_url.replacen("/data/", "/metadata/", 1);
        self.runtime.block_on(async {
            let _ = self
                .raw
                .delete(&metadata)
                .header("x-vault-token", &self.token)
                .send()
                .await;
            running.shutdown().await.expect("the kernel stops");
        });
    }
}

/// The paired comparison: 40 rounds, each 200 driver gets and 200 raw gets back to back.
fn paired(fixture: &Fixture) {
    Paired::new(&fixture.runtime, 40, 200)
        .named("driver", "raw")
        .print("get", || fixture.driver_get(), || fixture.raw_get());
}

fn main() {
    let (Ok(address), Ok(token)) = (
        std::env::var("SANDLOOM_TEST_VAULT_URL"),
        std::env::var("SANDLOOM_TEST_VAULT_TOKEN"),
    ) else {
        eprintln!(
            "benches/secrets_vault.rs: skipped, needs a real server: set SANDLOOM_TEST_VAULT_URL \
             and SANDLOOM_TEST_VAULT_TOKEN (eval \"$(scripts/test-services up)\") and rerun"
        );
        return;
    };
    let fixture = Fixture::new(&address, &token);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("secrets.vault");
    group.bench_function("get/infra.secrets()", |b| {
        b.iter_custom(|iters| timed(&fixture.runtime, iters, || fixture.driver_get()));
    });
    group.bench_function("get/reqwest", |b| {
        b.iter_custom(|iters| timed(&fixture.runtime, iters, || fixture.raw_get()));
    });
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        paired(&fixture);
    }
    fixture.clean_up();
    criterion.final_summary();
}
