//! The `secrets.env` driver.

use std::ffi::OsString;

use sandloom_driverkit::sdk::{InfraError, InfraResult, Secret};
use sandloom_driverkit::secrets::{
    LIST, NAME, SecretsOps, SecretsProvider, check_name, check_prefix, too_large,
};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use super::options::EnvSecretsOptions;
use crate::secrets_memory::check_max_value_bytes;
use crate::serving::Serving;

/// The `secrets.env` driver: each secret is an environment variable of the process, named by
/// the prefix followed by the secret's name, its segments joined by `__`.
///
/// - **Mapping**: `db/password` under the prefix `APP_SECRET_` is the variable
///   `APP_SECRET_db__password`; case is kept (`db/Password` is `APP_SECRET_db__Password`, another
///   variable). A segment must be ASCII letters and digits with single `_` between them (no
///   `.`, no `-`, no leading, trailing or doubled `_`), so that `__` only ever separates
///   segments and two names never share a variable: a valid name with another segment is
///   refused with `InvalidInput`, saying why. [`EnvSecrets::variable`] gives the variable of a name.
/// - **Nothing outside the prefix** can be read: every variable read is the prefix plus a
///   mapped name.
/// - **Values** are the variables' bytes (not necessarily UTF-8 on Unix; a NUL byte cannot be
///   in a variable), read at each `get`: a process's environment is set when it starts
///   (Kubernetes never updates it), so there is no change signal. A value above
///   `max_value_bytes` answers `Backend`; an unset variable `NotFound`.
/// - **Features**: `list` (the variables under the prefix that map back to a name; others are
///   skipped). No `versions`, no `watch`.
///
/// ```
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::secrets::Secrets;
/// use sandloom_embedded::{EnvSecrets, EnvSecretsOptions};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     assert_eq!(EnvSecrets::variable("DOC_SECRET_", "db/password").unwrap(), "DOC_SECRET_db__password");
///     // In a deployment: `DOC_SECRET_db__password=… ./app`.
///     let secrets = EnvSecrets::from_options(EnvSecretsOptions::new("DOC_SECRET_")).unwrap();
///     assert!(secrets.get("db/password").await.is_err()); // not set here: NotFound
///     assert!(secrets.get("db.password").await.is_err()); // `.` cannot be mapped: InvalidInput
/// }
/// ```
#[derive(Debug)]
pub struct EnvSecrets {
    prefix: String,
    max_value_bytes: usize,
    serving: Serving,
}

/// Why a segment cannot be part of a variable name, if it cannot.
fn unmappable(segment: &str) -> Option<&'static str> {
    if segment.starts_with('_') || segment.ends_with('_') || segment.contains("__") {
        return Some(
            "a segment may not start or end with `_` nor hold `__` (`__` separates segments)",
        );
    }
    if segment
        .bytes()
        .any(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
    {
        return Some(
            "a segment may hold only ASCII letters, digits and single `_` (no `.` or `-`)",
        );
    }
    None
}

impl EnvSecrets {
    /// The variable that holds the secret `name` under `prefix`.
    ///
    /// ```
    /// use sandloom_embedded::EnvSecrets;
    /// assert_eq!(EnvSecrets::variable("APP_", "tls/server_key").unwrap(), "APP_tls__server_key");
    /// assert!(EnvSecrets::variable("APP_", "tls/server.key").is_err());
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for a name that breaks the contract's rule, or that no variable maps.
    pub fn variable(prefix: &str, name: &str) -> InfraResult<String> {
        check_name(name)?;
        for segment in name.split('/') {
            if let Some(why) = unmappable(segment) {
                return Err(InfraError::invalid_input(
                    NAME,
                    format!(
                        "secrets.env cannot map the name {name:?} onto a variable: {why}; \
                         variables are the prefix followed by the name's segments joined by `__`"
                    ),
                ));
            }
        }
        Ok(format!("{prefix}{}", name.replace('/', "__")))
    }

    /// The name a variable under the prefix holds, when it maps back to one.
    fn name_of(&self, variable: &str) -> Option<String> {
        let rest = variable.strip_prefix(&self.prefix)?;
        let name = rest.replace("__", "/");
        (check_name(&name).is_ok() && name.split('/').all(|s| unmappable(s).is_none()))
            .then_some(name)
    }
}

/// The bytes of a variable's value.
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)] // as the non-Unix one, which can fail
fn bytes(value: OsString) -> InfraResult<Vec<u8>> {
    use std::os::unix::ffi::OsStringExt;
    Ok(value.into_vec())
}

/// The bytes of a variable's value: its UTF-8 text, where the platform's variables are not bytes.
#[cfg(not(unix))]
fn bytes(value: OsString) -> InfraResult<Vec<u8>> {
    value.into_string().map(String::into_bytes).map_err(|_| {
        InfraError::new(
            sandloom_driverkit::sdk::ErrorKind::Backend,
            NAME,
            "the variable's value is not Unicode",
        )
    })
}

