//! The configurations the campaign swaps between: per capability, a ring of variants in which
//! each differs from the one before it, by driver or by options, so that every applied reload
//! replaces every instance.

use std::fmt::Write as _;
use std::path::Path;

use sandloom::InfraConfig;
use sandloom_embedded::MemorySecretStore;

/// The capabilities, in the order of [`Variants::rings`].
pub(crate) const CAPABILITIES: [&str; 6] = [
    "cache",
    "notifier",
    "objectstore",
    "taskqueue",
    "lock",
    "secrets",
];

/// How a reload is made to fail: the new `cache.default` is one of the faulty fixtures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// `start` returns an error.
    StartError,
    /// `start` panics.
    StartPanic,
    /// Started, but its health check answers unhealthy.
    Unhealthy,
    /// `start` never ends (cut by `start_timeout_ms`).
    StartHang,
}

impl Failure {
    /// Every failure, in the order the campaign uses them.
    pub(crate) const ALL: [Self; 4] = [
        Self::StartError,
        Self::StartPanic,
        Self::Unhealthy,
        Self::StartHang,
    ];

    /// The fixture driver (crates/integration-tests/fixtures/faulty).
    pub(crate) fn driver(self) -> &'static str {
        match self {
            Self::StartError => "start-error",
            Self::StartPanic => "start-panic",
            Self::Unhealthy => "unhealthy",
            Self::StartHang => "start-hang",
        }
    }
}

/// One variant: its tag (what [`crate::identity`] tells apart) and its `INFRA` table body.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    /// Names the variant in the figures.
    pub(crate) tag: String,
    /// The table's keys, `driver` first.
    pub(crate) body: String,
    /// `notifier.memory`'s outbox, if this is one.
    pub(crate) outbox: Option<String>,
}

/// The rings of variants of one campaign run, with what they need on disk and in Redis and
/// Postgres kept apart per run.
pub(crate) struct Variants {
    /// Per capability, in [`CAPABILITIES`] order.
    pub(crate) rings: Vec<Vec<Variant>>,
    /// Top-level settings of every configuration.
    pub(crate) settings: String,
    /// The `secrets.memory` stores: a named store lives as long as a handle to it does.
    _stores: Vec<MemorySecretStore>,
}

fn variant(tag: &str, body: String) -> Variant {
    Variant {
        tag: tag.to_owned(),
        body,
        outbox: None,
    }
}

impl Variants {
    /// The rings for run `run` (unique per process), with files under `dir`.
    pub(crate) fn new(
        run: &str,
        dir: &Path,
        redis: &str,
        postgres: &str,
        stop_timeout_ms: u64,
    ) -> Self {
        let cache = vec![
            variant(
                "memory-4096",
                "driver = \"memory\"\ncapacity = 4096\n".into(),
            ),
            variant(
                "redis-a",
                format!(
                    "driver = \"redis\"\nurl = \"{redis}\"\nprefix = \"{run}:ca:\"\ndefault_ttl_ms = 600000\n"
                ),
            ),
            variant(
                "memory-8192",
                "driver = \"memory\"\ncapacity = 8192\n".into(),
            ),
            variant(
                "redis-b",
                format!(
                    "driver = \"redis\"\nurl = \"{redis}\"\nprefix = \"{run}:cb:\"\ndefault_ttl_ms = 600000\nresponse_timeout_ms = 4000\n"
                ),
            ),
        ];
        let outbox = |name: &str| Variant {
            tag: format!("memory-{name}"),
            body: format!("driver = \"memory\"\noutbox = \"{run}-{name}\"\n"),
            outbox: Some(format!("{run}-{name}")),
        };
        let notifier = vec![
            outbox("a"),
            variant("log-info", "driver = \"log\"\nlevel = \"info\"\n".into()),
            outbox("b"),
            variant("log-debug", "driver = \"log\"\nlevel = \"debug\"\n".into()),
        ];
        let objectstore = vec![
            variant("memory", "driver = \"memory\"\n".into()),
            variant("fs-a", fs(&dir.join("objects-a"))),
            variant("fs-b", fs(&dir.join("objects-b"))),
        ];
        let taskqueue = vec![
            variant(
                "memory-30s",
                "driver = \"memory\"\nvisibility_timeout_ms = 30000\n".into(),
            ),
            variant(
                "postgres-a",
                format!(
                    "driver = \"postgres\"\nurl = \"{postgres}\"\nnamespace = \"{run}-a\"\npoll_interval_ms = 20\n"
                ),
            ),
            variant(
                "memory-60s",
                "driver = \"memory\"\nvisibility_timeout_ms = 60000\n".into(),
            ),
            variant(
                "postgres-b",
                format!(
                    "driver = \"postgres\"\nurl = \"{postgres}\"\nnamespace = \"{run}-b\"\npoll_interval_ms = 50\n"
                ),
            ),
        ];
        let lock = vec![
            variant("memory", "driver = \"memory\"\n".into()),
            variant(
                "redis-a",
                format!("driver = \"redis\"\nurl = \"{redis}\"\nprefix = \"{run}:la:\"\n"),
            ),
            variant(
                "postgres-a",
                format!("driver = \"postgres\"\nurl = \"{postgres}\"\nnamespace = \"{run}-la\"\n"),
            ),
            variant(
                "redis-b",
                format!("driver = \"redis\"\nurl = \"{redis}\"\nprefix = \"{run}:lb:\"\n"),
            ),
            variant(
                "postgres-b",
                format!("driver = \"postgres\"\nurl = \"{postgres}\"\nnamespace = \"{run}-lb\"\n"),
            ),
        ];
        let (memory_a, store_a) = memory_secrets(run, "memory-a");
        let (memory_b, store_b) = memory_secrets(run, "memory-b");
        let secrets = vec![
            memory_a,
            file_secrets(&dir.join("secrets-a"), "file-a"),
            memory_b,
            file_secrets(&dir.join("secrets-b"), "file-b"),
        ];
        Self {
            rings: vec![cache, notifier, objectstore, taskqueue, lock, secrets],
            settings: format!("stop_timeout_ms = {stop_timeout_ms}\n"),
            _stores: vec![store_a, store_b],
        }
    }

