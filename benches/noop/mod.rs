//! A cache driver whose operations do nothing and are ready at once, registered with
//! `register_driver!` and started through the kernel (so the feature gate is included), and
//! the `INFRA` of the accessor benchmarks around it.

use std::sync::Arc;

use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{CACHE, Cache, Infra, InfraResult};
use sandloom::{InfraConfig, Kernel, Running};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version, async_trait};

/// `get` answers `Ok(None)`, `set` and `delete` succeed; nothing is stored.
pub(crate) struct NoopCache;

#[async_trait]
impl Cache for NoopCache {
    async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> {
        Ok(None)
    }

    async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> {
        Ok(())
    }

    async fn delete(&self, _key: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

#[async_trait]
impl Driver for NoopCache {
    type Options = NoOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(NoopCache)
    }
}

impl CacheProvider for NoopCache {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

sandloom_driverkit::register_driver!(cache, "noop", NoopCache);

/// Four no-op caches and two in-memory defaults: six instances, as a small application has.
pub(crate) const INFRA: &str = r#"
[cache.default]
driver = "noop"

[cache.named]
driver = "noop"

[cache.pages]
driver = "noop"

[cache.sessions]
driver = "noop"

[notifier.default]
driver = "memory"

[taskqueue.default]
driver = "memory"
"#;

/// Started infrastructure for the accessor measurements.
pub(crate) struct Started {
    /// Keeps the drivers running.
    pub(crate) running: Running,
    /// The runtime they started on, for shutting them down.
    pub(crate) runtime: tokio::runtime::Runtime,
}

impl Started {
    /// The handle modules use.
    pub(crate) fn infra(&self) -> &Infra {
        self.running.infra()
    }

    /// What a module keeps after resolving once: the default cache as an owned `Arc`.
    pub(crate) fn held(&self) -> Arc<dyn Cache> {
        self.infra()
            .capability_arc(&CACHE, "default")
            .expect("cache.default is configured")
    }

    /// Stop the drivers.
    pub(crate) fn shutdown(self) {
        let Self { running, runtime } = self;
        runtime
            .block_on(running.shutdown())
            .expect("the drivers stop");
    }
}

/// Start [`INFRA`] through the kernel on a current-thread runtime.
pub(crate) fn start() -> Started {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let config = InfraConfig::from_toml_str(INFRA, "bench").expect("valid INFRA");
    let linked = sandloom::link_drivers!(sandloom_embedded);
    let running = runtime
        .block_on(Kernel::new(config, linked).start())
        .expect("the no-op caches start");
    Started { running, runtime }
}
