//! The secrets obligation with no declaration: the kit reads the options' JSON Schema, plants
//! secrets of its own in every `writeOnly` option (a `SecretUrl`, a `Secret` inside an
//! `Option`, one nested in a table) and catches a driver that shows one, while a driver that
//! keeps them redacted passes, and one without a `writeOnly` option gets no extra instance.
//!
//! The kits here are made as the test macros make them (`kit.__described(__describe!(Driver))`
//! is what `cache_conformance!` expands to): the driver author declares nothing.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use sandloom_conformance::__describe;
use sandloom_conformance::cache::CacheConformance;
use sandloom_driverkit::cache::{CacheOps, CacheProvider};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Secret, SecretUrl, Version};

/// The flawless vault: every secret stays redacted.
const NONE: u8 = 0;
/// Shows its password in its `Debug`.
const PASSWORD_IN_DEBUG: u8 = 1;
/// Puts its whole address, password and all, in the error of an empty key.
const URL_IN_ERRORS: u8 = 2;
/// Fails its start with the nested `auth.token` in the message.
const TOKEN_IN_START_ERROR: u8 = 3;

/// Options with a secret address, an optional password and a nested token.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
struct VaultOptions {
    /// The server: `vault://[user:password@]host:port`.
    url: SecretUrl,
    /// Overrides the address's password.
    password: Option<Secret<String>>,
    /// How to sign in.
    auth: Auth,
    /// Not a secret: left to its default by the kit.
    namespace: String,
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
struct Auth {
    user: String,
    token: Secret<String>,
}

/// How many vaults of each flaw were made (the kit makes one for the obligation, one more with
/// its planted secrets).
static MADE: Mutex<Option<HashMap<u8, usize>>> = Mutex::new(None);

fn made(flaw: u8) -> usize {
    MADE.lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(&flaw).copied())
        .unwrap_or(0)
}

/// An in-memory cache with secret options; `FLAW` picks how it leaks them.
struct Vault<const FLAW: u8> {
    options: VaultOptions,
    entries: Mutex<HashMap<String, Bytes>>,
}

impl<const FLAW: u8> fmt::Debug for Vault<FLAW> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("Vault");
        if FLAW == PASSWORD_IN_DEBUG {
            let password = self.options.password.as_ref().map(Secret::expose);
            shown.field("password", &password);
        } else {
            shown.field("options", &self.options);
        }
        shown.finish_non_exhaustive()
    }
}

impl<const FLAW: u8> CacheOps for Vault<FLAW> {
    async fn get(&self, key: &str) -> InfraResult<Option<Bytes>> {
        if key.is_empty() {
            let at = if FLAW == URL_IN_ERRORS {
                self.options.url.expose().to_owned()
            } else {
                self.options.url.redacted()
            };
            return Err(InfraError::invalid_input(
                "cache",
                format!("empty key at {at}"),
            ));
        }
        Ok(self.entries.lock().unwrap().get(key).cloned())
    }

    async fn set(&self, key: &str, value: Bytes) -> InfraResult<()> {
        if key.is_empty() {
            return Err(InfraError::invalid_input("cache", "empty key"));
        }
        self.entries.lock().unwrap().insert(key.to_owned(), value);
        Ok(())
    }

    async fn delete(&self, key: &str) -> InfraResult<bool> {
        if key.is_empty() {
            return Err(InfraError::invalid_input("cache", "empty key"));
        }
        Ok(self.entries.lock().unwrap().remove(key).is_some())
    }
}

impl<const FLAW: u8> Driver for Vault<FLAW> {
    type Options = VaultOptions;

    fn supported_features() -> &'static [&'static str] {
        &[]
    }

    fn from_options(options: VaultOptions) -> Result<Self, DriverError> {
        *MADE
            .lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .entry(FLAW)
            .or_default() += 1;
        Ok(Self {
            options,
            entries: Mutex::new(HashMap::new()),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        if FLAW == TOKEN_IN_START_ERROR && !self.options.auth.token.expose().is_empty() {
            return Err(DriverError::new(format!(
                "sign-in refused for token {}",
                self.options.auth.token.expose()
            )));
        }
        Ok(())
    }
}

impl<const FLAW: u8> CacheProvider for Vault<FLAW> {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

/// The kit as `cache_conformance!` makes it: options from the closure (here, nothing secret in
/// them), and no `.secrets(…)`.
fn kit<const FLAW: u8>() -> CacheConformance<Vault<FLAW>> {
    CacheConformance::<Vault<FLAW>>::new(|_| VaultOptions::default())
        .__described(__describe!(Vault<FLAW>))
}

#[test]
fn the_vault_that_keeps_its_secrets_passes_and_gets_a_planted_instance() {
    kit::<NONE>().assert("secrets_never_show");
    assert_eq!(
        made(NONE),
        2,
        "the obligation's instance and the planted one"
    );
}

#[test]
fn each_leak_of_a_planted_secret_is_caught_with_no_declaration() {
    let cases = [
        (
            kit::<PASSWORD_IN_DEBUG>().assert_catches("secrets_never_show"),
            "the secret the kit planted in `password` shows in the Debug of the driver the kit \
             built with its planted secrets",
        ),
        (
            kit::<URL_IN_ERRORS>().assert_catches("secrets_never_show"),
            "the secret the kit planted in `url` shows in the Display of an error of the driver \
             the kit built with its planted secrets (invalid_input)",
        ),
        (
            kit::<TOKEN_IN_START_ERROR>().assert_catches("secrets_never_show"),
            "the secret the kit planted in `auth.token` shows in the Display of the error of \
             `start` (the instance the kit built with its planted secrets)",
        ),
    ];
    for (failure, says) in cases {
        assert!(failure.message.contains(says), "{failure}");
        assert!(!failure.message.contains("sandloom-planted-"), "{failure}");
    }
    // An address is planted as one, the secret as its password at a port nobody answers.
    let url = kit::<URL_IN_ERRORS>().assert_catches("secrets_never_show");
    assert!(
        url.message
            .contains("empty key at vault://sandloom-kit:<secret>@127.0.0.1:1"),
        "{url}"
    );
}

/// Options with nothing `writeOnly`.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
struct PlainOptions {
    name: String,
}

static PLAIN_MADE: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug)]
struct Plain;

impl CacheOps for Plain {
    async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> {
        Ok(None)
    }
    async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
        Ok(())
    }
    async fn delete(&self, _: &str) -> InfraResult<bool> {
        Ok(false)
    }
}

impl Driver for Plain {
    type Options = PlainOptions;
    fn supported_features() -> &'static [&'static str] {
        &[]
    }
    fn from_options(_: PlainOptions) -> Result<Self, DriverError> {
        PLAIN_MADE.fetch_add(1, Ordering::SeqCst);
        Ok(Plain)
    }
}

impl CacheProvider for Plain {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}

#[test]
fn options_without_a_write_only_option_add_no_instance() {
    CacheConformance::<Plain>::new(|_| PlainOptions::default())
        .__described(__describe!(Plain))
        .assert("secrets_never_show");
    assert_eq!(PLAIN_MADE.load(Ordering::SeqCst), 1);
}
