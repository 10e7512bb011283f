//! A cache driver whose operations do nothing and are ready at once, registered with
//! `register_driver!` and started through the kernel (so the feature gate is included), and
//! the `INFRA` of the accessor benchmarks around it.

// The copy of the path before issue 27; some binaries sharing this module do not use it.
#[allow(dead_code)]
pub(crate) mod old;

use std::sync::Arc;

use sandloom::sdk::bytes::Bytes;
use sandloom::sdk::{CACHE, Cache, CacheOps, Infra, InfraResult};
use sandloom::{InfraConfig, Kernel, Running};
use sandloom_driverkit::cache::CacheProvider;
use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};

/// `get` answers `Ok(None)`, `set` and `delete` succeed; nothing is stored.
pub(crate) struct NoopCache;

impl CacheOps for NoopCache {
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

[cache.quiet]
driver = "noop"
telemetry = false

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

    /// The same driver behind a copy of the gate as it was before telemetry and drain (feature
    /// flags only): the baseline of "what the gate costs now". A method, though it reads
    /// nothing of the started infrastructure, so that every measured handle comes from one place.
    #[allow(clippy::unused_self)]
    pub(crate) fn pre_telemetry(&self) -> Arc<dyn Cache> {
        Arc::new(PreTelemetryGate {
            driver: NoopCache,
            ttl: false,
            increment: false,
            bulk: false,
        })
    }

    /// A copy of the path before routes (issue 26): the same driver behind the same gate,
    /// handed out as the gate itself (`Arc<dyn Cache>`), from an accessor that reads an
    /// `Option<Arc<dyn Cache>>` field, as `Infra::cache` did. The baseline of "what the route
    /// costs".
    // `accessors` and `allocations_10` use it; the other binaries sharing this module do not.
    #[allow(clippy::unused_self, dead_code)]
    pub(crate) fn direct(&self) -> Direct {
        use sandloom_driverkit::__private::{Gate, GateContext};
        use sandloom_driverkit::ProvidedBy;
        use sandloom_driverkit::cache::CacheCapability;
        let gate = <CacheCapability as ProvidedBy<NoopCache>>::Gate::wrap(
            NoopCache,
            &GateContext {
                features: &[],
                instance: &"default".into(),
                driver: "noop",
                telemetry: true,
            },
        );
        Direct {
            cache: Some(CacheCapability::upcast(Arc::new(gate))),
        }
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

/// The cache gate as the first wave had it: the driver and a flag per feature, required
/// operations passed straight through. Kept here, not in the library, as the benchmarks'
/// baseline for the gate's cost.
pub(crate) struct PreTelemetryGate {
    driver: NoopCache,
    ttl: bool,
    increment: bool,
    bulk: bool,
}

impl CacheOps for PreTelemetryGate {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        CacheOps::get(&self.driver, key).await
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        CacheOps::set(&self.driver, key, value).await
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        CacheOps::delete(&self.driver, key).await
    }

    async fn set_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        ttl: std::time::Duration,
    ) -> InfraResult<()> {
        if !self.ttl {
            return Err(sandloom::sdk::InfraError::unsupported(
                "cache",
                "set_with_ttl",
                "ttl",
            ));
        }
        CacheOps::set_with_ttl(&self.driver, key, value, ttl).await
    }

    async fn increment(&self, key: &str, delta: i64) -> InfraResult<i64> {
        if !self.increment {
            return Err(sandloom::sdk::InfraError::unsupported(
                "cache",
                "increment",
                "increment",
            ));
        }
        CacheOps::increment(&self.driver, key, delta).await
    }

    async fn get_many(&self, keys: &[&str]) -> InfraResult<Vec<Option<Bytes>>> {
        if !self.bulk {
            return Err(sandloom::sdk::InfraError::unsupported(
                "cache", "get_many", "bulk",
            ));
        }
        CacheOps::get_many(&self.driver, keys).await
    }
}

/// `Infra` as it was before routes, reduced to its `cache()` accessor: see [`Started::direct`].
#[allow(dead_code)] // as `Started::direct`
pub(crate) struct Direct {
    cache: Option<Arc<dyn Cache>>,
}

#[allow(dead_code)] // as `Started::direct`
impl Direct {
    /// As `Infra::cache` was: a field read.
    #[inline]
    pub(crate) fn cache(&self) -> Option<&dyn Cache> {
        self.cache.as_deref()
    }
}
