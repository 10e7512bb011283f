//! Names looked up in a contract's lists at compile time (`const fn`, so a misspelt feature or
//! an operation missing from its gate is a compile error, not a runtime surprise), and the text
//! of those errors. A leaf: it imports nothing of this crate, so the contract, the gate and the
//! macros can all use it.

/// [`feature_bit`] without its compile error: 0 for a feature the contract does not list. For
/// the route's copy of the gate's checks, so that a wrong feature is reported once (by the
/// gate's).
#[doc(hidden)]
#[must_use]
pub const fn feature_bit_quiet(features: &[&str], feature: &str) -> u64 {
    let mut i = 0;
    while i < features.len() && i < 64 {
        if str_eq(features[i], feature) {
            return 1 << i;
        }
        i += 1;
    }
    0
}

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
    let mut message = ConstMessage::new()
        .push("an operation is gated on feature `")
        .push(feature)
        .push("`, which the contract does not list in `features`");
    message = match closest(feature, features) {
        Some(close) => message.push(": did you mean `").push(close).push("`?"),
        None => message,
    };
    message = message.push(" Its features: ");
    if features.is_empty() {
        message = message.push("none");
    }
    let mut i = 0;
    while i < features.len() {
        if i > 0 {
            message = message.push(", ");
        }
        message = message.push("`").push(features[i]).push("`");
        i += 1;
    }
    message = message
        .push(". Fix the `#[feature = \"…\"]` of the operation, or add the feature to `features`");
    panic!("{}", message.as_str())
}

/// The name of `names` closest to `typed`, when one is close: within one edit for a name of up
/// to four bytes, two for a longer one (the kernel's "did you mean" rule, less its similarity
/// test, which a `const fn` cannot afford).
const fn closest<'a>(typed: &str, names: &[&'a str]) -> Option<&'a str> {
    let max_edits = if typed.len() <= 4 { 1 } else { 2 };
    let mut best: Option<&'a str> = None;
    let mut best_edits = usize::MAX;
    let mut i = 0;
    while i < names.len() {
        let edits = edit_distance(typed.as_bytes(), names[i].as_bytes());
        if edits <= max_edits && edits < best_edits {
            best = Some(names[i]);
            best_edits = edits;
        }
        i += 1;
    }
    best
}

/// Levenshtein distance between two byte strings of at most 64 bytes (`usize::MAX` for longer
/// ones: no suggestion).
const fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const MAX: usize = 64;
    if a.len() > MAX || b.len() > MAX {
        return usize::MAX;
    }
    let mut row = [0usize; MAX + 1];
    let mut j = 0;
    while j <= b.len() {
        row[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let above = row[j];
            let substitution = diagonal + if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let deletion = above + 1;
            let insertion = row[j - 1] + 1;
            let mut best = substitution;
            if deletion < best {
                best = deletion;
            }
            if insertion < best {
                best = insertion;
            }
            row[j] = best;
            diagonal = above;
            j += 1;
        }
        i += 1;
    }
    row[b.len()]
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
/// A message built in a `const fn`: there, `panic!` takes a `&str` but no other argument, so
/// numbers are written out by hand. Longer messages are cut at the capacity.
pub(crate) struct ConstMessage {
    bytes: [u8; 512],
    len: usize,
}

impl ConstMessage {
    pub(crate) const fn new() -> Self {
        Self {
            bytes: [0; 512],
            len: 0,
        }
    }

    pub(crate) const fn push(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() && self.len < self.bytes.len() {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    pub(crate) const fn number(mut self, mut n: u64) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < self.bytes.len() {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    pub(crate) const fn version(self, version: &sandloom_kernel::semver::Version) -> Self {
        self.number(version.major)
            .push(".")
            .number(version.minor)
            .push(".")
            .number(version.patch)
    }

    pub(crate) const fn as_str(&self) -> &str {
        match std::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            // Cut inside a character: what precedes it is all that can be said.
            Err(error) => match std::str::from_utf8(self.bytes.split_at(error.valid_up_to()).0) {
                Ok(text) => text,
                Err(_) => "the driver's CONTRACT_VERSION is another major than its contract's",
            },
        }
    }
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

    #[test]
    #[should_panic(
        expected = "an operation is gated on feature `fuzy`, which the contract does not list in `features`: did you mean `fuzzy`? Its features: `prefix`, `fuzzy`. Fix the `#[feature = \"…\"]` of the operation, or add the feature to `features`"
    )]
    fn a_misspelt_feature_is_named_with_the_closest_one() {
        let _ = feature_bit(&["prefix", "fuzzy"], "fuzy");
    }

    #[test]
    fn closest_follows_the_kernel_s_edit_limits() {
        assert_eq!(closest("fuzy", &["prefix", "fuzzy"]), Some("fuzzy"));
        assert_eq!(closest("tll", &["ttl", "bulk"]), Some("ttl"));
        assert_eq!(
            closest("incremnet", &["ttl", "increment"]),
            Some("increment")
        );
        assert_eq!(closest("geo", &["ttl", "bulk"]), None);
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"", b"abc"), 3);
    }
}