impl SecretsOps for EnvSecrets {
    async fn get(&self, name: &str) -> InfraResult<Secret<Vec<u8>>> {
        self.serving.check(NAME)?;
        let variable = Self::variable(&self.prefix, name)?;
        let value = std::env::var_os(&variable).ok_or_else(|| {
            InfraError::not_found(
                NAME,
                format!("no secret {name:?} (the variable `{variable}` is not set)"),
            )
        })?;
        let value = Secret::new(bytes(value)?);
        if value.expose().len() > self.max_value_bytes {
            return Err(too_large(
                name,
                value.expose().len() as u64,
                self.max_value_bytes,
            ));
        }
        Ok(value)
    }

    async fn list(&self, prefix: &str) -> InfraResult<Vec<String>> {
        self.serving.check(NAME)?;
        check_prefix(prefix)?;
        let mut names: Vec<String> = std::env::vars_os()
            .filter_map(|(variable, _)| variable.to_str().and_then(|v| self.name_of(v)))
            .filter(|name| name.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }
}

impl Driver for EnvSecrets {
    type Options = EnvSecretsOptions;

    fn supported_features() -> &'static [&'static str] {
        &[LIST]
    }

    fn validate(options: &EnvSecretsOptions) -> Result<(), DriverError> {
        check_max_value_bytes(options.max_value_bytes)?;
        let prefix = &options.prefix;
        let valid = prefix
            .bytes()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(DriverError::new(format!(
                "`prefix` {prefix:?} must be ASCII letters, digits and `_`, not empty and not \
                 starting with a digit (for example \"APP_SECRET_\"): only variables starting \
                 with it are read"
            )));
        }
        Ok(())
    }

    fn from_options(options: EnvSecretsOptions) -> Result<Self, DriverError> {
        Self::validate(&options)?;
        Ok(Self {
            prefix: options.prefix,
            max_value_bytes: options.max_value_bytes,
            serving: Serving::default(),
        })
    }

    async fn stop(&self) -> Result<(), DriverError> {
        self.serving.stop();
        Ok(())
    }

    async fn health(&self) -> Health {
        self.serving.health(NAME)
    }
}

impl SecretsProvider for EnvSecrets {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_is_injective_and_refuses_what_it_cannot_map() {
        let mapped = [
            "db/password",
            "db_password",
            "db/pass_word",
            "DB/password",
            "a/b/c",
        ];
        let variables: Vec<String> = mapped
            .iter()
            .map(|name| EnvSecrets::variable("P_", name).unwrap())
            .collect();
        assert_eq!(
            variables,
            [
                "P_db__password",
                "P_db_password",
                "P_db__pass_word",
                "P_DB__password",
                "P_a__b__c"
            ]
        );
        let driver = EnvSecrets::from_options(EnvSecretsOptions::new("P_")).unwrap();
        for (name, variable) in mapped.iter().zip(&variables) {
            assert_eq!(
                driver.name_of(variable).as_deref(),
                Some(*name),
                "round trip"
            );
        }
        for unmapped in [
            "db.password",
            "db-password",
            "db__password",
            "_db",
            "db_",
            "a/_b",
        ] {
            let err = EnvSecrets::variable("P_", unmapped).unwrap_err();
            assert!(err.message().contains("cannot map"), "{unmapped}: {err}");
        }
        assert_eq!(driver.name_of("P_a___b"), None);
        assert_eq!(driver.name_of("Q_a"), None);
        assert_eq!(driver.name_of("P_"), None);
    }

    proptest::proptest! {
        /// Every name either maps to a variable that maps back to it alone (so no two names
        /// share a variable), or is refused; and a refused name is one the rule accepts but
        /// the mapping cannot hold, never one it could.
        #[test]
        fn every_mapped_name_round_trips(name in "[A-Za-z0-9_.-]{1,6}(/[A-Za-z0-9_.-]{1,6}){0,3}") {
            let driver = EnvSecrets::from_options(EnvSecretsOptions::new("P_")).unwrap();
            match EnvSecrets::variable("P_", &name) {
                Ok(variable) => proptest::prop_assert_eq!(driver.name_of(&variable), Some(name)),
                Err(err) => {
                    let mappable = name.split('/').all(|segment| unmappable(segment).is_none());
                    proptest::prop_assert!(!mappable || check_name(&name).is_err(), "{}", err);
                }
            }
        }
    }

    #[test]
    fn prefixes_are_validated() {
        for good in ["A", "_", "APP_SECRET_", "a1"] {
            assert!(
                EnvSecrets::validate(&EnvSecretsOptions::new(good)).is_ok(),
                "{good}"
            );
        }
        for bad in ["", "1A", "APP-", "APP SECRET", "É"] {
            assert!(
                EnvSecrets::validate(&EnvSecretsOptions::new(bad)).is_err(),
                "{bad}"
            );
        }
    }
}
