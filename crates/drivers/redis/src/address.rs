//! Showing a server address without its secrets.

/// `url` with its user-info replaced by `***` and its query (where a `redis+unix` URL carries
/// `pass=`) by `?***`; the scheme, host, port, database or socket path stay, so an error still
/// says where the driver tried to go.
///
/// Works on the text alone, so a URL that does not parse is redacted too: everything between
/// `://` and the last `@` before the query is user-info, whatever characters it holds.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<url without a scheme, redacted>".to_owned();
    };
    let (location, has_query) = match rest.find(['?', '#']) {
        Some(end) => (&rest[..end], rest[end..].contains('?')),
        None => (rest, false),
    };
    let (credentials, location) = match location.rfind('@') {
        Some(at) => ("***@", &location[at + 1..]),
        None => ("", location),
    };
    let query = if has_query { "?***" } else { "" };
    format!("{scheme}://{credentials}{location}{query}")
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn user_info_and_queries_are_hidden_the_address_is_kept() {
        let cases = [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            (
                "redis://:hunter2@127.0.0.1:6379/0",
                "redis://***@127.0.0.1:6379/0",
            ),
            (
                "rediss://admin:hunter2@cache:6380/2",
                "rediss://***@cache:6380/2",
            ),
            ("redis://admin:p@ss@word@host", "redis://***@host"),
            ("redis://admin@host", "redis://***@host"),
            (
                "redis+unix:///run/redis.sock?pass=hunter2",
                "redis+unix:///run/redis.sock?***",
            ),
            ("rediss://host/#insecure", "rediss://host/"),
            ("no scheme:hunter2@host", "<url without a scheme, redacted>"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact_url(url), shown, "for {url}");
        }
    }
}
