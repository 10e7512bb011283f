//! Names the kernel knows without any driver being linked: the built-ins and their owner, and
//! which package provides a driver name (for SANDLOOM-B020's "add this crate").
//!
//! ```
//! use sandloom_kernel::known::{is_builtin, provider_of, BUILTIN_OWNER};
//!
//! // `cache.memory` is built in: only sandloom-embedded may register it (SANDLOOM-B021).
//! assert!(is_builtin("cache", "memory"));
//! assert_eq!(provider_of("cache", "memory"), Some(BUILTIN_OWNER));
//! // A name nobody is known to provide.
//! assert_eq!(provider_of("cache", "my-own"), None);
//! ```

/// The package that owns every built-in driver name.
///
/// ```
/// use sandloom_kernel::known::{provider_of, BUILTIN_OWNER};
/// assert_eq!(BUILTIN_OWNER, "sandloom-embedded");
/// assert_eq!(provider_of("taskqueue", "memory"), Some(BUILTIN_OWNER));
/// ```
pub const BUILTIN_OWNER: &str = "sandloom-embedded";

/// Built-in driver names, as `(capability, driver)`. No other package may register these.
pub(crate) const BUILTIN_DRIVERS: &[(&str, &str)] = &[
    ("cache", "memory"),
    ("lock", "memory"),
    ("notifier", "log"),
    ("notifier", "memory"),
    ("objectstore", "fs"),
    ("objectstore", "memory"),
    ("secrets", "env"),
    ("secrets", "file"),
    ("secrets", "memory"),
    ("taskqueue", "memory"),
];

/// `(capability, driver, package)` for every driver name whose providing package is known: the
/// built-ins and the backend driver crates of this repository (`crates/drivers/`), sorted.
///
/// Kept by hand, since the kernel must name a crate that is not linked;
/// `crates/integration-tests/tests/test_known_providers.rs` links every one of those crates and fails when this list and
/// what they register differ.
///
/// ```
/// use sandloom_kernel::known::{provider_of, KNOWN_PROVIDERS};
///
/// for &(capability, driver, package) in KNOWN_PROVIDERS {
///     assert_eq!(provider_of(capability, driver), Some(package));
/// }
/// assert!(KNOWN_PROVIDERS.contains(&("cache", "redis", "sandloom-driver-redis")));
/// ```
pub const KNOWN_PROVIDERS: &[(&str, &str, &str)] = &[
    ("cache", "memory", BUILTIN_OWNER),
    ("cache", "redis", "sandloom-driver-redis"),
    ("lock", "memory", BUILTIN_OWNER),
    ("lock", "postgres", "sandloom-driver-postgres"),
    ("lock", "redis", "sandloom-driver-redis"),
    ("notifier", "log", BUILTIN_OWNER),
    ("notifier", "memory", BUILTIN_OWNER),
    ("notifier", "smtp", "sandloom-driver-smtp"),
    ("notifier", "webhook", "sandloom-driver-webhook"),
    ("objectstore", "fs", BUILTIN_OWNER),
    ("objectstore", "memory", BUILTIN_OWNER),
    ("objectstore", "s3", "sandloom-driver-s3"),
    ("secrets", "env", BUILTIN_OWNER),
    ("secrets", "file", BUILTIN_OWNER),
    ("secrets", "memory", BUILTIN_OWNER),
    ("secrets", "vault", "sandloom-driver-vault"),
    ("taskqueue", "amqp", "sandloom-driver-amqp"),
    ("taskqueue", "memory", BUILTIN_OWNER),
    ("taskqueue", "postgres", "sandloom-driver-postgres"),
];

/// Whether `(capability, driver)` is a built-in name.
///
/// ```
/// assert!(sandloom_kernel::known::is_builtin("cache", "memory"));
/// assert!(!sandloom_kernel::known::is_builtin("cache", "redis"));
/// ```
pub fn is_builtin(capability: &str, driver: &str) -> bool {
    // Driver names first: they tell entries apart sooner than capabilities do (the resolution
    // scan asks this of every linked entry named like a selected or built-in driver).
    BUILTIN_DRIVERS
        .iter()
        .any(|&(c, d)| d == driver && c == capability)
}

/// The package known to provide `(capability, driver)`.
///
/// ```
/// use sandloom_kernel::known::provider_of;
/// assert_eq!(provider_of("objectstore", "fs"), Some("sandloom-embedded"));
/// assert_eq!(provider_of("cache", "redis"), Some("sandloom-driver-redis"));
/// ```
pub fn provider_of(capability: &str, driver: &str) -> Option<&'static str> {
    KNOWN_PROVIDERS
        .iter()
        .find(|&&(c, d, _)| c == capability && d == driver)
        .map(|&(_, _, package)| package)
}

#[cfg(test)]
mod tests {
    use super::{BUILTIN_DRIVERS, BUILTIN_OWNER, KNOWN_PROVIDERS};

    #[test]
    fn the_builtins_are_the_providers_owned_by_the_builtin_owner() {
        let owned: Vec<(&str, &str)> = KNOWN_PROVIDERS
            .iter()
            .filter(|&&(_, _, package)| package == BUILTIN_OWNER)
            .map(|&(capability, driver, _)| (capability, driver))
            .collect();
        assert_eq!(owned, BUILTIN_DRIVERS);
    }

    #[test]
    fn each_name_has_one_known_provider_in_sorted_order() {
        let names: Vec<(&str, &str)> = KNOWN_PROVIDERS
            .iter()
            .map(|&(capability, driver, _)| (capability, driver))
            .collect();
        assert!(
            names.windows(2).all(|pair| pair[0] < pair[1]),
            "sorted, without duplicates: {names:?}"
        );
    }
}
