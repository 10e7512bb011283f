//! What resolution reads and what it plans: shared by every file of `resolve/`, and importing
//! none of them, so that no two import each other.

use sandloom_sdk_infra::Requirement;

use crate::config::{InfraConfig, InstanceConfig};
use crate::link::LinkedDrivers;
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions};

/// What resolution selected for one instance.
pub(crate) struct PlannedInstance<'a> {
    /// Which instance: its names, all that startup needs once its options are parsed.
    pub(crate) config: InstanceNames<'a>,
    pub(crate) spec: &'static CapabilitySpec,
    pub(crate) entry: &'static DriverEntry,
    pub(crate) options: ParsedOptions,
}

/// The names of a configured instance, borrowed from the configuration: copying them (or the
/// whole `InstanceConfig`, options and locations included) for each instance was a measurable
/// part of a resolution, for values only an error or the report needs owned.
#[derive(Clone, Copy)]
pub(crate) struct InstanceNames<'a> {
    pub(crate) capability: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) driver: &'a str,
    /// `telemetry` of the instance's table (what its gate is built with).
    pub(crate) telemetry: bool,
}

impl<'a> InstanceNames<'a> {
    pub(crate) fn of(instance: &'a InstanceConfig) -> Self {
        Self {
            capability: &instance.capability,
            instance: &instance.instance,
            driver: &instance.driver,
            telemetry: instance.telemetry(),
        }
    }
}

/// Everything resolution reads.
pub(crate) struct Inputs<'a> {
    pub(crate) config: &'a InfraConfig,
    pub(crate) drivers: &'static [DriverEntry],
    pub(crate) specs: &'static [CapabilitySpec],
    pub(crate) requirements: &'a [Requirement],
    pub(crate) linked: &'a LinkedDrivers,
}
