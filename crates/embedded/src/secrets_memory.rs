//! `secrets.memory`: secrets held in the process, for tests.
//!
//! Values are put in through a [`MemorySecretStore`] handle (tests), never through `INFRA`: a
//! secret written in a configuration file is what the `secrets` capability exists to avoid.

mod options;
mod provider;

pub use options::MemorySecretsOptions;
pub(crate) use provider::check_max_value_bytes;
pub use provider::{MemorySecretStore, MemorySecrets};
