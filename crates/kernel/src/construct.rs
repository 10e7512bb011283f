//! How one instance of a driver is made once its options are parsed: its features checked
//! against the capability and against what the driver supports, then its construction (the
//! driver's `from_options` and its gate), a panic caught.
//!
//! Written once, here: resolution checks the features (`check` builds nothing), startup
//! constructs, and the conformance kits run both through [`make`], so a kit's instance is the
//! kernel's instance and the two cannot drift apart.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::UnusableReason;
use crate::error_text::{error_chain, panic_message};
use crate::registry::{BoxError, BuildContext, BuiltDriver, CapabilitySpec, ParsedOptions};

/// Why a driver that `supported` these features, and declared `declared` for its options,
/// cannot serve `spec`: a supported feature that is a required operation or no feature of the
/// capability, or a declared feature it does not support. Empty when it can.
pub(crate) fn refused_features(
    spec: &CapabilitySpec,
    supported: &[&'static str],
    declared: &[&'static str],
) -> Vec<UnusableReason> {
    let mut reasons = Vec::new();
    for &feature in supported {
        if spec.required_operations.contains(&feature) {
            reasons.push(UnusableReason::UndeclaredFeature {
                feature,
                why: format!(
                    "is a required operation of `{}`, never a feature",
                    spec.name
                ),
            });
        } else if !spec.features.contains(&feature) {
            reasons.push(UnusableReason::UndeclaredFeature {
                feature,
                why: format!(
                    "is not a feature of `{}` (its features: {})",
                    spec.name,
                    if spec.features.is_empty() {
                        "none".to_owned()
                    } else {
                        spec.features.join(", ")
                    }
                ),
            });
        }
    }
    for &feature in declared {
        if !supported.contains(&feature) {
            reasons.push(UnusableReason::UndeclaredFeature {
                feature,
                why: "is missing from its `supported_features`".to_owned(),
            });
        }
    }
    reasons
}

/// Construct the driver from its parsed options with `build`, catching a panic.
pub(crate) fn construct<B>(
    build: B,
    parsed: ParsedOptions,
    context: &BuildContext<'_>,
) -> Result<BuiltDriver, UnusableReason>
where
    B: FnOnce(ParsedOptions, &BuildContext<'_>) -> Result<BuiltDriver, BoxError>,
{
    match catch_unwind(AssertUnwindSafe(|| build(parsed, context))) {
        Ok(Ok(driver)) => Ok(driver),
        Ok(Err(error)) => Err(UnusableReason::BuildFailed {
            message: error_chain(error.as_ref()),
        }),
        Err(payload) => Err(UnusableReason::Panicked {
            phase: "construction",
            message: panic_message(payload.as_ref()),
        }),
    }
}

/// Make one instance of a driver for `spec` as the kernel makes it, once its options are parsed
/// (deserialized, `validate`d, `features_for` asked): the features checked, then constructed.
/// Not started: that is the caller's, under its own time limit.
///
/// For the conformance kits (`sandloom-conformance`); not public API.
///
/// # Errors
/// Every reason the kernel would refuse the instance for (SANDLOOM-B022), described as its
/// startup report describes them, one per line.
///
/// ```
/// use sandloom_kernel::__private::construct;
/// use sandloom_kernel::registry::{BuildContext, CapabilitySpec, ParsedOptions, capabilities};
///
/// let cache: &CapabilitySpec = capabilities().iter().find(|s| s.name == "cache").unwrap();
/// let parsed = ParsedOptions { value: Box::new(()), features: vec!["ttl"] };
/// let instance: std::sync::Arc<str> = "kit".into();
/// let context = BuildContext { instance: &instance, features: &["ttl"], telemetry: true };
/// // A driver that declares `ttl` for its options but does not support it: refused before
/// // anything is built.
/// let refused = construct::make(cache, &[], parsed, &context, |_, _| unreachable!()).err().unwrap();
/// assert!(refused.contains("it reports feature `ttl`, which is missing from its `supported_features`"));
/// ```
pub fn make<B>(
    spec: &CapabilitySpec,
    supported: &[&'static str],
    parsed: ParsedOptions,
    context: &BuildContext<'_>,
    build: B,
) -> Result<BuiltDriver, String>
where
    B: FnOnce(ParsedOptions, &BuildContext<'_>) -> Result<BuiltDriver, BoxError>,
{
    let refused = refused_features(spec, supported, &parsed.features);
    let reasons = if refused.is_empty() {
        match construct(build, parsed, context) {
            Ok(driver) => return Ok(driver),
            Err(reason) => vec![reason],
        }
    } else {
        refused
    };
    Err(reasons
        .iter()
        .map(|reason| reason.describe(spec.name))
        .collect::<Vec<_>>()
        .join("\n"))
}
