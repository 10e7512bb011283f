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

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use sandloom::{InfraConfig, Kernel, Running};
use tokio::runtime::Runtime;

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

    /// Time `iters` sequential runs of `op`, inside the runtime.
    fn timed<F, Fut>(&self, iters: u64, op: F) -> Duration
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        self.runtime.block_on(async {
            let begin = Instant::now();
            for _ in 0..iters {
                op().await;
            }
            begin.elapsed()
        })
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

/// Rounds of the paired comparison, and calls per side in each round.
const PAIRED_ROUNDS: usize = 40;
const PAIRED_CALLS: u32 = 200;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Rounds that time `PAIRED_CALLS` driver gets and as many raw gets back to back, alternating
/// which side goes first; the median per-call times and the median of the per-round ratios.
fn paired(fixture: &Fixture) {
    let mut ratios = Vec::with_capacity(PAIRED_ROUNDS);
    let mut driver_times = Vec::with_capacity(PAIRED_ROUNDS);
    let mut raw_times = Vec::with_capacity(PAIRED_ROUNDS);
    let calls = u64::from(PAIRED_CALLS);
    for round in 0..PAIRED_ROUNDS {
        let driver = || fixture.timed(calls, || fixture.driver_get());
        let raw = || fixture.timed(calls, || fixture.raw_get());
        let (driver_time, raw_time) = if round % 2 == 0 {
            let d = driver();
            (d, raw())
        } else {
            let r = raw();
            (driver(), r)
        };
        ratios.push(raw_time.as_secs_f64() / driver_time.as_secs_f64());
        driver_times.push(driver_time.as_secs_f64() * 1e6 / f64::from(PAIRED_CALLS));
        raw_times.push(raw_time.as_secs_f64() * 1e6 / f64::from(PAIRED_CALLS));
    }
    println!(
        "paired get: driver {:.1} µs/call, raw {:.1} µs/call (medians of {PAIRED_ROUNDS} rounds \
         × {PAIRED_CALLS} calls); driver throughput = {:.2} × raw (median per-round ratio)",
        median(&mut driver_times),
        median(&mut raw_times),
        median(&mut ratios)
    );
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
        b.iter_custom(|iters| fixture.timed(iters, || fixture.driver_get()));
    });
    group.bench_function("get/reqwest", |b| {
        b.iter_custom(|iters| fixture.timed(iters, || fixture.raw_get()));
    });
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        paired(&fixture);
    }
    fixture.clean_up();
    criterion.final_summary();
}
