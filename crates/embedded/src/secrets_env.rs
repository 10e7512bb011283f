//! `secrets.env`: secrets in the process's environment variables, under a required prefix
//! (experimental capability).

mod options;
mod provider;

pub use options::EnvSecretsOptions;
pub use provider::EnvSecrets;
