//! The endpoint URL, parsed once: what requests go to, the Basic-auth credentials taken out of
//! it, and the redacted form errors and logs show.

use std::fmt;

use percent_encoding::percent_decode_str;
use reqwest::Url;

/// A parsed, checked `url` option.
pub(crate) struct Endpoint {
    /// Without user-info, so the URL itself never carries a secret.
    pub(crate) url: Url,
    /// The user-info of the configured URL, percent-decoded, sent as Basic auth.
    pub(crate) credentials: Option<Credentials>,
    /// `scheme://[***@]host:port[/***]`: safe for errors and logs.
    pub(crate) redacted: String,
    /// `host:port` (IPv6 in brackets), for the TCP reachability check.
    pub(crate) authority: String,
}

/// Basic-auth credentials from the URL's user-info.
pub(crate) struct Credentials {
    pub(crate) username: String,
    pub(crate) password: Option<String>,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted)
    }
}

impl Endpoint {
    /// Parse and check `raw`. The message of an error never repeats the URL, which may hold a
    /// password or a token.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(
                "`url` is required: the http:// or https:// address to POST messages to".into(),
            );
        }
        let mut url = Url::parse(raw).map_err(|err| format!("`url` is not a valid URL: {err}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "`url` must start with http:// or https://, not {}://",
                url.scheme()
            ));
        }
        let Some(host) = url.host_str().filter(|host| !host.is_empty()) else {
            return Err("`url` has no host".into());
        };
        if url.fragment().is_some() {
            return Err("`url` must not have a fragment (`#…`): HTTP never sends it".into());
        }
        let Some(port) = url.port_or_known_default() else {
            return Err("`url` has no port and its scheme has no default one".into());
        };
        let authority = format!("{host}:{port}");
        let credentials = take_credentials(&mut url)?;
        let user_info = if credentials.is_some() { "***@" } else { "" };
        // Webhook URLs often carry their token in the path or the query (`/hooks/T0/B0/xyz`,
        // `?token=`), so only the origin is ever shown.
        let rest = if url.path() != "/" || url.query().is_some() {
            "/***"
        } else {
            ""
        };
        let redacted = format!("{}://{user_info}{authority}{rest}", url.scheme());
        Ok(Self {
            url,
            credentials,
            redacted,
            authority,
        })
    }
}

fn take_credentials(url: &mut Url) -> Result<Option<Credentials>, String> {
    if url.username().is_empty() && url.password().is_none() {
        return Ok(None);
    }
    let decode = |part: &str, what: &str| {
        percent_decode_str(part)
            .decode_utf8()
            .map(std::borrow::Cow::into_owned)
            .map_err(|_| format!("the {what} in `url` is not UTF-8 once percent-decoded"))
    };
    let username = decode(url.username(), "user name")?;
    let password = url
        .password()
        .map(|password| decode(password, "password"))
        .transpose()?;
    url.set_username("")
        .and_then(|()| url.set_password(None))
        .map_err(|()| "`url` cannot have its user-info removed".to_owned())?;
    Ok(Some(Credentials { username, password }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_is_taken_out_and_decoded() {
        let endpoint = Endpoint::parse("https://bot:p%40ss@hooks.example.com/in/xyz?k=1").unwrap();
        assert_eq!(
            endpoint.url.as_str(),
            "https://hooks.example.com/in/xyz?k=1"
        );
        let credentials = endpoint.credentials.unwrap();
        assert_eq!(credentials.username, "bot");
        assert_eq!(credentials.password.as_deref(), Some("p@ss"));
        assert_eq!(endpoint.redacted, "https://***@hooks.example.com:443/***");
        assert_eq!(endpoint.authority, "hooks.example.com:443");
    }

    #[test]
    fn the_origin_alone_is_shown() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(endpoint.redacted, "http://127.0.0.1:8080");
        assert!(endpoint.credentials.is_none());
        let v6 = Endpoint::parse("http://[::1]:9/hook").unwrap();
        assert_eq!(v6.redacted, "http://[::1]:9/***");
        assert_eq!(v6.authority, "[::1]:9");
    }

    #[test]
    fn bad_urls_are_refused_without_repeating_them() {
        for (raw, expected) in [
            ("", "required"),
            ("  ", "required"),
            ("not a url hunter2", "not a valid URL"),
            ("ftp://u:hunter2@example.com/", "http:// or https://"),
            ("http://example.com/#hunter2", "fragment"),
            ("mailto:hunter2@example.com", "http:// or https://"),
        ] {
            let err = Endpoint::parse(raw).unwrap_err();
            assert!(err.contains(expected), "{raw:?}: {err}");
            assert!(!err.contains("hunter2"), "{raw:?}: {err}");
        }
    }
}