    /// The variant of capability `index` at step `step` of the rings.
    pub(crate) fn at(&self, capability: usize, step: usize) -> &Variant {
        let ring = &self.rings[capability];
        &ring[step % ring.len()]
    }

    /// The configuration of step `step`; with `failure`, `cache.default` is that fixture.
    pub(crate) fn config(&self, step: usize, failure: Option<Failure>) -> InfraConfig {
        let mut text = self.settings.clone();
        if failure == Some(Failure::StartHang) {
            // Long enough for Redis and PostgreSQL to start on a loaded machine, short for CI.
            text.push_str("start_timeout_ms = 1500\n");
        }
        for (index, capability) in CAPABILITIES.iter().enumerate() {
            let body = match failure {
                Some(failure) if index == 0 => format!(
                    "driver = \"{}\"\nlabel = \"reload-campaign\"\n",
                    failure.driver()
                ),
                _ => self.at(index, step).body.clone(),
            };
            let _ = write!(text, "[{capability}.default]\n{body}");
        }
        InfraConfig::from_toml_str(&text, &format!("campaign-{step}.toml")).unwrap()
    }
}

fn fs(root: &Path) -> String {
    std::fs::create_dir_all(root).unwrap();
    format!("driver = \"fs\"\nroot = {:?}\n", root.display().to_string())
}

/// The value of the secret `probe` in a variant's store: its tag.
pub(crate) const PROBE: &str = "probe";
/// Names of the other secrets every store holds.
pub(crate) const SECRETS: [&str; 3] = ["db-password", "api-token", "tls-key"];

fn memory_secrets(run: &str, tag: &str) -> (Variant, MemorySecretStore) {
    let store = format!("{run}-{tag}");
    let named = MemorySecretStore::named(&store);
    named.set(PROBE, tag).unwrap();
    for name in SECRETS {
        named.set(name, format!("{tag}:{name}")).unwrap();
    }
    let variant = variant(tag, format!("driver = \"memory\"\nstore = \"{store}\"\n"));
    (variant, named)
}

fn file_secrets(root: &Path, tag: &str) -> Variant {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(PROBE), tag).unwrap();
    for name in SECRETS {
        std::fs::write(root.join(name), format!("{tag}:{name}")).unwrap();
    }
    variant(
        tag,
        format!(
            "driver = \"file\"\nroot = {:?}\npoll_interval_ms = 20\n",
            root.display().to_string()
        ),
    )
}
