//! What a driver says about itself, read without trusting it: its options parsed, its features
//! declared, any panic caught and turned into a reason.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::config::InstanceConfig;
use crate::error::UnusableReason;
use crate::panic_message;
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions};

/// Call driver code, turning a panic into a reason the driver is unusable.
pub(super) fn call_driver<T>(
    phase: &'static str,
    call: impl FnOnce() -> T,
) -> Result<T, UnusableReason> {
    catch_unwind(AssertUnwindSafe(call)).map_err(|payload| UnusableReason::Panicked {
        phase,
        message: panic_message(payload.as_ref()),
    })
}

/// Deserialize the instance's options, catching panics, letting environment overrides be
/// strings where the driver wants strings, and refusing types that accept unknown fields.
pub(super) fn parse_options(
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, UnusableReason> {
    // Copied only when an override has to be made a string, which is rare.
    let mut options = Cow::Borrowed(&instance.options);
    let parsed = loop {
        match call_driver("option parsing", || (entry.parse_options)(&options))? {
            Ok(parsed) => break parsed,
            Err(error) => {
                // `SANDLOOM__…__PASSWORD=123456` reads as an integer; a string field wants text.
                let key = error.key_path().into_iter().next();
                if let Some((key, raw)) = key.and_then(|k| instance.env_strings.get_key_value(&k))
                    && !options.is_str(key)
                {
                    options.to_mut().set_str(key, raw);
                    continue;
                }
                let key = error.key_path();
                let location = key.first().map_or_else(
                    || instance.location.clone(),
                    |k| instance.option_location(k).clone(),
                );
                return Err(UnusableReason::Options { error, location });
            }
        }
    };
    if call_driver("option parsing", || (entry.accepts_unknown_keys)(&options))? {
        return Err(UnusableReason::AcceptsUnknownOptions);
    }
    Ok(parsed)
}

/// The features a driver may not report: among its `supported_features`, those that are not
/// features of the capability (a required operation, or no name of it at all); among the
/// features it declares for some options (`declared`), those missing from `supported`. The rule
/// is the kernel's construction rule, which the conformance kits run too.
pub(super) fn undeclared_features(
    spec: &CapabilitySpec,
    supported: &[&'static str],
    declared: Option<&[&'static str]>,
) -> Vec<UnusableReason> {
    crate::construct::refused_features(spec, supported, declared.unwrap_or_default())
}
