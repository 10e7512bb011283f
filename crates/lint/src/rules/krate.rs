//! What every rule reads of a member: the [`Crate`] (its facts and role), and the names its
//! source may call its dependencies by ([`names_of`]).

use std::collections::HashMap;

use crate::roles::Assigned;
use crate::source::Facts;
use crate::workspace::Member;

/// A member with its facts and role, as the rules see it.
pub(crate) struct Crate<'a> {
    pub(crate) member: &'a Member,
    pub(crate) facts: Facts,
    pub(crate) role: Assigned,
}

/// The extern names of `member`'s dependencies on packages `pick` accepts, with what `pick`
/// said about each, plus the aliases `extern crate name as alias;` gives them.
pub(crate) fn names_of(
    member: &Member,
    facts: &Facts,
    mut pick: impl FnMut(&str) -> Option<String>,
) -> HashMap<String, String> {
    let mut names: HashMap<String, String> = HashMap::new();
    for dep in &member.deps {
        if let Some(what) = pick(&dep.package) {
            names.insert(dep.extern_name.clone(), what);
        }
    }
    for extern_crate in &facts.extern_crates {
        if let (Some(alias), Some(what)) = (&extern_crate.alias, names.get(&extern_crate.name)) {
            names.insert(alias.clone(), what.clone());
        }
    }
    names
}
