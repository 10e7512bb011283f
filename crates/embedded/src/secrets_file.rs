//! `secrets.file`: secrets as files in a directory tree, as Kubernetes mounts them.

mod options;
mod provider;
#[cfg(test)]
mod tests;
mod tree;

pub use options::FileSecretsOptions;
pub use provider::FileSecrets;
