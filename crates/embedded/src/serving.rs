//! Whether an embedded driver still serves operations: the one piece of lifecycle state every
//! embedded driver shares. (Named for that role; the kernel's `Running` is the started
//! infrastructure, a different thing.)

use std::sync::atomic::{AtomicBool, Ordering};

use sandloom_driverkit::Health;
use sandloom_driverkit::sdk::{InfraError, InfraResult};

/// Whether a driver still serves operations. Drivers are usable from construction (so unit
/// tests need no kernel) until `stop`; afterwards every operation answers `Stopped`.
#[derive(Debug, Default)]
pub(crate) struct Serving {
    stopped: AtomicBool,
}

impl Serving {
    /// `Ok` while serving; `Stopped` for `capability` after `stop`.
    pub(crate) fn check(&self, capability: &'static str) -> InfraResult<()> {
        if self.stopped.load(Ordering::Acquire) {
            Err(InfraError::stopped(capability))
        } else {
            Ok(())
        }
    }

    /// Healthy while serving, unhealthy after `stop` (an in-memory driver has nothing else
    /// that can fail).
    pub(crate) fn health(&self, capability: &'static str) -> Health {
        match self.check(capability) {
            Ok(()) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }

    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
    }
}
