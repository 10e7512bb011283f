//! Contract versions as messages name them, and the tests of the compatibility rule
//! ([`contract_compatible`], public in `registry`).

use semver::Version;

#[cfg(test)]
use crate::registry::contract_compatible;

/// The versions compatible with `version`, as messages name them: `1.x`, `0.2.x`, `0.0.3`.
pub(crate) fn series(version: &Version) -> String {
    match (version.major, version.minor) {
        (0, 0) => format!("0.0.{}", version.patch),
        (0, minor) => format!("0.{minor}.x"),
        (major, _) => format!("{major}.x"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn the_leftmost_non_zero_component_is_the_major() {
        for (driver, contract) in [
            ("1.0.0", "1.0.0"),
            ("1.4.0", "1.3.0"),
            ("1.0.0", "1.3.0"),
            ("1.2.0", "1.9.0"),
            ("0.1.1", "0.1.0"),
            ("0.1.0", "0.1.1"),
            ("0.0.3", "0.0.3"),
        ] {
            assert!(
                contract_compatible(&v(driver), &v(contract)),
                "driver {driver} on contract {contract}: the same major, accepted"
            );
        }
        for (driver, contract) in [
            ("2.0.0", "1.3.0"),
            ("1.3.0", "2.0.0"),
            ("1.0.0", "0.9.0"),
            ("0.9.0", "1.0.0"),
            ("0.2.0", "0.1.0"),
            ("0.1.0", "0.2.0"),
            ("0.0.2", "0.0.1"),
            ("0.0.1", "0.1.0"),
            ("0.1.0", "0.0.1"),
        ] {
            assert!(
                !contract_compatible(&v(driver), &v(contract)),
                "driver {driver} on contract {contract}: another major, refused"
            );
        }
    }

    #[test]
    fn it_is_evaluated_at_compile_time() {
        // Statics: a `Version` temporary could not be dropped in a constant.
        static V1_9: Version = Version::new(1, 9, 0);
        static V1_2: Version = Version::new(1, 2, 0);
        static V0_2: Version = Version::new(0, 2, 0);
        static V0_1: Version = Version::new(0, 1, 0);
        const {
            assert!(contract_compatible(&V1_9, &V1_2));
            assert!(!contract_compatible(&V0_2, &V0_1));
        };
    }

    #[test]
    fn a_series_is_named_by_its_major() {
        assert_eq!(series(&v("1.2.3")), "1.x");
        assert_eq!(series(&v("0.2.3")), "0.2.x");
        assert_eq!(series(&v("0.0.3")), "0.0.3");
    }
}
