//! Which instances use which secret: what a rotation report names when a secret changes.

use std::collections::BTreeMap;

use super::reason::instance_of;
use crate::config::InfraConfig;

/// One secret of one store, and every option that refers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretUse {
    /// The `secrets` instance (`default`, `vault`), without `secrets.`.
    pub store: String,
    /// The secret's name in it.
    pub secret: String,
    /// The options that refer to it, sorted.
    pub used_by: Vec<UsedBy>,
}

/// An option of an instance that refers to a secret.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct UsedBy {
    pub capability: String,
    pub instance: String,
    pub option: String,
}

/// Every secret `config` refers to, one per (store, secret), sorted by store then secret.
pub(crate) fn secret_uses(config: &InfraConfig) -> Vec<SecretUse> {
    let mut uses: BTreeMap<(String, String), Vec<UsedBy>> = BTreeMap::new();
    for instance in config.instances() {
        for (option, reference) in instance.references() {
            uses.entry((
                instance_of(&reference.store).to_owned(),
                reference.secret.clone(),
            ))
            .or_default()
            .push(UsedBy {
                capability: instance.capability.clone(),
                instance: instance.instance.clone(),
                option: option.to_owned(),
            });
        }
    }
    uses.into_iter()
        .map(|((store, secret), mut used_by)| {
            used_by.sort();
            SecretUse {
                store,
                secret,
                used_by,
            }
        })
        .collect()
}
