//! Looking into token streams syn leaves unparsed: macro bodies and attribute arguments.

use proc_macro2::{Delimiter, Ident, Spacing, TokenStream, TokenTree};

/// A path found in a token stream: its first identifier and its segments.
pub(crate) struct TokenPath {
    pub(crate) root: Ident,
    /// The segments up to the first one not followed by `::` (or followed by `::<`).
    pub(crate) segments: Vec<String>,
    /// Preceded by `::`.
    pub(crate) absolute: bool,
}

/// Paths (`name::…` or `::name::…`) anywhere in `tokens`, nested groups included: what a
/// macro body or an attribute names.
pub(crate) fn path_roots(tokens: TokenStream, out: &mut Vec<TokenPath>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => path_roots(group.stream(), out),
            TokenTree::Ident(ident)
                if is_path_sep(&tokens, i + 1) && !continues_path(&tokens, i) =>
            {
                let mut segments = vec![name(ident)];
                let mut at = i + 1;
                while is_path_sep(&tokens, at)
                    && let Some(TokenTree::Ident(next)) = tokens.get(at + 2)
                {
                    segments.push(name(next));
                    at += 3;
                }
                out.push(TokenPath {
                    root: ident.clone(),
                    segments,
                    absolute: i >= 2 && is_path_sep(&tokens, i - 2),
                });
            }
            _ => {}
        }
    }
}

/// `::` at `at`.
fn is_path_sep(tokens: &[TokenTree], at: usize) -> bool {
    matches!(
        (tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Whether the identifier at `at` is a later segment (`a::b`, `<T>::b`) rather than a root.
fn continues_path(tokens: &[TokenTree], at: usize) -> bool {
    if at < 2 || !is_path_sep(tokens, at - 2) {
        return false;
    }
    match at.checked_sub(3).and_then(|i| tokens.get(i)) {
        Some(TokenTree::Ident(_)) => true,
        Some(TokenTree::Punct(p)) => p.as_char() == '>',
        Some(TokenTree::Group(g)) => g.delimiter() == Delimiter::None,
        _ => false,
    }
}

/// Identifiers at the top level of an attribute's argument list: `deny_unknown_fields` and
/// `default` in `serde(deny_unknown_fields, default)`, not the ones inside nested groups or
/// string literals.
pub(crate) fn top_level_idents(tokens: TokenStream) -> Vec<String> {
    tokens
        .into_iter()
        .filter_map(|t| match t {
            TokenTree::Ident(ident) => Some(ident.to_string()),
            _ => None,
        })
        .collect()
}

/// An identifier as a name, without the raw prefix.
pub(crate) fn name(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#")
        .map_or_else(|| text.clone(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        path_roots(text.parse().unwrap(), &mut out);
        out.iter().map(|p| name(&p.root)).collect()
    }

    fn paths(text: &str) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        path_roots(text.parse().unwrap(), &mut out);
        out.iter()
            .map(|p| (p.absolute, p.segments.join("::")))
            .collect()
    }

    #[test]
    fn finds_roots_not_later_segments() {
        assert_eq!(roots("a::b::c"), ["a"]);
        assert_eq!(roots("::a::b"), ["a"]);
        assert_eq!(roots("x, (y::z, <T>::w)"), ["y"]);
        assert_eq!(roots("f(dk::X, 1) + r#dk::Y"), ["dk", "dk"]);
        assert!(roots("a: b").is_empty());
    }

    #[test]
    fn whole_paths_with_their_segments() {
        assert_eq!(
            paths("a::b::C.len() + ::kit::__private::X + v::<T>::new(), m::mac!(x)"),
            [
                (false, "a::b::C".to_owned()),
                (true, "kit::__private::X".to_owned()),
                (false, "v".to_owned()),
                (false, "m::mac".to_owned()),
            ]
        );
    }

    #[test]
    fn top_level_only() {
        let idents = top_level_idents(
            "deny_unknown_fields, rename(x = \"y\"), default"
                .parse()
                .unwrap(),
        );
        assert_eq!(idents, ["deny_unknown_fields", "rename", "default"]);
    }
}
