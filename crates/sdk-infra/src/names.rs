//! The rule for instance names: one rule for `requires!` (at compile time) and for the kernel's
//! reading of `INFRA` tables and `SANDLOOM__…` overrides (SANDLOOM-B010), so a module can never
//! require an instance that no `INFRA` could configure.

/// Why a name cannot name an instance (`default` in `[cache.default]`).
///
/// ```
/// use sandloom_sdk_infra::{check_instance_name, InstanceNameError};
///
/// assert_eq!(check_instance_name("Sessions"), Err(InstanceNameError::Characters));
/// assert_eq!(check_instance_name("eu__west"), Err(InstanceNameError::LevelSeparator));
/// assert_eq!(
///     InstanceNameError::LevelSeparator.rule(),
///     "cannot end in `_` or contain `__`: `__` separates the levels of a `SANDLOOM__…` override, so no override could name it"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceNameError {
    /// Empty, or a character other than lowercase ASCII letters, digits, `_` and `-`.
    Characters,
    /// Ends in `_` or contains `__`, which separates the levels of an override variable.
    LevelSeparator,
}

impl InstanceNameError {
    /// The rule the name breaks, to follow "instance name `…` ".
    ///
    /// ```
    /// use sandloom_sdk_infra::InstanceNameError;
    /// assert_eq!(
    ///     InstanceNameError::Characters.rule(),
    ///     "must be non-empty lowercase ASCII letters, digits, `_` or `-`"
    /// );
    /// ```
    #[must_use]
    pub const fn rule(self) -> &'static str {
        match self {
            Self::Characters => "must be non-empty lowercase ASCII letters, digits, `_` or `-`",
            // Refused rather than escaped in overrides: `SANDLOOM__CACHE__A___URL` could mean
            // `a_` and `_url` or `a` and `__url`; a leading `_` is fine, since the split runs
            // left to right.
            Self::LevelSeparator => {
                "cannot end in `_` or contain `__`: `__` separates the levels of a `SANDLOOM__…` override, so no override could name it"
            }
        }
    }

    /// The compile error of `requires!` for a name that breaks the rule: a whole sentence,
    /// since a constant's panic cannot format the name in.
    #[doc(hidden)]
    #[must_use]
    pub const fn requires_message(self) -> &'static str {
        match self {
            Self::Characters => {
                "instance names are non-empty lowercase ASCII letters, digits, `_` or `-`"
            }
            Self::LevelSeparator => {
                "instance names cannot end in `_` or contain `__`: `__` separates the levels of a `SANDLOOM__…` override, so no override could name the instance, and the kernel refuses it in INFRA (SANDLOOM-B010)"
            }
        }
    }
}

/// Whether `name` may name an instance: non-empty lowercase ASCII letters, digits, `_` or `-`,
/// not ending in `_` and without `__`. [`requires!`](crate::requires) holds its instance names
/// to it at compile time, and the kernel holds `INFRA`'s tables and overrides to it.
///
/// ```
/// use sandloom_sdk_infra::{check_instance_name, InstanceNameError};
///
/// assert_eq!(check_instance_name("sessions-eu_2"), Ok(()));
/// assert_eq!(check_instance_name("_local"), Ok(())); // a leading `_` is unambiguous
/// assert_eq!(check_instance_name(""), Err(InstanceNameError::Characters));
/// assert_eq!(check_instance_name("a_"), Err(InstanceNameError::LevelSeparator));
/// assert_eq!(check_instance_name("a__b"), Err(InstanceNameError::LevelSeparator));
/// ```
///
/// # Errors
///
/// Which part of the rule `name` breaks.
pub const fn check_instance_name(name: &str) -> Result<(), InstanceNameError> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Err(InstanceNameError::Characters);
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
            return Err(InstanceNameError::Characters);
        }
        i += 1;
    }
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i - 1] == b'_' && bytes[i] == b'_' {
            return Err(InstanceNameError::LevelSeparator);
        }
        i += 1;
    }
    if bytes[bytes.len() - 1] == b'_' {
        return Err(InstanceNameError::LevelSeparator);
    }
    Ok(())
}
