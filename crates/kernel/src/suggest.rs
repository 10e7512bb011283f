//! "Did you mean" for names a person typed.

/// The candidate closest to `typed`, when it is close enough to be a likely typo: a couple of
/// edits away (one for short names), or sharing most of a long prefix.
pub(crate) fn closest<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let max_edits = if typed.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .filter(|candidate| *candidate != typed)
        .filter_map(|candidate| {
            let edits = strsim::damerau_levenshtein(typed, candidate);
            let similar = strsim::jaro_winkler(typed, candidate) >= 0.9;
            (edits <= max_edits || similar).then_some((edits, candidate))
        })
        .min_by_key(|&(edits, candidate)| (edits, candidate))
        .map(|(_, candidate)| candidate)
}

/// [`closest`], or else the one candidate that `typed` abbreviates (`prod` for `production`):
/// an abbreviation is many edits from the full name, yet it is the likeliest meaning. Only for
/// closed sets of words, where a unique prefix of three letters or more is not a coincidence.
pub(crate) fn closest_or_expansion<'a>(typed: &str, candidates: &[&'a str]) -> Option<&'a str> {
    closest(typed, candidates.iter().copied()).or_else(|| {
        if typed.chars().count() < 3 {
            return None;
        }
        let mut expansions = candidates.iter().filter(|c| c.starts_with(typed));
        match (expansions.next(), expansions.next()) {
            (Some(only), None) => Some(*only),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_typos_and_ignores_strangers() {
        assert_eq!(super::closest("cach", ["cache", "lock"]), Some("cache"));
        assert_eq!(super::closest("tll", ["ttl", "capacity"]), Some("ttl"));
        assert_eq!(
            super::closest("objectstor", ["objectstore", "notifier"]),
            Some("objectstore")
        );
        assert_eq!(
            super::closest("capcity", ["capacity", "root"]),
            Some("capacity")
        );
        assert_eq!(super::closest("xyz", ["cache", "lock"]), None);
        assert_eq!(super::closest("redis", ["memory"]), None);
    }

    #[test]
    fn expands_a_unique_abbreviation() {
        let names = ["development", "test", "production", "preview"];
        assert_eq!(
            super::closest_or_expansion("prod", &names),
            Some("production")
        );
        assert_eq!(
            super::closest_or_expansion("dev", &names),
            Some("development")
        );
        // Two names start with `pr`, and two letters are too few to guess from.
        assert_eq!(super::closest_or_expansion("pr", &names), None);
        assert_eq!(super::closest_or_expansion("qa", &names), None);
    }
}
