//! Which flaws of a kit's broken-driver test no case tries: the variants of its `Flaw` enum are
//! read from the test's own source, so a flaw added to the enum cannot be forgotten in a second
//! hand-kept list too. Each kit test includes this file with `#[path]`.

/// The variants of `enum Flaw` in `source` (one per line, doc comments allowed between them)
/// that are neither in `tried` (the cases' flaws, as `Debug` shows them) nor in `not_flaws`
/// (the reference's own configurations).
pub(crate) fn untried(source: &str, tried: &[String], not_flaws: &[&str]) -> Vec<String> {
    let body = source
        .split_once("enum Flaw {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .expect("the test defines `enum Flaw { … }`");
    let variants: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//") && !line.starts_with('#'))
        .map(|line| line.trim_end_matches(','))
        .collect();
    assert!(
        variants.len() > not_flaws.len(),
        "no flaws read from the enum: {variants:?}"
    );
    variants
        .into_iter()
        .filter(|name| !not_flaws.contains(name) && !tried.iter().any(|t| t == name))
        .map(str::to_owned)
        .collect()
}
