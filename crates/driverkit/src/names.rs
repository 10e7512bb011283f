//! Names looked up in a contract's lists at compile time (`const fn`, so a misspelt feature or
//! an operation missing from its gate is a compile error, not a runtime surprise). A leaf: it
//! imports nothing of this crate, so the contract, the gate and the macros can all use it.

/// The bit of `feature` in a gate's set of declared features: its index in `features`. A
/// compile error when the feature is not one of the contract's.
#[doc(hidden)]
#[must_use]
pub const fn feature_bit(features: &[&str], feature: &str) -> u64 {
    assert!(
        features.len() <= 64,
        "a contract has at most 64 optional features"
    );
    let mut i = 0;
    while i < features.len() {
        if str_eq(features[i], feature) {
            return 1 << i;
        }
        i += 1;
    }
    panic!("an operation is gated on a feature the contract does not list in `features`")
}

/// The set of `declared` features, as bits of `features`; unknown names are ignored (the kernel
/// refuses them before anything is built).
#[doc(hidden)]
#[must_use]
pub fn declared_bits(features: &[&str], declared: &[&'static str]) -> u64 {
    features
        .iter()
        .enumerate()
        .filter(|(_, feature)| declared.contains(feature))
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

/// Whether `a` and `b` are the same text (`==` is not `const` on `str`).
pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The index of `operation` in `operations` (a compile error when it is not there).
#[doc(hidden)]
#[must_use]
pub const fn operation_index(operations: &[&str], operation: &str) -> usize {
    let mut i = 0;
    while i < operations.len() {
        if str_eq(operations[i], operation) {
            return i;
        }
        i += 1;
    }
    panic!("an operation of the gate is missing from its list (a driverkit bug)")
}

/// No string is in both lists.
#[doc(hidden)]
#[must_use]
pub const fn disjoint(a: &[&str], b: &[&str]) -> bool {
    let mut i = 0;
    while i < a.len() {
        let mut j = 0;
        while j < b.len() {
            if str_eq(a[i], b[j]) {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_bits_follow_the_contract_order() {
        let features = ["ttl", "increment", "bulk"];
        assert_eq!(feature_bit(&features, "ttl"), 0b001);
        assert_eq!(feature_bit(&features, "bulk"), 0b100);
        assert_eq!(declared_bits(&features, &["bulk", "ttl"]), 0b101);
        assert_eq!(declared_bits(&features, &[]), 0);
        assert_eq!(declared_bits(&features, &["other"]), 0);
    }
}
