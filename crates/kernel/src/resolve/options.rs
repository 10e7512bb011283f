//! What a driver says about itself, read without trusting it: its options parsed, its features
//! declared, any panic caught and turned into a reason.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::config::InstanceConfig;
use crate::error::UnusableReason;
use crate::panic_message;
use crate::registry::{CapabilitySpec, DriverEntry, ParsedOptions};

/// What a referenced option holds while its value is not read (`check`).
const REFERENCE_PLACEHOLDER: &str = "sandloom-secret-reference-not-read";

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
///
/// Every bad option is reported, each at its own key: serde stops at the first error, so the
/// key it names is recorded and taken out, and the rest is deserialized again. Each round takes
/// out a key or makes an override a string (once per key), so the rounds are bounded by the
/// number of keys.
pub(super) fn parse_options(
    entry: &DriverEntry,
    instance: &InstanceConfig,
) -> Result<ParsedOptions, Vec<UnusableReason>> {
    // Copied only when an override has to be made a string or a bad key taken out.
    let mut options = Cow::Borrowed(&instance.options);
    let mut removed: Vec<String> = Vec::new();
    let mut reasons = Vec::new();
    // Before their values are read (`check`), references hold a placeholder, so that the
    // driver's checks between options (a key that needs its secret beside it) see one there.
    for key in instance.references.keys() {
        options.to_mut().set_str(key, REFERENCE_PLACEHOLDER);
    }
    let parsed = loop {
        let result = call_driver("option parsing", || (entry.parse_options)(&options));
        let error = match result {
            Ok(Ok(parsed)) => break Some(parsed),
            Ok(Err(error)) => error,
            Err(panicked) => {
                reasons.push(panicked);
                break None;
            }
        };
        // `SANDLOOM__…__PASSWORD=123456` reads as an integer; a string field wants text. Not
        // for a value the driver's `validate` refused: that is refused as it was read.
        let key = error.key_path().into_iter().next();
        if let Some((key, raw)) = key
            .as_ref()
            .and_then(|k| instance.env_strings.get_key_value(k))
            && !options.is_str(key)
            && !error.is_refused_by_driver()
        {
            options.to_mut().set_str(key, raw);
            continue;
        }
        match key {
            // A placeholder the driver refuses (not a URL, say) says nothing about the value
            // that will be read: the option is left out, and not reported.
            Some(key)
                if instance.references.contains_key(&key) && options.to_mut().remove(&key) =>
            {
                removed.push(key);
            }
            Some(key) if options.to_mut().remove(&key) => {
                let location = instance.option_location(&key).clone();
                reasons.push(UnusableReason::Options { error, location });
                removed.push(key);
            }
            // No key to take out (a missing field, say): the last round. A field missing only
            // because a bad key was taken out is not a problem of its own.
            _ => {
                // Nor is one a reference gives a value to, before the value is read (`check`).
                let referenced = error.message().starts_with("missing field")
                    && instance
                        .references
                        .keys()
                        .any(|k| error.message().contains(&format!("`{k}`")));
                let ours = referenced
                    || removed
                        .iter()
                        .any(|k| error.message().contains(&format!("`{k}`")));
                if !ours {
                    let location = key.map_or_else(
                        || instance.location.clone(),
                        |k| instance.option_location(&k).clone(),
                    );
                    reasons.push(UnusableReason::Options { error, location });
                }
                break None;
            }
        }
    };
    match parsed {
        Some(parsed) if reasons.is_empty() => {
            match call_driver("option parsing", || (entry.accepts_unknown_keys)(&options)) {
                Ok(false) => Ok(parsed),
                Ok(true) => Err(vec![UnusableReason::AcceptsUnknownOptions]),
                Err(panicked) => Err(vec![panicked]),
            }
        }
        _ => Err(reasons),
    }
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
