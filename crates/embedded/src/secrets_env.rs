//! `secrets.env`: secrets in the process's environment variables, under a required prefix.

mod options;
mod provider;

pub use options::EnvSecretsOptions;
pub use provider::EnvSecrets;
