//! Why a secret reference cannot be resolved (SANDLOOM-B025): one reason per rule, each
//! written so that it names what is wrong and never a value.

/// Why a secret reference cannot be resolved: the reason of a SANDLOOM-B025
/// [`Problem::Reference`](crate::Problem::Reference).
///
/// ```
/// use sandloom_kernel::ReferenceReason;
///
/// let reason = ReferenceReason::NoStore { configured: vec!["file".to_owned()] };
/// assert_eq!(reason.describe("default"), "its store `secrets.default` is not configured (configured `secrets` instances: `file`)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReferenceReason {
    /// The reference is not written as one: an unknown key, a name that breaks the naming
    /// rule, a value of the wrong type, a `…__STORE` override without `…__SECRET`, a literal
    /// and a reference override for one option.
    Malformed {
        /// What is wrong.
        message: String,
        /// What to write instead.
        action: String,
    },
    /// The option does not hold a secret (its driver's options schema does not mark it
    /// `writeOnly`, or the driver describes no schema): its value would show in `Debug`,
    /// errors and `infra why`, so a secret is not put there.
    NotSecretTyped {
        /// Why the option is not known to be secret.
        why: String,
    },
    /// No `secrets` instance of that name is configured.
    NoStore {
        /// The configured `secrets` instances, sorted.
        configured: Vec<String>,
    },
    /// The store names an instance of another capability (`store = "cache.default"`).
    NotSecretsStore {
        /// The capability it names.
        capability: String,
    },
    /// References between `secrets` instances go round in a circle.
    Cycle {
        /// The instances of the circle, in order, the first repeated at the end.
        path: Vec<String>,
    },
    /// The store could not start (its own problem is reported beside this one).
    StoreFailed {
        /// The code of the store's problem.
        code: &'static str,
    },
    /// The store has no secret of that name.
    NotFound,
    /// The store answered an error.
    ReadFailed {
        /// The error's kind (`unavailable`, `timeout`…).
        kind: String,
        /// Its message (a driver's error never carries a value).
        message: String,
    },
    /// The value is not UTF-8 text, which an option needs.
    NotUtf8,
}

impl ReferenceReason {
    /// What is wrong, for the reference to `store`.
    ///
    /// ```
    /// use sandloom_kernel::ReferenceReason;
    /// assert_eq!(ReferenceReason::NotFound.describe("vault"), "`secrets.vault` has no such secret");
    /// ```
    #[must_use]
    pub fn describe(&self, store: &str) -> String {
        let written = store;
        let store = instance_of(store);
        match self {
            Self::Malformed { message, .. } => message.clone(),
            Self::NotSecretTyped { why } => format!(
                "a secret may only be referenced from an option that holds a secret, and {why}"
            ),
            Self::NoStore { configured } => format!(
                "its store `secrets.{store}` is not configured (configured `secrets` instances: {})",
                if configured.is_empty() {
                    "none".to_owned()
                } else {
                    configured
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            Self::NotSecretsStore { capability } => format!(
                "its store `{written}` is an instance of `{capability}`, not of `secrets`"
            ),
            Self::Cycle { path } => format!(
                "secrets instances refer to each other in a circle: {}",
                path.join(" -> ")
            ),
            Self::StoreFailed { code } => format!(
                "its store `secrets.{store}` could not start ({code}, reported with it)"
            ),
            Self::NotFound => format!("`secrets.{store}` has no such secret"),
            Self::ReadFailed { kind, message } => {
                format!("`secrets.{store}` answered an error ({kind}): {message}")
            }
            Self::NotUtf8 => {
                "the secret's value is not UTF-8 text, which an option needs (the value is not shown)"
                    .to_owned()
            }
        }
    }

    /// What to do, for the reference of `option` of `capability.instance` to `store`.
    ///
    /// ```
    /// use sandloom_kernel::ReferenceReason;
    /// let action = ReferenceReason::NotFound.action("taskqueue.default", "password", "vault");
    /// assert!(action.contains("store the secret in `secrets.vault`"), "{action}");
    /// ```
    #[must_use]
    pub fn action(&self, instance: &str, option: &str, store: &str) -> String {
        let store = instance_of(store);
        match self {
            Self::Malformed { action, .. } => action.clone(),
            Self::NotSecretTyped { .. } => format!(
                "write `{option}` of `{instance}` as a plain value, or reference the secret from an option of the driver that holds one (`infra schema` marks them `writeOnly`)"
            ),
            Self::NoStore { .. } => format!(
                "configure `[secrets.{store}]` with a `secrets` driver (`env`, `file`, …), or name a configured instance with `store = \"…\"`"
            ),
            Self::NotSecretsStore { .. } => {
                "name an instance of `secrets`: `store = \"<instance>\"` (`[secrets.<instance>]`)"
                    .to_owned()
            }
            Self::Cycle { .. } => {
                "break the circle: read one of these instances' secrets from another store, or write it where the instance is configured".to_owned()
            }
            Self::StoreFailed { .. } => format!(
                "fix the problem of `secrets.{store}` reported beside this one; the reference is read once it starts"
            ),
            Self::NotFound => format!(
                "store the secret in `secrets.{store}`, or correct the name (names are case-sensitive)"
            ),
            Self::ReadFailed { .. } => format!(
                "make `secrets.{store}` reachable (check its backend and its credentials), then start again"
            ),
            Self::NotUtf8 => format!(
                "store the value of the secret as UTF-8 text (base64-encode binary data if `{option}` of `{instance}` expects it)"
            ),
        }
    }
}

/// The instance a store names: `vault` of `vault` or of `secrets.vault`.
pub(crate) fn instance_of(store: &str) -> &str {
    store.rsplit('.').next().unwrap_or(store)
}

/// The description of a SANDLOOM-B025 problem (empty for any other).
pub(crate) fn describe(problem: &crate::Problem) -> String {
    let crate::Problem::Reference {
        capability,
        instance,
        option,
        store,
        secret,
        location,
        reason,
    } = problem
    else {
        return String::new();
    };
    format!(
        "the secret reference {{ secret = {secret:?}, store = {store:?} }} in option `{option}` of `{capability}.{instance}` cannot be resolved: {} (at {location})",
        reason.describe(store)
    )
}

/// The action of a SANDLOOM-B025 problem (empty for any other).
pub(crate) fn act(problem: &crate::Problem) -> String {
    let crate::Problem::Reference {
        capability,
        instance,
        option,
        store,
        reason,
        ..
    } = problem
    else {
        return String::new();
    };
    reason.action(&format!("{capability}.{instance}"), option, store)
}
