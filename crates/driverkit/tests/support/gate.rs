//! `Tiny`, a cache driver served behind the cache contract's gate, for the gate's tests
//! (`gate.rs`, and `gate_spans.rs`, a binary of its own because tracing's callsite interest is
//! process-wide).

use std::time::Duration;

use sandloom_driverkit::__private::{Gate, GateContext};
use sandloom_driverkit::cache::{CacheCapability, CacheOps, CacheProvider, TTL};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, NoOptions, ProvidedBy, Version};

/// A cache that knows one key, refuses the key `bad`, and implements `set_with_ttl` whatever it
/// declares.
pub struct Tiny;

impl CacheOps for Tiny {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        match key {
            "bad" => Err(InfraError::invalid_input("cache", "bad key")),
            "secret-key" => Ok(Some(Bytes::from_static(b"secret-value"))),
            _ => Ok(None),
        }
    }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _: &str) -> InfraResult<bool> {
        Ok(false)
    }
    async fn set_with_ttl(&self, _: &str, _: Bytes, _: Duration) -> InfraResult<()> {
        Ok(())
    }
}

impl Driver for Tiny {
    type Options = NoOptions;
    fn supported_features() -> &'static [&'static str] {
        &[TTL]
    }
    fn from_options(_: NoOptions) -> Result<Self, DriverError> {
        Ok(Tiny)
    }
}

impl CacheProvider for Tiny {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

/// What the kernel serves modules: `Tiny` behind the cache contract's gate.
pub type TinyGate = <CacheCapability as ProvidedBy<Tiny>>::Gate;

/// `Tiny` behind its gate as instance `sessions` of driver `tiny`, declaring no feature (so the
/// gate refuses `set_with_ttl`), with telemetry on or off.
pub fn gate(telemetry: bool) -> TinyGate {
    TinyGate::wrap(
        Tiny,
        &GateContext {
            features: &[], // `ttl` not declared
            instance: &"sessions".into(),
            driver: "tiny",
            telemetry,
        },
    )
}

/// Run `future` to its end on a current-thread runtime of its own.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}
