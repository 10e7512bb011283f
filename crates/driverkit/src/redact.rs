//! Showing a server address to people without the secrets it may carry.

/// What [`redact_url`] answers for text it cannot read as a URL.
const NOT_A_URL: &str = "<redacted: not a URL>";
/// What replaces each secret part.
const HIDDEN: &str = "***";

/// `url` as it may be shown in an error, a log line or `Debug` output: the scheme, host, port
/// and (except for HTTP) path stay, so a message still says where a driver tried to go; what
/// can hold a secret does not.
///
/// - **User-info** (`user:password@`, or a lone `token@`) becomes `***@`: a user name alone is
///   often a token (`https://TOKEN@host`), so none of it is kept.
/// - The **query** becomes `?***`, keys included: a secret written unescaped in a value
///   (`?pass=a&b=c`) cannot be told from the next key.
/// - A **fragment** becomes `#***`.
/// - The **path of an `http`/`https` URL** becomes `/***`: webhook and API URLs carry their
///   token there (`/hooks/T0/B0/xyz`). Other schemes keep it (a database, a vhost, a socket).
///
/// Works on the text alone, so a URL its client would refuse is redacted too: user-info runs to
/// the authority's last `@` (a password may hold an unescaped `@` or `:`). An `@` after the first
/// `/`, `?` or `#` is ambiguous (a query character, or a password with an unescaped `/`), so the
/// whole address after `scheme://` is hidden. Text with no `scheme://` at all (a `PostgreSQL` `host=… password=…` string,
/// `user:secret@host`) cannot be told apart from a secret and is replaced whole by
/// `<redacted: not a URL>`: the answer never contains the input's secret.
///
/// ```
/// use sandloom_driverkit::redact_url;
///
/// assert_eq!(redact_url("redis://:hunter2@127.0.0.1:6379/0"), "redis://***@127.0.0.1:6379/0");
/// assert_eq!(redact_url("amqp://guest:guest@rabbit:5672/%2f"), "amqp://***@rabbit:5672/%2f");
/// assert_eq!(redact_url("redis+unix:///run/redis.sock?pass=hunter2"), "redis+unix:///run/redis.sock?***");
/// assert_eq!(redact_url("https://bot:pw@hooks.example.com/T0/xyz"), "https://***@hooks.example.com/***");
/// assert_eq!(redact_url("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
/// assert_eq!(redact_url("host=db password=hunter2"), "<redacted: not a URL>");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return NOT_A_URL.to_owned();
    };
    if !is_scheme(scheme) {
        return NOT_A_URL.to_owned();
    }
    // User-info ends at the authority's last `@`, and the authority at the first `/`, `?` or
    // `#`. An `@` after that is either a query or path character or a password written with an
    // unescaped `/`, `?` or `#`: nothing tells which, so the whole address is hidden rather than
    // guessed (either guess shows part of a secret for the other case).
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if rest[authority_end..].contains('@') {
        return format!("{scheme}://{HIDDEN}");
    }
    let (user_info, after) = match rest[..authority_end].rfind('@') {
        Some(at) => (true, &rest[at + 1..]),
        None => (false, rest),
    };
    let (after, fragment) = match after.split_once('#') {
        Some((before, _)) => (before, true),
        None => (after, false),
    };
    let (after, query) = match after.split_once('?') {
        Some((before, _)) => (before, true),
        None => (after, false),
    };
    let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));

    let mut shown = format!("{scheme}://");
    if user_info {
        shown.push_str(HIDDEN);
        shown.push('@');
    }
    shown.push_str(host);
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    if http && path.len() > 1 {
        shown.push('/');
        shown.push_str(HIDDEN);
    } else {
        shown.push_str(path);
    }
    if query {
        shown.push('?');
        shown.push_str(HIDDEN);
    }
    if fragment {
        shown.push('#');
        shown.push_str(HIDDEN);
    }
    shown
}

/// RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn secrets_are_hidden_and_the_address_is_kept() {
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
            // Unencoded `@`, `:` and `/` in the password.
            ("redis://admin:p@ss@word@host", "redis://***@host"),
            // A `/` in the password cannot be told from the path: all is hidden.
            ("amqp://u:p@ss/w@host/%2f", "amqp://***"),
            ("amqp://u:a:b@host:5672/%2f", "amqp://***@host:5672/%2f"),
            // A lone user name may be a token.
            ("redis://admin@host", "redis://***@host"),
            ("https://ghp_token@github.com", "https://***@github.com"),
            (
                "https://ghp_token:x-oauth-basic@github.com",
                "https://***@github.com",
            ),
            (
                "redis+unix:///run/redis.sock?pass=hunter2",
                "redis+unix:///run/redis.sock?***",
            ),
            (
                "amqp://guest:s3cret@127.0.0.1:5673/%2f?heartbeat=5&frame_max=9",
                "amqp://***@127.0.0.1:5673/%2f?***",
            ),
            (
                "postgres://app@db/jobs?password=hunter2",
                "postgres://***@db/jobs?***",
            ),
            ("postgres://u@a:1,b:2/d", "postgres://***@a:1,b:2/d"),
            ("rediss://host/#insecure", "rediss://host/#***"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/"),
            ("HTTPS://h/hooks/T0/xyz?token=abc", "HTTPS://h/***?***"),
            ("http://[::1]:9/hook", "http://[::1]:9/***"),
            ("https://h?bare-token", "https://h?***"),
            // An `@` after the host: more is hidden, never less (nothing of the query shows).
            ("http://host:8080/p?from=a@b", "http://***"),
            ("redis://a/x?pass=@_a-a", "redis://***"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact_url(url), shown, "for {url}");
        }
    }

    #[test]
    fn what_is_not_a_url_is_hidden_whole() {
        for text in [
            "",
            "host=db user=app password=hunter2",
            "user:hunter2@host",
            "mailto:hunter2@example.com",
            "host=db password=a://b@c",
            "://hunter2@host",
            "1redis://hunter2@host",
        ] {
            assert_eq!(redact_url(text), NOT_A_URL, "for {text:?}");
        }
    }

    proptest! {
        // Whatever the password and wherever the URL puts it, it never comes back. The
        // password is non-trivial (5+ chars of a wide alphabet) so it cannot coincide with
        // the parts that are meant to stay (scheme, host, `***`).
        #[test]
        fn a_password_never_survives(
            password in "[A-Za-z0-9@:/?#%&=._~+-]{5,20}",
            scheme in prop::sample::select(vec!["redis", "amqps", "postgres", "https", "redis+unix"]),
            host in "[a-z]{1,8}(\\.[a-z]{2,3})?(:[0-9]{1,5})?",
            place in 0..4_usize,
        ) {
            prop_assume!(!host.contains(&password) && !scheme.contains(&password));
            let url = match place {
                0 => format!("{scheme}://user:{password}@{host}/db"),
                1 => format!("{scheme}://{password}@{host}"),
                2 => format!("{scheme}://{host}/x?pass={password}"),
                _ => format!("{scheme}:{password}@{host}"),
            };
            let shown = redact_url(&url);
            prop_assert!(!shown.contains(&password), "{url} shown as {shown}");
        }
    }
}
