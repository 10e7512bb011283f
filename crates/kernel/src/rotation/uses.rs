//! Which secrets the configuration uses, and where: what the rotation watcher watches.
//!
//! integrator: replace with `references::uses` (helper B's `SecretUse`/`UsedBy`, identical to
//! these, and `secret_uses(&InfraConfig)` feeding `Kernel::start`).

/// One secret of one store, and every option that refers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretUse {
    pub store: String,
    pub secret: String,
    pub used_by: Vec<UsedBy>,
}

/// One option of one instance that refers to a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsedBy {
    pub capability: String,
    pub instance: String,
    pub option: String,
}
